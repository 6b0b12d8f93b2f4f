#pragma once
// What the builders of ops.h share: argument checks, weak scalars, and the
// conversions and broadcasts that make graphs explicit (every elementwise
// node's operands have its compute dtype and its result shape). Private to
// ops/.

#include <string_view>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::detail {

// Throws Error naming op and arg for a default-constructed Expr.
void require(const Expr& e, std::string_view op, std::string_view arg);

// Made from a plain C++ number (or from arithmetic on such numbers only).
bool is_weak(const Expr& e);

// The dtype operands meet in: strong ones promote (Nx.Type.merge); weak ones
// then take the strong type (infer::merge_weak); all weak: promote among them.
DType merge_types(const std::vector<Expr>& xs);

// e as `dtype`: weak constants are re-made as strong constants of dtype,
// other values of another dtype go through an as_type node.
Expr convert(const Expr& e, DType dtype);
// e broadcast to `shape`, aligned from the right (shape is already checked).
Expr broadcast_to(const Expr& e, const Shape& shape);
// An elementwise operand: converted, then broadcast.
Expr to_operand(const Expr& e, DType dtype, const Shape& shape);
// What an op that is not elementwise reads: a weak scalar takes the type Nx
// gives a plain number (f64 -> f32, s64 stays); strong values unchanged.
Expr strengthen(const Expr& e);

Expr make(Op op, Spec spec, const std::vector<Expr>& operands, Attrs attrs = {});
// Result `index` (of `spec`) of a node with several results (ops/detail/results.h).
Expr result_of(const NodePtr& node, int64_t index, const Spec& spec);
// A node of an op with several results and a `result` node reading each of
// them, of `specs` in order.
Tuple make_results(Op op, const std::vector<Spec>& specs, const std::vector<Expr>& operands, Attrs attrs);

// take_along_axis's coordinates: for integer `indices` of x's rank (and x's
// dims but on `axis`), the s64 index tuples [..., rank] that gather and the
// scatters read, indices on `axis` and each element's own position on the
// other axes.
Expr along_axis_coordinates(const Expr& indices, const Shape& x, int64_t axis);

}  // namespace sluice::detail
