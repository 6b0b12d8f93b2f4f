// The pure inference layer, on the worked examples its header documents.
#include <sluice/ops/detail/shape_inference.h>

#include <gtest/gtest.h>

#include "ops_test_util.h"

namespace sluice {
namespace {

TEST(ShapeInference, Axes) {
  EXPECT_EQ(infer::normalize_axis("sum", "axes", 2, -1), 1);
  EXPECT_EQ(infer::normalize_axes("sum", "axes", 3, {-1, 0}, false), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(infer::normalize_axes("sum", "axes", 3, {}, true), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(infer::normalize_axes("reverse", "axes", 3, {}, false).empty());
  EXPECT_THROW_WITH(infer::normalize_axes("sum", "axes", 3, {0, 0}, false), ShapeError, "sum: argument axes",
                    "distinct");
}

TEST(ShapeInference, Elementwise) {
  EXPECT_EQ(infer::broadcast_shapes("add", {Shape{2, 1}, Shape{3}}), (Shape{2, 3}));
  EXPECT_THROW_WITH(infer::broadcast_shapes("add", {Shape{2}, Shape{3}}), ShapeError, "add: argument shapes");
  const auto exp_s32 = infer::unary(Op::Exp, DType::S32);
  EXPECT_EQ(exp_s32.compute, DType::F32);
  EXPECT_EQ(exp_s32.result, DType::F32);
  const auto abs_c64 = infer::unary(Op::Abs, DType::C64);
  EXPECT_EQ(abs_c64.compute, DType::C64);
  EXPECT_EQ(abs_c64.result, DType::F32);
  EXPECT_EQ(infer::unary(Op::IsNan, DType::F16).result, DType::Pred);
  EXPECT_EQ(infer::unary(Op::Negate, DType::Pred).compute, DType::U8);
  EXPECT_EQ(infer::unary(Op::BitwiseNot, DType::Pred).result, DType::Pred);
  EXPECT_THROW(infer::unary(Op::Erf, DType::C64), TypeError);
  const auto less = infer::binary(Op::Less, DType::S8, DType::U8, DType::S16);
  EXPECT_EQ(less.compute, DType::S16);
  EXPECT_EQ(less.result, DType::Pred);
  EXPECT_EQ(infer::binary(Op::Divide, DType::S32, DType::S32, DType::S32).result, DType::F32);
  EXPECT_EQ(infer::binary(Op::Add, DType::Pred, DType::Pred, DType::Pred).result, DType::U8);
  EXPECT_THROW(infer::binary(Op::BitwiseAnd, DType::F32, DType::S32, DType::F32), TypeError);
  EXPECT_EQ(infer::ternary(Op::Select, DType::F32).result, DType::F32);
  EXPECT_THROW(infer::ternary(Op::Clip, DType::C64), TypeError);
}

TEST(ShapeInference, WeakMerge) {
  EXPECT_EQ(infer::merge_weak(DType::S8, DType::S64), DType::S8);
  EXPECT_EQ(infer::merge_weak(DType::Pred, DType::S64), DType::U8);
  EXPECT_EQ(infer::merge_weak(DType::S32, DType::F64), DType::F32);
  EXPECT_EQ(infer::merge_weak(DType::F16, DType::F64), DType::F16);
  EXPECT_EQ(infer::merge_weak(DType::C128, DType::F64), DType::C128);
}

TEST(ShapeInference, ShapeOps) {
  EXPECT_NO_THROW(infer::reshape(Shape{2, 3}, Shape{3, 2}));
  EXPECT_THROW(infer::reshape(Shape{2, 3}, Shape{4}), ShapeError);
  EXPECT_EQ(infer::squeeze_axes(Shape{1, 3, 1}, {}), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(infer::broadcast_axes(Shape{3}, Shape{2, 3}, {}), (std::vector<int64_t>{1}));
  EXPECT_EQ(infer::broadcast_axes(Shape{3}, Shape{3, 2}, {0}), (std::vector<int64_t>{0}));
  const auto perm = infer::transpose_permutation(Shape{2, 3, 4}, {});
  EXPECT_EQ(perm, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(infer::transpose(Shape{2, 3, 4}, perm), (Shape{4, 3, 2}));
  EXPECT_EQ(infer::pad(Shape{3}, {{1, 2, 1}}), (Shape{8}));
  EXPECT_EQ(infer::slice(Shape{32, 32}, {0, 0}, {16, 16}, {1, 1}), (Shape{16, 16}));
  EXPECT_EQ(infer::slice(Shape{10}, {2}, {7}, {2}), (Shape{4}));
  EXPECT_THROW(infer::slice(Shape{4}, {3}, {2}, {1}), ShapeError);
  EXPECT_EQ(infer::dynamic_slice(Shape{10}, {4}, {1}), (Shape{4}));
  EXPECT_EQ(infer::slice_strides(Shape{4, 4}, {2, 2}, {}), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(infer::put_slice(Shape{5}, Shape{2}, {4}), (std::vector<int64_t>{3}));
  EXPECT_EQ(infer::concatenate({Shape{2, 3}, Shape{4, 3}}, 0), (Shape{6, 3}));
  EXPECT_EQ(infer::concatenate({Shape{2, 3}, Shape{2, 1}}, -1), (Shape{2, 4}));
}

TEST(ShapeInference, ReduceDotWindowFft) {
  EXPECT_EQ(infer::reduce_type(Op::Sum, DType::S32), DType::S64);
  EXPECT_EQ(infer::reduce_type(Op::Product, DType::Pred), DType::U64);
  EXPECT_EQ(infer::reduce_type(Op::All, DType::F32), DType::Pred);
  EXPECT_THROW(infer::reduce_type(Op::ReduceMax, DType::C64), TypeError);
  EXPECT_EQ(infer::reduce(Shape{2, 3, 4}, {0, 2}, false), (Shape{3}));
  EXPECT_EQ(infer::reduce(Shape{2, 3, 4}, {0, 2}, true), (Shape{1, 3, 1}));
  EXPECT_EQ(infer::arg_reduce("argmax", Shape{2, 3}, 1, false), (Shape{2}));
  EXPECT_EQ(infer::arg_reduce("argmax", Shape{2, 3}, -1, false), Shape());
  EXPECT_EQ(infer::dot(Shape{8, 2, 3}, {2}, {0}, Shape{8, 3, 4}, {1}, {0}), (Shape{8, 2, 4}));
  EXPECT_EQ(infer::dot_type(DType::Pred), DType::U8);
  std::vector<int64_t> strides;
  std::vector<PadDim> padding;
  infer::window_options("window_sum", Shape{10}, {3}, strides, padding);
  EXPECT_EQ(strides, (std::vector<int64_t>{1}));
  EXPECT_EQ(infer::window("window_sum", Shape{10}, {3}, {2}, {PadDim{}}), (Shape{4}));
  EXPECT_EQ(infer::window("window_sum", Shape{8, 8}, {2, 2}, {1, 1}, {{1, 1, 0}, {0, 0, 0}}), (Shape{9, 7}));
  EXPECT_EQ(infer::window_type(Op::WindowSum, DType::Pred), DType::U8);
  EXPECT_EQ(infer::fft_type("fft", s32({8}), 8), DType::C64);
  EXPECT_EQ(infer::fft_type("fft", f64({4, 16}), 16), DType::C128);
  EXPECT_THROW(infer::fft_type("fft", f32(), 1), ShapeError);
}

TEST(ShapeInference, MessagesNameOpArgumentExpectedFound) {
  try {
    infer::slice(Shape{4, 4}, {0, 0}, {2, 2, 2}, {1, 1, 1});
    FAIL() << "3 lengths for a rank-2 tensor";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "slice: argument lengths: expected 2 entries (one per axis of [4][4]), found 3");
  }
}

}  // namespace
}  // namespace sluice
