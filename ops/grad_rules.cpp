// The table from op to reverse-mode rule, read from the catalogue.
#include <sluice/ops/detail/grad_rules.h>

#include <array>

namespace sluice::grad_rules {
namespace {

// Each entry's rule goes to the table of its kind; the other table holds
// null there. (`&grad_none` names the overload of the entry's kind.)
template <typename Kind, uint32_t Props>
constexpr Kind* rule_if(RuleOf<Props>* rule) {
  if constexpr (std::is_same_v<RuleOf<Props>, Kind>)
    return rule;
  else
    return nullptr;
}

constexpr std::array<Rule, kOpCount> kRules{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) rule_if<RuleFunction, (props)>(&grad_##grad),
#include <sluice/ops/op_list.def>
};
constexpr std::array<ResultsRule, kOpCount> kResultsRules{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) rule_if<ResultsRuleFunction, (props)>(&grad_##grad),
#include <sluice/ops/op_list.def>
};

}  // namespace

Rule rule_of(Op op) { return kRules[static_cast<size_t>(op)]; }
ResultsRule results_rule_of(Op op) { return kResultsRules[static_cast<size_t>(op)]; }

}  // namespace sluice::grad_rules
