// Builders that move elements: reshape, squeeze, broadcast, transpose, pad,
// reverse, slice, put_slice, concatenate, stack.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;
using testing::weak;

TEST(Reshape, KeepsElementCount) {
  const Expr x = arg(f32({2, 3}));
  const Expr r = reshape(x, {3, 2});
  EXPECT_EQ(r.spec(), f32({3, 2}));
  EXPECT_EQ(r.node()->op, Op::Reshape);
  EXPECT_EQ(reshape(x, {6}).spec(), f32({6}));
  EXPECT_EQ(reshape(x, {2, 3}).node(), x.node()) << "the same shape is no reshape";
  EXPECT_EQ(reshape(arg(s8({1, 1})), {}).spec(), s8());
  EXPECT_THROW_WITH(reshape(x, {4}), ShapeError, "reshape", "6 elements", "[4]");
}

TEST(Squeeze, AllOnesOrNamedAxes) {
  const Expr x = arg(f32({1, 3, 1}));
  EXPECT_EQ(squeeze(x).spec(), f32({3}));
  EXPECT_EQ(squeeze(x, {0}).spec(), f32({3, 1}));
  EXPECT_EQ(squeeze(x, {-1}).spec(), f32({1, 3}));
  EXPECT_EQ(squeeze(arg(f32({2, 3}))).spec(), f32({2, 3}));
  EXPECT_THROW_WITH(squeeze(x, {1}), ShapeError, "squeeze", "size 1", "axis 1 of size 3");
  EXPECT_THROW_WITH(squeeze(x, {3}), ShapeError, "squeeze", "axes", "3");
  EXPECT_THROW_WITH(squeeze(x, {0, 0}), ShapeError, "squeeze", "distinct");
}

TEST(Broadcast, RightAlignedByDefault) {
  const Expr b = broadcast(arg(f32({3})), {2, 3});
  EXPECT_EQ(b.spec(), f32({2, 3}));
  EXPECT_EQ(b.node()->attrs.axes, (std::vector<int64_t>{1}));
  const Expr s = broadcast(arg(s32({})), {4, 5});
  EXPECT_EQ(s.spec(), s32({4, 5}));
  EXPECT_TRUE(s.node()->attrs.axes.empty());
  EXPECT_EQ(broadcast(arg(f32({2, 1})), {2, 4}).node()->attrs.axes, (std::vector<int64_t>{0, 1}));
}

TEST(Broadcast, ExplicitAxes) {
  const Expr b = broadcast(arg(f32({3})), {3, 2}, {0});
  EXPECT_EQ(b.spec(), f32({3, 2}));
  EXPECT_EQ(b.node()->attrs.axes, (std::vector<int64_t>{0}));
  EXPECT_EQ(broadcast(arg(f32({2, 4})), {2, 3, 4}, {0, 2}).spec(), f32({2, 3, 4}));
  const Expr x = arg(f32({2, 3}));
  EXPECT_EQ(broadcast(x, {2, 3}).node(), x.node()) << "to its own shape is no broadcast";
  EXPECT_EQ(broadcast(weak_scalar(1.5), {2}).dtype(), DType::F32) << "a plain float becomes f32, as Nx";
}

TEST(Broadcast, Errors) {
  EXPECT_THROW_WITH(broadcast(arg(f32({2})), {2, 3}), ShapeError, "broadcast", "dim 1 or 2", "3");
  EXPECT_THROW_WITH(broadcast(arg(f32({2, 3})), {3}), ShapeError, "broadcast", "rank at least 2");
  EXPECT_THROW_WITH(broadcast(arg(f32({2, 3})), {3, 2, 4}, {1, 0}), ShapeError, "broadcast",
                    "strictly increasing");
  EXPECT_THROW_WITH(broadcast(arg(f32({2, 3})), {2, 3, 4}, {0}), ShapeError, "broadcast", "2 entries", "1");
  EXPECT_THROW_WITH(broadcast(arg(f32({2})), {2, 3}, {2}), ShapeError, "broadcast", "axes", "2");
}

