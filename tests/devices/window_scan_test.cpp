// window_sum, window_max, window_min, window_product (strides and padding,
// any rank), window_scatter_max/min and cumulative_sum/product/max/min (any
// axis, reversed) on the host through the public API.
// Small cases against numpy (tests/devices/reference/window_scan.py), large
// ones (parallel paths) against naive loops in double.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/devices/reference_inputs.h"

namespace sluice {
namespace {

using test::cast;
using test::pattern;

// Traces f over one argument of `dtype` and `shape` holding x, runs it on
// the host and returns the result's elements; the result keeps the dtype.
template <typename T, typename F>
std::vector<T> eval(const Shape& shape, const std::vector<T>& x, F f, DType dtype = dtype_of<T>()) {
  const Spec spec{dtype, shape};
  const Tensor y = compile(trace({spec}, f)).run({tensor_from_bytes(spec, x.data())})[0];
  EXPECT_EQ(y.dtype(), dtype);
  std::vector<T> out(static_cast<size_t>(y.size()));
  y.copy_to_host(out.data());
  return out;
}

struct WindowCall {
  std::vector<int64_t> dims, strides;
  std::vector<PadDim> padding;
};

using Windowing = Expr (*)(Expr, const std::vector<int64_t>&, const WindowOptions&);

template <typename T>
std::vector<T> window(Windowing fn, const Shape& s, const std::vector<T>& x, const WindowCall& c) {
  return eval(s, x, [&](Expr v) { return fn(v, c.dims, {.strides = c.strides, .padding = c.padding}); });
}

template <typename T>
std::vector<T> cumsum(const Shape& s, const std::vector<T>& x, int64_t axis, bool reverse) {
  return eval(s, x, [&](Expr v) { return cumulative_sum(v, {.axis = axis, .reverse = reverse}); });
}

// Output dims: floor((d + low + high - w) / s) + 1.
Shape window_shape(const Shape& s, const WindowCall& c) {
  std::vector<int64_t> dims;
  for (int k = 0; k < s.rank(); ++k) {
    const size_t i = static_cast<size_t>(k);
    const int64_t stride = c.strides.empty() ? 1 : c.strides[i];
    const PadDim pad = c.padding.empty() ? PadDim{} : c.padding[i];
    dims.push_back((s.dim(k) + pad.low + pad.high - c.dims[i]) / stride + 1);
  }
  return Shape(dims);
}

TEST(Window, SumMaxMinWithStridesAndPaddingMatchNumpy) {
  EXPECT_EQ(window(window_sum, {4, 5}, pattern(20), {{2, 3}}),
            (std::vector<double>{-2.0, 0.5, 3.0, -2.125, 0.375, 2.875, -2.25, 0.25, 2.75}))
      << "valid window, unit strides";
  EXPECT_EQ(window(window_max, {5, 4}, cast<float>(pattern(20)), {{2, 2}, {2, 2}, {{1, 0}, {0, 1}}}),
            (std::vector<float>{-1.375, 3.25, 5.75, 2.375, 4.875, 6.125}))
      << "strided max with padding on both sides";
  EXPECT_EQ(window(window_min, {2, 5, 6}, pattern(60), {{1, 3, 2}, {1, 2, 2}, {{0, 0}, {1, 1}, {0, 1}}}),
            (std::vector<double>{-6.0, -4.75, -5.625, -3.5,  -4.375, -5.625, -4.0, -1.875, -5.25,
                                 -3.625, -4.875, -5.75, -3.625, -4.5, -5.75, -4.125, -2.0, -5.375}))
      << "rank 3";
  const std::vector<int32_t> xi{-48, -11, 26, -38, -1, 36, -28, 9, 46, -18};
  EXPECT_EQ(window(window_sum, {10}, xi, {{4}, {3}, {{2, 2}}}), (std::vector<int32_t>{-59, -24, 16, 37}))
      << "s32 along the only axis, padded and strided";
}

TEST(Window, PaddingHoldsTheIdentity) {
  const std::vector<float> x{-5, -7};
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(window(window_max, {2}, x, {{2}, {1}, {{2, 1}}}), (std::vector<float>{-inf, -5, -5, -7}))
      << "a window wholly in padding is the identity; negative values beat padding";
  EXPECT_EQ(window(window_min, {2}, std::vector<int8_t>{5, 7}, {{2}, {1}, {{1, 1}}}),
            (std::vector<int8_t>{5, 5, 7}));
  EXPECT_EQ(window(window_sum, {2, 1}, x, {{1, 3}, {1, 1}, {{0, 0}, {1, 1}}}), (std::vector<float>{-5, -7}));
}

TEST(Window, MaxPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> got = window(window_max, {5}, std::vector<float>{1, nan, 2, 3, 4}, {{2}});
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << "windows over the NaN";
  EXPECT_EQ(got[2], 3.0f);
  EXPECT_EQ(got[3], 4.0f);
}

TEST(Window, HalfPrecisionSumsInF32) {
  const std::vector<half> ones(3000, half{float_to_f16(1.0f)});
  const std::vector<half> got = window(window_sum, {3000}, ones, {{3000}});
  EXPECT_EQ(f16_to_float(got[0].bits), 3000.0f) << "an f16 running sum would stop at 2048";
}

// Naive window over [rows][cols] in double: identity-padded, strided.
std::vector<double> naive_window(const std::vector<double>& x, int64_t rows, int64_t cols, const WindowCall& c,
                                 Op op) {
  const Shape os = window_shape(Shape{rows, cols}, c);
  std::vector<double> out;
  const double id = op == Op::WindowSum       ? 0
                    : op == Op::WindowProduct ? 1
                    : op == Op::WindowMax     ? -INFINITY
                                              : INFINITY;
  for (int64_t i = 0; i < os.dim(0); ++i) {
    for (int64_t j = 0; j < os.dim(1); ++j) {
      double acc = id;
      for (int64_t a = 0; a < c.dims[0]; ++a) {
        for (int64_t b = 0; b < c.dims[1]; ++b) {
          const int64_t r = i * c.strides[0] - c.padding[0].low + a, q = j * c.strides[1] - c.padding[1].low + b;
          if (r < 0 || r >= rows || q < 0 || q >= cols) continue;
          const double v = x[static_cast<size_t>(r * cols + q)];
          acc = op == Op::WindowSum       ? acc + v
                : op == Op::WindowProduct ? acc * v
                : op == Op::WindowMax     ? std::max(acc, v)
                                          : std::min(acc, v);
        }
      }
      out.push_back(acc);
    }
  }
  return out;
}

TEST(Window, LargeWindowsMatchNaiveLoops) {
  const int64_t rows = 300, cols = 1200;
  const std::vector<double> x = pattern(rows * cols);
  const std::vector<WindowCall> calls{
      {{5, 7}, {2, 3}, {{2, 1}, {3, 0}}},
      {{1, 64}, {1, 1}, {{0, 0}, {0, 0}}},
      {{9, 1}, {1, 1}, {{4, 4}, {0, 0}}},
      {{3, 3}, {3, 3}, {{0, 2}, {1, 1}}},
  };
  for (Op op : {Op::WindowSum, Op::WindowMax, Op::WindowMin}) {
    for (const WindowCall& c : calls) {
      const Windowing fn = op == Op::WindowSum ? window_sum : op == Op::WindowMax ? window_max : window_min;
      const std::vector<double> got = window(fn, {rows, cols}, x, c);
      const std::vector<double> want = naive_window(x, rows, cols, c, op);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-9) << op_name(op) << " window " << c.dims[0] << "x" << c.dims[1]
                                           << ", output " << i;
      }
    }
  }
}

