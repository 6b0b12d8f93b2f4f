// Shapes, types and argument errors of the indexing and sorting builders.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(Indexing, Shapes) {
  const Expr x = arg(f32({4, 5, 6}));
  EXPECT_EQ(gather(x, arg(s64({3, 2}))).spec(), f32({3, 6})) << "pairs index the two leading axes";
  EXPECT_EQ(gather(x, arg(u8({2, 7, 3}))).spec(), f32({2, 7}));
  EXPECT_EQ(take(x, arg(s32({2, 3})), 1).spec(), f32({4, 2, 3, 6})) << "indices' axes replace axis 1";
  EXPECT_EQ(take(x, arg(s32({})), -1).spec(), f32({4, 5})) << "a scalar index drops the axis";
  EXPECT_EQ(take_along_axis(x, arg(s16({4, 2, 6})), 1).spec(), f32({4, 2, 6}));
  EXPECT_EQ(indexed_add(x, arg(s64({9, 1})), arg(f32({9, 5, 6}))).spec(), f32({4, 5, 6}));
  EXPECT_EQ(indexed_put(arg(pred({3})), arg(s64({2, 1})), arg(pred({2}))).dtype(), DType::Pred);
  EXPECT_EQ(indexed_add(arg(pred({3})), arg(s64({2, 1})), arg(pred({2}))).dtype(), DType::U8)
      << "pred adds count in u8";
  EXPECT_EQ(indexed_add(arg(s32({3})), arg(s64({2, 1})), arg(f32({2}))).dtype(), DType::F32);
}

TEST(Indexing, Errors) {
  const Expr x = arg(f32({4, 5}));
  EXPECT_THROW_WITH(gather(x, arg(f32({2, 1}))), TypeError, "gather", "indices", "integer", "f32");
  EXPECT_THROW_WITH(gather(x, arg(s32({2, 3}))), ShapeError, "gather", "indices", "last dim", "3");
  EXPECT_THROW_WITH(gather(x, arg(s32({}))), ShapeError, "gather", "indices", "rank >= 1");
  EXPECT_THROW_WITH(gather(arg(f32({0, 2})), arg(s32({1, 1}))), ShapeError, "gather", "x", "non-empty");
  EXPECT_THROW_WITH(take(x, arg(pred({2})), 0), TypeError, "take", "indices", "pred");
  EXPECT_THROW_WITH(take(x, arg(s32({2})), 2), ShapeError, "take", "axis");
  EXPECT_THROW_WITH(take_along_axis(x, arg(s32({3, 2})), 1), ShapeError, "take_along_axis", "indices", "[3][2]");
  EXPECT_THROW_WITH(indexed_add(x, arg(s32({3, 1})), arg(f32({3, 4}))), ShapeError, "indexed_add", "updates",
                    "[3][5]", "[3][4]");
}

TEST(Sorting, ShapesTypesAndErrors) {
  const Expr x = arg(f16({3, 300}));
  EXPECT_EQ(sort(x).spec(), f16({3, 300}));
  EXPECT_EQ(argsort(x, {.axis = 1}).spec(), s64({3, 300}));
  EXPECT_EQ(argsort(x, {.axis = 0, .index_dtype = DType::U8}).spec(), u8({3, 300}));
  EXPECT_THROW_WITH(argsort(x, {.axis = 1, .index_dtype = DType::U8}), TypeError, "argsort", "index_dtype",
                    "299", "u8");
  EXPECT_THROW_WITH(argsort(x, {.index_dtype = DType::F32}), TypeError, "argsort", "index_dtype", "f32");
  EXPECT_THROW_WITH(sort(arg(c64({3}))), TypeError, "sort", "x", "c64");
  EXPECT_THROW_WITH(sort(arg(f32({}))), ShapeError, "sort", "axis");
  const TopK t = top_k(arg(f32({4, 10})), 3);
  EXPECT_EQ(t.values.spec(), f32({4, 3}));
  EXPECT_EQ(t.indices.spec(), s64({4, 3}));
  EXPECT_THROW_WITH(top_k(arg(f32({4, 10})), 11), ShapeError, "top_k", "k", "11");
}

}  // namespace
}  // namespace sluice
