#pragma once
// Reverse-mode rules: for each differentiable op, the cotangents of its
// operands given the cotangent of its result (JAX's transpose rules). The
// catalogue names each op's rule (op_list.def's grad column); this header
// declares one grad_<rule> per name there, grad_rules_*.cpp define them, and
// a rule named but not defined fails the link. Private to ops/.
//
// Complex numbers follow JAX: linear maps are transposed without
// conjugation, so a holomorphic op's rule is ct * f'(z), and the gradient of
// a real loss L(z) is dL/dx - i dL/dy.

#include <functional>
#include <vector>

#include "ops/expr.h"

namespace sluice::grad_rules {

// The cotangent of each operand of `node` (an empty Expr: it gets none),
// given `ct`, the cotangent of node's result (of node's spec). A cotangent
// has its operand's spec.
using Rule = std::vector<Expr> (*)(const NodePtr& node, const Expr& ct);

#define SLUICE_OP(e, name, arity, family, rule, props, grad) \
  std::vector<Expr> grad_##grad(const NodePtr& node, const Expr& ct);
#include "ops/op_list.def"

// The rule of `op`'s catalogue entry; grad_none for ops without a gradient.
Rule rule_of(Op op);

// Elements grouped into products (a reduction's axes, windows, running
// prefixes): given for an x-shaped value its sum and its product over each
// group (group-shaped, as ct), and `spread`, the transpose of the sum (each
// element's total over the groups holding it), the cotangent of x of the
// groups' products: from each group, the group's cotangent times the
// product of its other elements, exact where x holds zeros (as JAX).
using GroupMap = std::function<Expr(const Expr&)>;
Expr grad_of_products(const Expr& x, const Expr& ct, const GroupMap& sum_groups,
                      const GroupMap& product_groups, const GroupMap& spread);

// A loop node's rule (grad_rules_loop.cpp): the cotangent of each of its
// operands given `result_cts`, one per loop result (an empty Expr: none).
// Through a scan it runs the body's pullback over the steps in reverse;
// through a while_loop it throws TypeError naming the loop.
std::vector<Expr> grad_loop(const NodePtr& loop, const std::vector<Expr>& result_cts);

}  // namespace sluice::grad_rules
