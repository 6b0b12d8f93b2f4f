#pragma once
// Node and Expr: the graph a traced function is made of. A Node is immutable
// once made and shared by every Expr and Node that uses it, so a graph is a
// DAG of shared_ptr<const Node>. Each Node carries its structural hash,
// computed when it is made from its op, spec, attributes and operands'
// hashes: equal hashes are the first test of CSE and of the compile cache.

#include <cstdint>
#include <memory>
#include <vector>

#include <sluice/ops/literal.h>
#include <sluice/ops/op.h>
#include <sluice/ops/shape.h>

namespace sluice {

// Per-axis padding: `low` before, `high` after (negative trims), `interior`
// between elements.
struct PadDim {
  int64_t low = 0, high = 0, interior = 0;
  bool operator==(const PadDim&) const = default;
};

enum class TieBreak : uint8_t { Low, High };

// ---- linear algebra options (ops.h documents them: triangular_solve, qr)
// op(a) in triangular_solve: a, its transpose, or its conjugate transpose.
enum class TriangularTransform : uint8_t { None, Transpose, ConjugateTranspose };
// qr's q and r: reduced (q [m][k], r [k][n], k = min(m, n)) or complete (q [m][m], r [m][n]).
enum class QrMode : uint8_t { Reduced, Complete };
struct LinAlgAttrs {
  bool left_side = true;  // triangular_solve: op(a) x = b (false: x op(a) = b)
  bool lower = true;      // triangular_solve: a's lower triangle is read (false: its upper)
  TriangularTransform transform = TriangularTransform::None;
  QrMode mode = QrMode::Reduced;
  bool operator==(const LinAlgAttrs&) const = default;
};

// A loop node's bodies and operand layout (ops/detail/loop_attrs.h).
struct LoopAttrs;
// A block node's name and fallback (ops/detail/block_attrs.h).
struct BlockAttrs;

// The static parameters of an op. One struct for all ops keeps hashing and
// equality one mechanism; each op documents which fields it reads (expr.cpp
// hashes and compares every field, unused ones hold their defaults).
struct Attrs {
  std::vector<int64_t> axes;     // reduce/reverse/squeeze axes, transpose permutation,
                                 // broadcast: output axis of each operand axis
  std::vector<int64_t> dims;     // window dims
  std::vector<int64_t> starts;   // slice/put_slice static start indices
  std::vector<int64_t> lengths;  // slice lengths
  std::vector<int64_t> strides;  // slice, window and conv strides
  std::vector<PadDim> padding;   // pad config; window padding (interior unused); conv padding
                                 // (interior: input dilation - 1, zeros between input elements)
  std::vector<int64_t> dilations;  // conv kernel dilation
  std::vector<int64_t> contract_a, batch_a, contract_b, batch_b;  // dot
  int64_t axis = -1;             // iota, concatenate, cumulative_sum, argmax/argmin (-1: all)
  int64_t index = 0;             // parameter position; fft length
  DType dtype = DType::F32;      // as_type / bitcast / iota / eye target (also in spec)
  bool keep_axes = false;        // reductions
  bool reverse = false;          // cumulative_sum
  bool weak = false;             // constant made from a plain C++ number
  TieBreak tie_break = TieBreak::Low;  // argmax/argmin
  int64_t feature_groups = 1, batch_groups = 1;  // conv
  LinAlgAttrs linalg;                  // triangular_solve, qr
  std::shared_ptr<const Literal> literal;  // constant
  std::shared_ptr<const LoopAttrs> loop;   // while_loop, scan: compared and hashed by value
  std::shared_ptr<const BlockAttrs> block;  // block: compared and hashed by value

  bool operator==(const Attrs& o) const;
  uint64_t hash() const;
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  Op op;
  Spec spec;
  std::vector<NodePtr> operands;
  Attrs attrs;
  uint64_t hash = 0;  // structural: op, spec, attrs, operand hashes

  // The only way nodes are made: computes the hash.
  static NodePtr make(Op op, Spec spec, std::vector<NodePtr> operands, Attrs attrs = {});
  // Frees sole-owned operands from a worklist: the default recursive
  // release would overflow the stack on a chain of a few 100k nodes.
  ~Node();
};

// Structural equality of two subgraphs (same ops, specs, attrs, operands).
bool structurally_equal(const Node& a, const Node& b);
// Pairwise over two lists (a Function's outputs), sharing one memo so that
// subgraphs common to several outputs are compared once.
bool structurally_equal(const std::vector<NodePtr>& a, const std::vector<NodePtr>& b);

// A symbolic tensor inside a function being traced. Cheap to copy.
// Thread safety: Exprs are immutable values; tracing one function is
// single-threaded, different functions may be traced on different threads.
class Expr {
 public:
  Expr() = default;
  explicit Expr(NodePtr node) : node_(std::move(node)) {}

  const Spec& spec() const { return node_->spec; }
  DType dtype() const { return node_->spec.dtype; }
  const Shape& shape() const { return node_->spec.shape; }
  int rank() const { return node_->spec.shape.rank(); }
  const NodePtr& node() const { return node_; }
  explicit operator bool() const { return node_ != nullptr; }

 private:
  NodePtr node_;
};

// Several outputs of a traced function (or several inputs of a stream).
using Tuple = std::vector<Expr>;
template <typename... E>
Tuple tuple(E... e) { return Tuple{Expr(e)...}; }

}  // namespace sluice
