#include "ops/op.h"

#include <array>

namespace sluice {
namespace {

constexpr std::array<std::string_view, kOpCount> kNames{
#define SLUICE_OP(e, name, arity, family) name,
#include "ops/op_list.def"
#undef SLUICE_OP
};

constexpr std::array<int, kOpCount> kArities{
#define SLUICE_OP(e, name, arity, family) arity,
#include "ops/op_list.def"
#undef SLUICE_OP
};

constexpr std::array<OpFamily, kOpCount> kFamilies{
#define SLUICE_OP(e, name, arity, family) OpFamily::family,
#include "ops/op_list.def"
#undef SLUICE_OP
};

}  // namespace

std::string_view op_name(Op op) { return kNames[static_cast<size_t>(op)]; }
int op_arity(Op op) { return kArities[static_cast<size_t>(op)]; }
OpFamily op_family(Op op) { return kFamilies[static_cast<size_t>(op)]; }

bool is_comparison(Op op) {
  switch (op) {
    case Op::Equal: case Op::NotEqual: case Op::Less: case Op::LessEqual: case Op::Greater:
    case Op::GreaterEqual:
      return true;
    default:
      return false;
  }
}

bool is_logical(Op op) { return op == Op::LogicalAnd || op == Op::LogicalOr || op == Op::LogicalXor; }

bool is_commutative(Op op) {
  switch (op) {
    case Op::Add: case Op::Multiply: case Op::Min: case Op::Max: case Op::BitwiseAnd:
    case Op::BitwiseOr: case Op::BitwiseXor: case Op::Equal: case Op::NotEqual:
    case Op::LogicalAnd: case Op::LogicalOr: case Op::LogicalXor:
      return true;
    default:
      return false;
  }
}

}  // namespace sluice