TEST(Window, LargeProductsMatchNaiveLoops) {
  const int64_t rows = 300, cols = 1200;
  std::vector<double> x = pattern(rows * cols);
  for (double& v : x) v = 1 + v / 64;
  for (const WindowCall& c :
       {WindowCall{{5, 7}, {2, 3}, {{2, 1}, {3, 0}}}, WindowCall{{9, 1}, {1, 1}, {{4, 4}, {0, 0}}}}) {
    const std::vector<double> got = window(window_product, {rows, cols}, x, c);
    const std::vector<double> want = naive_window(x, rows, cols, c, Op::WindowProduct);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-12 * std::abs(want[i]))
          << "window " << c.dims[0] << "x" << c.dims[1] << ", output " << i;
  }
}

// Naive select-and-scatter over [rows][cols]: each window's first extremum
// (row-major, padding skipped) receives its source value.
std::vector<double> naive_scatter(const std::vector<double>& x, int64_t rows, int64_t cols,
                                  const std::vector<double>& source, const WindowCall& c, bool largest) {
  const Shape os = window_shape(Shape{rows, cols}, c);
  std::vector<double> out(x.size(), 0.0);
  for (int64_t i = 0; i < os.dim(0); ++i) {
    for (int64_t j = 0; j < os.dim(1); ++j) {
      int64_t best = -1;
      for (int64_t a = 0; a < c.dims[0]; ++a) {
        for (int64_t b = 0; b < c.dims[1]; ++b) {
          const int64_t r = i * c.strides[0] - c.padding[0].low + a,
                        q = j * c.strides[1] - c.padding[1].low + b;
          if (r < 0 || r >= rows || q < 0 || q >= cols) continue;
          const int64_t at = r * cols + q;
          const double v = x[static_cast<size_t>(at)];
          if (best < 0 || (largest ? v > x[static_cast<size_t>(best)] : v < x[static_cast<size_t>(best)]))
            best = at;
        }
      }
      if (best >= 0) out[static_cast<size_t>(best)] += source[static_cast<size_t>(i * os.dim(1) + j)];
    }
  }
  return out;
}

