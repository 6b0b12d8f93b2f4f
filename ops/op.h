#pragma once
// Op: the enum generated from op_list.def, with names, arities and families.

#include <cstdint>
#include <string_view>

namespace sluice {

enum class Op : uint8_t {
#define SLUICE_OP(e, name, arity, family) e,
#include "ops/op_list.def"
#undef SLUICE_OP
};

inline constexpr int kOpCount = 0
#define SLUICE_OP(e, name, arity, family) +1
#include "ops/op_list.def"
#undef SLUICE_OP
    ;

enum class OpFamily : uint8_t { Leaf, Unary, Binary, Ternary, Convert, Shape, Reduce, Dot, Window, Scan, Fft, Loop };

std::string_view op_name(Op op);  // Nx's name: "add", "window_sum"
int op_arity(Op op);              // -1 for variadic
OpFamily op_family(Op op);

// Elementwise ops compute each output element from the same-index elements
// of their operands: the ops a fused region is made of.
inline bool is_elementwise(Op op) {
  OpFamily f = op_family(op);
  return f == OpFamily::Unary || f == OpFamily::Binary || f == OpFamily::Ternary ||
         f == OpFamily::Convert;
}
// Comparisons and logical ops: results are pred whatever the operands.
bool is_comparison(Op op);
bool is_logical(Op op);
// a op b == b op a: CSE may order the operands.
bool is_commutative(Op op);

}  // namespace sluice
