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

#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include <sluice/ops/expr.h>
#include <sluice/ops/function.h>

namespace sluice::grad_rules {

// The cotangent of each operand of `node` (an empty Expr: it gets none),
// given `ct`, the cotangent of node's result (of node's spec). A cotangent
// has its operand's spec.
using RuleFunction = std::vector<Expr>(const NodePtr& node, const Expr& ct);
using Rule = RuleFunction*;
// The same for a node with several results (kMultiResult: ops/detail/results.h),
// given one cotangent per result (an empty Expr: that result has none).
using ResultsRuleFunction = std::vector<Expr>(const NodePtr& node, const std::vector<Expr>& result_cts);
using ResultsRule = ResultsRuleFunction*;
// The kind of rule an entry with properties `Props` names.
template <uint32_t Props>
using RuleOf = std::conditional_t<(Props & kMultiResult) != 0, ResultsRuleFunction, RuleFunction>;

#define SLUICE_OP(e, name, arity, family, rule, props, grad) RuleOf<(props)> grad_##grad;
#include <sluice/ops/op_list.def>

// The rule of `op`'s catalogue entry; grad_none for ops without a gradient.
// rule_of is null for ops with several results, results_rule_of for the rest.
Rule rule_of(Op op);
ResultsRule results_rule_of(Op op);

// The pullback of f (a loop's body, a block's fallback): a Function of f's
// inputs, then one cotangent for each of f's outputs listed in `outputs`,
// giving the cotangents of the inputs listed in `wrt`, in that order: the
// gradient of the sum over those outputs of sum(output * its cotangent).
Function pullback_of(const Function& f, const std::vector<size_t>& outputs, const std::vector<int>& wrt);

// Elements grouped into products (a reduction's axes, windows, running
// prefixes): given for an x-shaped value its sum and its product over each
// group (group-shaped, as ct), and `spread`, the transpose of the sum (each
// element's total over the groups holding it), the cotangent of x of the
// groups' products: from each group, the group's cotangent times the
// product of its other elements, exact where x holds zeros (as JAX).
using GroupMap = std::function<Expr(const Expr&)>;
Expr grad_of_products(const Expr& x, const Expr& ct, const GroupMap& sum_groups,
                      const GroupMap& product_groups, const GroupMap& spread);

}  // namespace sluice::grad_rules