TEST(Transpose, ReversedByDefaultOrPermuted) {
  const Expr x = arg(f32({2, 3, 4}));
  const Expr t = transpose(x);
  EXPECT_EQ(t.spec(), f32({4, 3, 2}));
  EXPECT_EQ(t.node()->attrs.axes, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(transpose(x, {1, 2, 0}).spec(), f32({3, 4, 2}));
  EXPECT_EQ(transpose(x, {0, -1, 1}).node()->attrs.axes, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(transpose(x, {0, 1, 2}).node(), x.node());
  EXPECT_THROW_WITH(transpose(x, {0, 0, 1}), ShapeError, "transpose", "permutation", "[0, 0, 1]");
  EXPECT_THROW_WITH(transpose(x, {0, 1}), ShapeError, "transpose", "3 entries", "2");
}

TEST(Pad, SizesFromLowHighInterior) {
  const Expr p = pad(arg(f32({3})), constant(0.0, DType::F32), {{1, 2, 1}});
  EXPECT_EQ(p.spec(), f32({8})) << "1 + 3 + 2 interior + 2";
  EXPECT_EQ(p.node()->attrs.padding, (std::vector<PadDim>{{1, 2, 1}}));
  EXPECT_EQ(pad(arg(f32({4, 5})), weak(0), {{-1, 0, 0}, {0, -2, 0}}).spec(), f32({3, 3})) << "negative trims";
  EXPECT_EQ(pad(arg(f32({0})), weak(0), {{1, 1, 3}}).spec(), f32({2}))
      << "interior of an empty axis adds nothing";
}

TEST(Pad, ValueTakesTheTensorsType) {
  const Expr p = pad(arg(s32({3})), weak(1.5), {{1, 1, 0}});
  EXPECT_EQ(p.dtype(), DType::S32);
  EXPECT_EQ(p.node()->operands.at(1)->op, Op::Constant);
  EXPECT_EQ(p.node()->operands.at(1)->spec, s32());
  const Expr q = pad(arg(f16({3})), arg(f32({}), 1), {{1, 1, 0}});
  EXPECT_EQ(q.node()->operands.at(1)->op, Op::AsType) << "a strong value is converted";
  EXPECT_EQ(q.dtype(), DType::F16);
}

TEST(Pad, Errors) {
  const Expr x = arg(f32({3}));
  EXPECT_THROW_WITH(pad(x, arg(f32({1}), 1), {{1, 1, 0}}), ShapeError, "pad", "value", "scalar", "f32[1]");
  EXPECT_THROW_WITH(pad(x, weak(0), {}), ShapeError, "pad", "config", "1 entries", "0");
  EXPECT_THROW_WITH(pad(x, weak(0), {{0, 0, -1}}), ShapeError, "pad", "interior >= 0", "-1");
  EXPECT_THROW_WITH(pad(x, weak(0), {{-2, -2, 0}}), ShapeError, "pad", "size >= 0", "-1");
}

TEST(Reverse, AllAxesByDefault) {
  const Expr x = arg(f32({2, 3}));
  EXPECT_EQ(reverse(x).node()->attrs.axes, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(reverse(x, {-1}).node()->attrs.axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(reverse(x, {1}).spec(), f32({2, 3}));
  EXPECT_THROW_WITH(reverse(x, {2}), ShapeError, "reverse", "axes", "2");
}

TEST(Slice, StaticLengthsAndStrides) {
  const Expr x = arg(f32({32, 32}));
  const Expr s = slice(x, {0, 0}, {16, 16});
  EXPECT_EQ(s.spec(), f32({16, 16}));
  EXPECT_EQ(s.node()->attrs.starts, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s.node()->attrs.lengths, (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(s.node()->attrs.strides, (std::vector<int64_t>{1, 1})) << "default strides are stored";
  EXPECT_EQ(slice(arg(f32({10})), {2}, {7}, {2}).spec(), f32({4})) << "ceil(7 / 2) elements: 2, 4, 6, 8";
  EXPECT_EQ(slice(arg(f32({10})), {10}, {0}).spec(), f32({0}));
  EXPECT_EQ(slice(x, {0, 0}, {32, 32}).node(), x.node()) << "the whole tensor is no slice";
}

TEST(Slice, StaticErrors) {
  const Expr x = arg(f32({4, 4}));
  EXPECT_THROW_WITH(slice(x, {0, 0}, {2, 2, 2}), ShapeError, "slice", "lengths", "2 entries", "found 3");
  EXPECT_THROW_WITH(slice(x, {0}, {2, 2}), ShapeError, "slice", "starts", "2 entries", "found 1");
  EXPECT_THROW_WITH(slice(x, {3, 0}, {2, 2}), ShapeError, "slice", "starts", "start 3");
  EXPECT_THROW_WITH(slice(x, {-1, 0}, {2, 2}), ShapeError, "slice", "starts", "start -1");
  EXPECT_THROW_WITH(slice(x, {0, 0}, {5, 2}), ShapeError, "slice", "lengths", "[5, 2]");
  EXPECT_THROW_WITH(slice(x, {0, 0}, {2, 2}, {1, 0}), ShapeError, "slice", "strides", "[1, 0]");
}

TEST(Slice, DynamicStartsAreS64ScalarOperands) {
  const Expr x = arg(f32({8, 8}));
  const Expr s = slice(x, std::vector<Expr>{arg(s32({}), 1), weak_scalar(int64_t{2})}, {4, 8});
  EXPECT_EQ(s.spec(), f32({4, 8}));
  ASSERT_EQ(s.node()->operands.size(), 3u);
  EXPECT_TRUE(s.node()->attrs.starts.empty()) << "dynamic: no static starts";
  EXPECT_EQ(s.node()->operands[1]->op, Op::AsType);
  EXPECT_EQ(s.node()->operands[1]->spec, s64());
  EXPECT_EQ(s.node()->operands[2]->spec, s64());
  EXPECT_FALSE(s.node()->operands[2]->attrs.weak);
}

TEST(Slice, DynamicErrors) {
  const Expr x = arg(f32({8}));
  EXPECT_THROW_WITH(slice(x, std::vector<Expr>{arg(f32({}), 1)}, {4}), TypeError, "slice", "starts[0]",
                    "integer", "f32");
  EXPECT_THROW_WITH(slice(x, std::vector<Expr>{arg(s32({1}), 1)}, {4}), ShapeError, "slice", "starts[0]",
                    "scalar", "s32[1]");
  EXPECT_THROW_WITH(slice(x, std::vector<Expr>{}, {4}), ShapeError, "slice", "starts", "1 entries", "0");
  EXPECT_THROW_WITH(slice(x, std::vector<Expr>{arg(s32({}), 1)}, {9}), ShapeError, "slice", "lengths", "[9]");
  EXPECT_THROW_WITH(slice(x, std::vector<Expr>{Expr()}, {4}), Error, "slice", "starts[0]", "empty");
}

TEST(PutSlice, StaticStartsAreClampedSoTheUpdateFits) {
  const Expr p = put_slice(arg(f32({5})), {4}, arg(f32({2}), 1));
  EXPECT_EQ(p.spec(), f32({5}));
  EXPECT_EQ(p.node()->attrs.starts, (std::vector<int64_t>{3}));
  EXPECT_EQ(put_slice(arg(f32({5, 5})), {-2, 1}, arg(f32({2, 2}), 1)).node()->attrs.starts,
            (std::vector<int64_t>{0, 1}));
}

TEST(PutSlice, MergesTypes) {
  const Expr p = put_slice(arg(s32({5})), {0}, arg(f32({2}), 1));
  EXPECT_EQ(p.spec(), f32({5}));
  EXPECT_EQ(p.node()->operands.at(0)->op, Op::AsType);
}

TEST(PutSlice, DynamicStarts) {
  const Expr p = put_slice(arg(f32({5, 4})), std::vector<Expr>{arg(u8({}), 1), weak_scalar(int64_t{0})},
                           arg(f32({2, 4}), 2));
  EXPECT_EQ(p.spec(), f32({5, 4}));
  ASSERT_EQ(p.node()->operands.size(), 4u);
  EXPECT_EQ(p.node()->operands[2]->spec, s64());
  EXPECT_TRUE(p.node()->attrs.starts.empty());
}

TEST(PutSlice, Errors) {
  EXPECT_THROW_WITH(put_slice(arg(f32({5})), {0}, arg(f32({6}), 1)), ShapeError, "put_slice", "update",
                    "[6]");
  EXPECT_THROW_WITH(put_slice(arg(f32({5})), {0}, arg(f32({1, 1}), 1)), ShapeError, "put_slice", "rank 1");
  EXPECT_THROW_WITH(put_slice(arg(f32({5})), std::vector<int64_t>{}, arg(f32({1}), 1)), ShapeError,
                    "put_slice", "starts", "1 entries");
  EXPECT_THROW_WITH(put_slice(arg(f32({5})), std::vector<Expr>{arg(f32({}), 1)}, arg(f32({1}), 2)), TypeError,
                    "put_slice", "starts[0]", "f32");
}

TEST(Concatenate, AlongAnAxisWithMergedTypes) {
  const Expr c = concatenate({arg(f32({2, 3})), arg(s32({4, 3}), 1)});
  EXPECT_EQ(c.spec(), f32({6, 3}));
  EXPECT_EQ(c.node()->attrs.axis, 0);
  EXPECT_EQ(c.node()->operands.at(1)->op, Op::AsType);
  const Expr d = concatenate({arg(f32({2, 3})), arg(f32({2, 1}), 1), arg(f32({2, 2}), 2)}, -1);
  EXPECT_EQ(d.spec(), f32({2, 6}));
  EXPECT_EQ(d.node()->attrs.axis, 1);
  const Expr x = arg(f32({2}));
  EXPECT_EQ(concatenate({x}).node(), x.node());
}

TEST(Concatenate, Errors) {
  EXPECT_THROW_WITH(concatenate({}), ShapeError, "concatenate", "at least one", "none");
  EXPECT_THROW_WITH(concatenate({arg(f32({2, 3})), arg(f32({2, 4}), 1)}), ShapeError, "concatenate", "xs[1]",
                    "[2][4]");
  EXPECT_THROW_WITH(concatenate({arg(f32({2, 3})), arg(f32({2, 3, 1}), 1)}), ShapeError, "concatenate",
                    "xs[1]");
  EXPECT_THROW_WITH(concatenate({arg(f32({})), arg(f32({}), 1)}), ShapeError, "concatenate", "rank >= 1");
  EXPECT_THROW_WITH(concatenate({arg(f32({2})), arg(f32({2}), 1)}, 1), ShapeError, "concatenate", "axis",
                    "1");
}

TEST(Stack, AddsAnAxis) {
  EXPECT_EQ(stack({arg(f32({2, 3})), arg(f32({2, 3}), 1)}).spec(), f32({2, 2, 3}));
  EXPECT_EQ(stack({arg(f32({2, 3})), arg(f32({2, 3}), 1), arg(f32({2, 3}), 2)}, 2).spec(), f32({2, 3, 3}));
  EXPECT_EQ(stack({arg(f32({2})), arg(f32({2}), 1)}, -1).spec(), f32({2, 2}));
  EXPECT_EQ(stack({arg(f32({})), arg(s8({}), 1)}).spec(), f32({2}));
}

TEST(Stack, Errors) {
  EXPECT_THROW_WITH(stack({}), ShapeError, "stack", "at least one");
  EXPECT_THROW_WITH(stack({arg(f32({2})), arg(f32({3}), 1)}), ShapeError, "stack", "xs[1]", "f32[3]");
  EXPECT_THROW_WITH(stack({arg(f32({2})), arg(f32({2}), 1)}, 2), ShapeError, "stack", "axis", "2");
  const Spec big{DType::F32, Shape(std::vector<int64_t>(16, 1))};
  EXPECT_THROW_WITH(stack({arg(big)}), ShapeError, "stack", "rank at most 16", "rank 17");
}

}  // namespace
}  // namespace sluice
