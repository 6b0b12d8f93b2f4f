// Reverse-mode rules of reductions and dot.
#include <algorithm>

#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }

// A reduction-shaped value back in x's shape, each element repeated over
// the reduced axes.
Expr expand(const NodePtr& n, const Expr& r) {
  const Shape& x = n->operands[0]->spec.shape;
  if (n->attrs.keep_axes) return broadcast(r, x);
  Axes kept;
  for (int64_t k = 0; k < x.rank(); ++k)
    if (std::find(n->attrs.axes.begin(), n->attrs.axes.end(), k) == n->attrs.axes.end()) kept.push_back(k);
  return broadcast(r, x, kept);
}

// e's axis j is axis from[j] of the wanted value: transposed into order.
Expr reorder(const Expr& e, const std::vector<int64_t>& from) {
  Axes perm(from.size());
  for (size_t j = 0; j < from.size(); ++j) perm[static_cast<size_t>(from[j])] = static_cast<int64_t>(j);
  return transpose(e, perm);
}

std::vector<int64_t> free_axes(int rank, const std::vector<int64_t>& contract,
                               const std::vector<int64_t>& batch) {
  std::vector<int64_t> free;
  for (int64_t k = 0; k < rank; ++k) {
    if (std::find(contract.begin(), contract.end(), k) == contract.end() &&
        std::find(batch.begin(), batch.end(), k) == batch.end())
      free.push_back(k);
  }
  return free;
}

bool in_order(const std::vector<int64_t>& axes) {
  for (size_t j = 0; j < axes.size(); ++j)
    if (axes[j] != static_cast<int64_t>(j)) return false;
  return true;
}

// One operand's side of dot's transpose: the cotangent (axes: batch, a's
// free, b's free) contracted with `other` over other's free axes (from
// ct_free_at in ct). dot(ct, other) has the axes batch, my free axes, then
// my contracting axes ordered as their partners lie in `other`;
// dot(other, ct) has batch, those contracting axes, then my free axes.
// Whichever is already in my order is taken (x^T ct for a matmul's
// weights, as a hand-written backward pass computes it); otherwise a
// transpose puts the first in order.
Expr dot_side(const Expr& ct, int64_t ct_free_at, const std::vector<int64_t>& my_contract,
              const std::vector<int64_t>& my_batch, const std::vector<int64_t>& my_free, const Expr& other,
              const std::vector<int64_t>& other_contract, const std::vector<int64_t>& other_batch,
              const std::vector<int64_t>& other_free) {
  Axes ct_contract, ct_batch;
  for (size_t k = 0; k < other_free.size(); ++k) ct_contract.push_back(ct_free_at + static_cast<int64_t>(k));
  for (size_t k = 0; k < my_batch.size(); ++k) ct_batch.push_back(static_cast<int64_t>(k));
  std::vector<int64_t> partners;  // my contracting axes, in the order of their partners in `other`
  for (int64_t k = 0; k < other.rank(); ++k) {
    auto it = std::find(other_contract.begin(), other_contract.end(), k);
    if (it != other_contract.end()) partners.push_back(my_contract[static_cast<size_t>(it - other_contract.begin())]);
  }
  std::vector<int64_t> ct_first = my_batch, other_first = my_batch;
  ct_first.insert(ct_first.end(), my_free.begin(), my_free.end());
  ct_first.insert(ct_first.end(), partners.begin(), partners.end());
  other_first.insert(other_first.end(), partners.begin(), partners.end());
  other_first.insert(other_first.end(), my_free.begin(), my_free.end());
  if (!in_order(ct_first) && in_order(other_first))
    return dot(other, other_free, other_batch, ct, ct_contract, ct_batch);
  return reorder(dot(ct, ct_contract, ct_batch, other, other_free, other_batch), ct_first);
}

}  // namespace

std::vector<Expr> grad_sum(const NodePtr& n, const Expr& ct) { return {expand(n, ct)}; }

// Each element's slope is the product of the others. y / x is that only
// without zeros: with one zero, its element's slope is the product of the
// nonzero elements and the others' 0; with two or more, every slope is 0.
Expr grad_of_products(const Expr& x, const Expr& ct, const GroupMap& sum_groups,
                      const GroupMap& product_groups, const GroupMap& spread) {
  // Over a group without zeros, the others' product is the group's over x;
  // with one zero, the zero's slope is the product of the rest and the
  // others' is 0; with more, every slope is 0.
  const Expr is_zero = x == 0.0;
  const Expr nonzero = select(is_zero, constant(1.0, x.dtype()), x);
  const Expr zeros = sum_groups(as_type(is_zero, x.dtype()));
  const Expr weighted = ct * product_groups(nonzero);
  const Expr zero = constant(0.0, x.dtype());
  return select(is_zero, spread(select(zeros == 1.0, weighted, zero)),
                spread(select(zeros == 0.0, weighted, zero)) / nonzero);
}

std::vector<Expr> grad_product(const NodePtr& n, const Expr& ct) {
  const ReduceOptions o{.axes = n->attrs.axes, .keep_axes = n->attrs.keep_axes};
  return {grad_of_products(
      operand(n), ct, [&](const Expr& e) { return sum(e, o); }, [&](const Expr& e) { return product(e, o); },
      [&](const Expr& g) { return expand(n, g); })};
}

// The cotangent is shared equally by the elements equal to the extremum
// (JAX's _reduce_chooser_jvp_rule).
std::vector<Expr> grad_reduce_extremum(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  Expr at = as_type(x == expand(n, Expr(n)), x.dtype());
  Expr count = sum(at, {.axes = n->attrs.axes, .keep_axes = n->attrs.keep_axes});
  return {at * expand(n, ct / count)};
}

std::vector<Expr> grad_dot(const NodePtr& n, const Expr& ct) {
  const Attrs& a = n->attrs;
  Expr x = operand(n, 0), y = operand(n, 1);
  const std::vector<int64_t> free_x = free_axes(x.rank(), a.contract_a, a.batch_a);
  const std::vector<int64_t> free_y = free_axes(y.rank(), a.contract_b, a.batch_b);
  const auto batch = static_cast<int64_t>(a.batch_a.size());
  // ct's axes: batch, x's free axes (from `batch`), y's free axes.
  return {dot_side(ct, batch + static_cast<int64_t>(free_x.size()), a.contract_a, a.batch_a, free_x, y,
                   a.contract_b, a.batch_b, free_y),
          dot_side(ct, batch, a.contract_b, a.batch_b, free_y, x, a.contract_a, a.batch_a, free_x)};
}

}  // namespace sluice::grad_rules
