#include <sluice/ops/op.h>

#include <array>

namespace sluice {
namespace {

constexpr std::array<std::string_view, kOpCount> kNames{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) #name,
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

constexpr std::array<int, kOpCount> kArities{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) arity,
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

constexpr std::array<OpFamily, kOpCount> kFamilies{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) OpFamily::family,
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

constexpr std::array<OpTypeRule, kOpCount> kTypeRules{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) OpTypeRule::rule,
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

constexpr std::array<uint32_t, kOpCount> kProperties{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) static_cast<uint32_t>(props),
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

constexpr std::array<bool, kOpCount> kDifferentiable{
#define SLUICE_OP(e, name, arity, family, rule, props, grad) std::string_view(#grad) != "none",
#include <sluice/ops/op_list.def>
#undef SLUICE_OP
};

size_t index(Op op) { return static_cast<size_t>(op); }

}  // namespace

std::string_view op_name(Op op) { return kNames[index(op)]; }
int op_arity(Op op) { return kArities[index(op)]; }
OpFamily op_family(Op op) { return kFamilies[index(op)]; }
OpTypeRule op_type_rule(Op op) { return kTypeRules[index(op)]; }
bool op_has(Op op, OpProperty property) { return (kProperties[index(op)] & property) != 0; }
bool is_differentiable(Op op) { return kDifferentiable[index(op)]; }

DType op_result_dtype(Op op, DType operand) {
  switch (op_type_rule(op)) {
    case OpTypeRule::ToPred: return DType::Pred;
    case OpTypeRule::ToReal: return to_real(operand);
    // A conjugate kernel also takes a real and returns its complex type.
    case OpTypeRule::ComplexOnly: return to_complex(operand);
    default: return operand;
  }
}

}  // namespace sluice
