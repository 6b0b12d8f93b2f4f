// The table from op to reverse-mode rule, read from the catalogue.
#include "ops/grad_rules.h"

#include <array>

namespace sluice::grad_rules {
namespace {

constexpr std::array<Rule, kOpCount> kRules{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) &grad_##grad,
#include "ops/op_list.def"
};

}  // namespace

Rule rule_of(Op op) { return kRules[static_cast<size_t>(op)]; }

}  // namespace sluice::grad_rules
