#pragma once
// Op: the enum generated from op_list.def, with names, arities, families,
// type rules and properties. Everything here is read from the catalogue.

#include <cstdint>
#include <string_view>

#include <sluice/ops/dtype.h>

namespace sluice {

enum class Op : uint8_t {
#define SLUICE_OP(e, name, arity, family, rule, props, grad) e,
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

inline constexpr int kOpCount = 0
#define SLUICE_OP(e, name, arity, family, rule, props, grad) +1
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
    ;

enum class OpFamily : uint8_t {
  Leaf,
  Unary,
  Binary,
  Ternary,
  Convert,
  Shape,
  Reduce,
  Dot,
  Window,
  Scan,
  Fft,
  Loop,
  Index,
  Sort,
  Conv,
  LinAlg,
  Block,
  Result
};

// How an elementwise op types its operands and its result. "Merged" is the
// dtype the operands promote to (Nx.Type.merge); pred operands of arithmetic
// compute in u8 (as Nx, which stores booleans as u8).
enum class OpTypeRule : uint8_t {
  Arithmetic,   // computes and returns the merged dtype (pred: u8)
  Floating,     // as Arithmetic, integers computing in f32 (Nx.Type.to_floating)
  ToPred,       // computes in the merged dtype, returns pred
  ToReal,       // as Arithmetic, returning the real type of a complex (abs, real, imag)
  ComplexOnly,  // complex operands only, returned as they are (conjugate)
  Bitwise,      // integer or pred operands, pred staying pred
  IntegerOnly,  // integer or pred operands, computing as Arithmetic
  Same,         // the merged dtype, pred included (select)
  Other,        // not elementwise: the op's inference function types it
};

// Properties of an op, as bits of its catalogue entry.
enum OpProperty : uint32_t {
  kCommutative = 1u << 0,  // a op b == b op a: CSE may order the operands
  kRealOnly = 1u << 1,     // no complex operands: ordering, rounding, special functions
  kExact = 1u << 2,        // result exact in the operands' precision (no f16/bf16 rounding)
  kComparison = 1u << 3,   // ==, !=, <, <=, >, >=
  kLogical = 1u << 4,      // logical and/or/xor
  // Several results (loops, qr, lu, eigh): the node holds no value of its
  // own, each result is read through a `result` node (ops/detail/results.h).
  kMultiResult = 1u << 5,
};

std::string_view op_name(Op op);  // Nx's name: "add", "window_sum"
int op_arity(Op op);              // -1 for variadic
OpFamily op_family(Op op);
OpTypeRule op_type_rule(Op op);
bool op_has(Op op, OpProperty property);

// Elementwise ops compute each output element from the same-index elements
// of their operands: the ops a fused region is made of.
inline bool is_elementwise(Op op) {
  OpFamily f = op_family(op);
  return f == OpFamily::Unary || f == OpFamily::Binary || f == OpFamily::Ternary ||
         f == OpFamily::Convert;
}
// Comparisons and logical ops: results are pred whatever the operands.
inline bool is_comparison(Op op) { return op_has(op, kComparison); }
inline bool is_logical(Op op) { return op_has(op, kLogical); }
inline bool is_commutative(Op op) { return op_has(op, kCommutative); }
inline bool has_several_results(Op op) { return op_has(op, kMultiResult); }
// Has a gradient rule (its entry's grad is not `none`); other ops pass no
// gradient to their operands.
bool is_differentiable(Op op);

// The result dtype of a unary, binary or ternary op whose operands (the
// second, select's first value operand) have dtype `operand`, which already
// is the op's compute dtype: backends ask this rather than derive it again.
DType op_result_dtype(Op op, DType operand);

}  // namespace sluice
