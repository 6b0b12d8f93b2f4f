// Reverse-mode rules of gathers, scatters and sorts: a gather's cotangent is
// scattered back (indexed_add: duplicates sum), a scatter's is gathered, a
// sort's goes back through the inverse of its permutation.
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }
Expr zeros(const Spec& spec) { return broadcast(constant(0.0, spec.dtype), spec.shape); }

}  // namespace

std::vector<Expr> grad_gather(const NodePtr& n, const Expr& ct) {
  return {indexed_add(zeros(n->operands[0]->spec), operand(n, 1), ct)};
}

std::vector<Expr> grad_indexed_add(const NodePtr& n, const Expr& ct) {
  return {ct, Expr(), gather(ct, operand(n, 1))};
}

// x's places that the put overwrote get no gradient; of updates written to
// one place, only the last (the one the put kept) gets that place's.
std::vector<Expr> grad_indexed_put(const NodePtr& n, const Expr& ct) {
  const Expr indices = operand(n, 1);
  const Spec& updates = n->operands[2]->spec;
  const int64_t rows = indices.rank() - 1;
  const Shape row_shape(std::vector<int64_t>(indices.shape().dims().begin(), indices.shape().dims().end() - 1));
  Axes row_axes(static_cast<size_t>(rows));
  for (int64_t k = 0; k < rows; ++k) row_axes[static_cast<size_t>(k)] = k;
  const Expr id = broadcast(iota(Spec{DType::S64, row_shape}), updates.shape, row_axes);
  const Expr writer = indexed_put(broadcast(constant(-1.0, DType::S64), n->spec.shape), indices, id);
  const Expr kept = equal(gather(writer, indices), id);
  return {indexed_put(ct, indices, zeros(updates)), Expr(), select(kept, gather(ct, indices), zeros(updates))};
}

std::vector<Expr> grad_sort(const NodePtr& n, const Expr& ct) {
  const SortOptions o{.axis = n->attrs.axis,
                      .direction = n->attrs.reverse ? SortDirection::Descending : SortDirection::Ascending};
  const Expr order = argsort(operand(n), o);
  const Expr inverse = argsort(order, {.axis = n->attrs.axis});
  return {take_along_axis(ct, inverse, n->attrs.axis)};
}

}  // namespace sluice::grad_rules