TEST(WindowScatter, LargeTensorsMatchNaiveLoops) {
  const int64_t rows = 300, cols = 1200;
  // Values on a coarse grid: many ties, which the first-in-window rule settles.
  std::vector<double> x = pattern(rows * cols);
  for (double& v : x) v = std::round(v);
  for (const WindowCall& c :
       {WindowCall{{3, 3}, {2, 2}, {{1, 1}, {1, 1}}}, WindowCall{{2, 5}, {1, 3}, {{0, 1}, {2, 2}}}}) {
    const Shape os = window_shape(Shape{rows, cols}, c);
    const std::vector<double> source = pattern(os.size());
    for (bool largest : {true, false}) {
      const Spec xs{DType::F64, Shape{rows, cols}}, ss{DType::F64, os};
      const Function f = trace({xs, ss}, [&](Expr v, Expr s) {
        const WindowOptions o{.strides = c.strides, .padding = c.padding};
        return largest ? window_scatter_max(v, s, 0.0, c.dims, o) : window_scatter_min(v, s, 0.0, c.dims, o);
      });
      const std::vector<double> got =
          compile(f)
              .run({tensor_from_bytes(xs, x.data()), tensor_from_bytes(ss, source.data())})[0]
              .to_vector<double>();
      const std::vector<double> want = naive_scatter(x, rows, cols, source, c, largest);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-12)
            << (largest ? "max" : "min") << " window " << c.dims[0] << "x" << c.dims[1] << ", element " << i;
    }
  }
}

TEST(CumulativeSum, AlongEveryAxisForwardAndReversedMatchesNumpy) {
  const std::vector<double> x = pattern(60);
  const Shape s{3, 4, 5};
  EXPECT_EQ(cumsum(s, x, 1, true),
            (std::vector<double>{1.125, -5.625, 0.25,   6.125, -0.625, 7.125,  -4.25, -3.0,   10.875, -0.5,
                                 2.625, -0.75,  -4.125, 5.125, 1.75,   0.25,   4.875, -3.125, 1.5,    6.125,
                                 5.0,   -1.75,  4.125,  -2.625, 3.25,  6.875,  -4.5,  9.375,  -2.0,   -0.75,
                                 10.875, -5.125, 4.125, 0.75,  -2.625, 4.375,  -3.625, 1.0,   5.625,  -2.375,
                                 -3.75, 2.125,  -4.625, 1.25,  7.125,  -6.0,   7.875, -3.5,   -2.25,  11.625,
                                 -6.125, 3.125, -0.25,  -3.625, 5.625, -4.125, 0.5,   5.125,  -2.875, 1.75}))
      << "middle axis, reversed";
  EXPECT_EQ(cumsum(s, x, 2, false),
            (std::vector<double>{-6.0,  -7.375, -4.125, -8.875, -9.0,  4.5,    1.0,    2.125,  7.875,  5.625,
                                 2.375, -3.25,  -4.25,  -0.625, -5.0,  0.25,   5.125,  2.0,    3.5,    9.625,
                                 -1.875, 0.875, -4.375, -5.0,   -1.0,  -4.0,   -3.375, 1.875,  -0.875, 1.0,
                                 6.5,   5.0,    8.125,  3.25,   3.0,   4.375,  0.75,   1.75,   7.375,  5.0,
                                 2.25,  -3.5,   -4.625, -1.125, -5.625, 0.125, 4.875,  1.625,  3.0,    9.0,
                                 -2.0,  0.625,  -4.75,  -5.5,   -1.625, -4.125, -3.625, 1.5,   -1.375, 0.375}))
      << "last axis";
  const std::vector<double> first = cumsum(s, x, 0, true);
  EXPECT_EQ(std::vector<double>(first.begin(), first.begin() + 5),
            (std::vector<double>{-5.625, -4.375, -3.125, -1.875, -0.625}))
      << "first axis, reversed";
}

