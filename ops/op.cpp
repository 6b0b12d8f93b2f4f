#include "ops/op.h"

#include <algorithm>
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

constexpr Op kComparisons[] = {Op::Equal,     Op::NotEqual, Op::Less,
                               Op::LessEqual, Op::Greater,  Op::GreaterEqual};
constexpr Op kLogical[] = {Op::LogicalAnd, Op::LogicalOr, Op::LogicalXor};
constexpr Op kCommutative[] = {Op::Add,        Op::Multiply,   Op::Min,        Op::Max,
                               Op::BitwiseAnd, Op::BitwiseOr,  Op::BitwiseXor, Op::Equal,
                               Op::NotEqual,   Op::LogicalAnd, Op::LogicalOr,  Op::LogicalXor};

}  // namespace

std::string_view op_name(Op op) { return kNames[static_cast<size_t>(op)]; }
int op_arity(Op op) { return kArities[static_cast<size_t>(op)]; }
OpFamily op_family(Op op) { return kFamilies[static_cast<size_t>(op)]; }

bool is_comparison(Op op) { return std::ranges::count(kComparisons, op) != 0; }
bool is_logical(Op op) { return std::ranges::count(kLogical, op) != 0; }
bool is_commutative(Op op) { return std::ranges::count(kCommutative, op) != 0; }

}  // namespace sluice