TEST(CumulativeSum, IntegersWrapHalfPrecisionSumsInF32AndPredCounts) {
  const std::vector<int8_t> got = cumsum(Shape{200}, std::vector<int8_t>(200, 1), 0, false);
  EXPECT_EQ(std::vector<int8_t>(got.begin() + 125, got.begin() + 131),
            (std::vector<int8_t>{126, 127, -128, -127, -126, -125}))
      << "s8 wraps, as numpy's cumsum(dtype=int8)";
  const std::vector<half> h = cumsum(Shape{3000, 1}, std::vector<half>(3000, half{float_to_f16(1.0f)}), 0, false);
  EXPECT_EQ(f16_to_float(h[2999].bits), 3000.0f) << "an f16 running sum would stop at 2048";
  const std::vector<uint8_t> flags{0, 1, 0, 1};
  const Tensor counts = compile(trace({pred({4})}, [](Expr v) { return cumulative_sum(v); }))
                            .run({tensor_from_bytes(pred({4}), flags.data())})[0];
  EXPECT_EQ(counts.dtype(), DType::U8) << "a cumulative sum of pred counts";
  EXPECT_EQ(counts.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 2}));
}

TEST(CumulativeSum, LargeTensorsMatchNaiveSums) {
  const int64_t rows = 700, cols = 900;
  const std::vector<double> x = pattern(rows * cols);
  const std::vector<double> down = cumsum(Shape{rows, cols}, x, 0, false);
  const std::vector<double> left = cumsum(Shape{rows, cols}, x, 1, true);
  for (int64_t j : {int64_t{0}, int64_t{457}, cols - 1}) {
    double acc = 0;
    for (int64_t i = 0; i < rows; ++i) {
      acc += x[static_cast<size_t>(i * cols + j)];
      ASSERT_NEAR(down[static_cast<size_t>(i * cols + j)], acc, 1e-9) << "axis 0, row " << i << " column " << j;
    }
  }
  for (int64_t i : {int64_t{0}, int64_t{333}, rows - 1}) {
    double acc = 0;
    for (int64_t j = cols - 1; j >= 0; --j) {
      acc += x[static_cast<size_t>(i * cols + j)];
      ASSERT_NEAR(left[static_cast<size_t>(i * cols + j)], acc, 1e-9) << "axis 1 reversed, row " << i << " column " << j;
    }
  }
}

// Running products, maxima and minima along both axes of a large tensor
// (the row-at-a-time and the vectorised column paths) against naive loops.
TEST(CumulativeScans, LargeTensorsMatchNaiveLoops) {
  const int64_t rows = 700, cols = 900;
  std::vector<double> x = pattern(rows * cols);
  for (double& v : x) v = 1 + v / 256;
  using Scan = Expr (*)(Expr, const ScanOptions&);
  const std::vector<std::pair<Scan, Op>> scans{{cumulative_product, Op::CumulativeProduct},
                                               {cumulative_max, Op::CumulativeMax},
                                               {cumulative_min, Op::CumulativeMin}};
  for (const auto& [fn, op] : scans) {
    const std::vector<double> down = eval(Shape{rows, cols}, x, [&](Expr v) { return fn(v, {.axis = 0}); });
    const std::vector<double> left =
        eval(Shape{rows, cols}, x, [&](Expr v) { return fn(v, {.axis = 1, .reverse = true}); });
    auto combine = [&](double a, double b) {
      return op == Op::CumulativeProduct ? a * b : op == Op::CumulativeMax ? std::max(a, b) : std::min(a, b);
    };
    for (int64_t j : {int64_t{0}, int64_t{457}, cols - 1}) {
      double acc = x[static_cast<size_t>(j)];
      for (int64_t i = 0; i < rows; ++i) {
        if (i > 0) acc = combine(acc, x[static_cast<size_t>(i * cols + j)]);
        ASSERT_NEAR(down[static_cast<size_t>(i * cols + j)], acc, 1e-12 * std::abs(acc))
            << op_name(op) << " axis 0, row " << i << " column " << j;
      }
    }
    for (int64_t i : {int64_t{0}, int64_t{333}, rows - 1}) {
      double acc = x[static_cast<size_t>(i * cols + cols - 1)];
      for (int64_t j = cols - 1; j >= 0; --j) {
        if (j < cols - 1) acc = combine(acc, x[static_cast<size_t>(i * cols + j)]);
        ASSERT_NEAR(left[static_cast<size_t>(i * cols + j)], acc, 1e-12 * std::abs(acc))
            << op_name(op) << " axis 1 reversed, row " << i << " column " << j;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
