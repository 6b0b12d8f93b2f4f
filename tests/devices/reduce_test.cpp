// The reductions on the host through the public API: sum, product,
// reduce_max, reduce_min, all, any, argmax, argmin over inner, outer, middle
// and all axes. Small cases against numpy (tests/devices/reference/reduce.py),
// large ones (which take the parallel and pairwise paths) against sums in
// long double.

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

// Traces f over one argument of dtype `in` and `shape` holding x, runs it on
// the host and returns the result's elements (pred as bytes).
template <typename Out, typename In, typename F>
std::vector<Out> eval(const Shape& shape, const std::vector<In>& x, F f, DType in = dtype_of<In>()) {
  const Spec spec{in, shape};
  const Tensor y = compile(trace({spec}, f)).run({tensor_from_bytes(spec, x.data())})[0];
  EXPECT_EQ(dtype_size(y.dtype()), static_cast<int>(sizeof(Out))) << "result " << y.spec().str();
  std::vector<Out> out(static_cast<size_t>(y.size()));
  y.copy_to_host(out.data());
  return out;
}

using Reduction = Expr (*)(Expr, const ReduceOptions&);
using ArgReduction = Expr (*)(Expr, const ArgOptions&);

template <typename Out, typename In>
std::vector<Out> run(Reduction fn, const Shape& shape, const std::vector<In>& x, const ReduceOptions& o,
                     DType in = dtype_of<In>()) {
  return eval<Out>(shape, x, [&](Expr v) { return fn(v, o); }, in);
}

template <typename In>
std::vector<int64_t> run(ArgReduction fn, const Shape& shape, const std::vector<In>& x, const ArgOptions& o = {}) {
  return eval<int64_t>(shape, x, [&](Expr v) { return fn(v, o); });
}

TEST(Reduce, SumsOverEachAxisAndAllOfThemMatchNumpy) {
  const std::vector<float> x = cast<float>(pattern(24));
  const Shape s{2, 3, 4};
  EXPECT_EQ(run<float>(sum, s, x, {.axes = {0}}),
            (std::vector<float>{-7.0, 2.25, -1.125, -4.5, 4.75, 1.375, -2.0, 7.25, 3.875, 0.5, -2.875, -6.25}))
      << "outer axis";
  EXPECT_EQ(run<float>(sum, s, x, {.axes = {1}}),
            (std::vector<float>{-0.375, 0.875, 2.125, -9.25, 2.0, 3.25, -8.125, 5.75}))
      << "middle axis";
  EXPECT_EQ(run<float>(sum, s, x, {.axes = {2}}), (std::vector<float>{-8.875, 2.0, 0.25, -1.5, 9.375, -5.0}))
      << "inner axis";
  EXPECT_EQ(run<float>(sum, s, x, {.axes = {0, 2}, .keep_axes = true}), (std::vector<float>{-10.375, 11.375, -4.75}))
      << "outer and inner axes, kept";
  EXPECT_EQ(run<float>(sum, s, x, {.axes = {0, 1, 2}}), (std::vector<float>{-3.75})) << "all axes";
  EXPECT_EQ(run<double>(sum, s, cast<double>(x), {.axes = {0, 1, 2}, .keep_axes = true}), (std::vector<double>{-3.75}))
      << "all axes, kept";
}

TEST(Reduce, ProductsMaxAndMinMatchNumpy) {
  const std::vector<float> x = cast<float>(pattern(24));
  const Shape s{2, 3, 4};
  const std::vector<double> products = run<double>(product, s, cast<double>(x), {.axes = {2}});
  const std::vector<double> expected{-127.359375, 2.21484375, 172.8369140625, 3.96484375, -139.9658203125,
                                     -16.9189453125};
  ASSERT_EQ(products.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(products[i], expected[i]) << "product " << i;
  EXPECT_EQ(run<float>(reduce_max, s, x, {.axes = {1}}),
            (std::vector<float>{5.75, 4.5, 3.25, 1.125, 4.875, 3.625, 1.5, 6.125}));
  EXPECT_EQ(run<float>(reduce_min, s, x, {.axes = {0, 1}}), (std::vector<float>{-6.0, -3.125, -5.25, -5.625}));
}

TEST(Reduce, RankFourOverNonAdjacentAxesMatchesNumpy) {
  const std::vector<double> y = pattern(120);
  const Shape s{2, 3, 4, 5};
  EXPECT_EQ(run<double>(sum, s, y, {.axes = {1, 3}}),
            (std::vector<double>{-15.625, 15.625, -3.625, 15.0, -6.75, 11.875, -7.375, 11.25}))
      << "inner reduction with an outer reduced axis";
  EXPECT_EQ(run<double>(reduce_max, s, y, {.axes = {0, 2}}),
            (std::vector<double>{6.375, 4.875, 3.25, 5.75, 6.125, 6.5, 2.75, 5.25, 5.625, 4.0, 2.25, 4.75, 5.125,
                                 3.5, 6.0}))
      << "outer reduction with two reduced axes";
}

TEST(Reduce, IntegersSumAndMultiplyInSixtyFourBits) {
  const std::vector<int32_t> z{-48, -11, 26, -38, -1, 36, -28, 9, 46, -18, 19, -45};
  EXPECT_EQ(run<int64_t>(sum, {3, 4}, z, {.axes = {0}}), (std::vector<int64_t>{-3, 7, 17, -74}));
  EXPECT_EQ(run<int64_t>(product, {3, 4}, z, {.axes = {1}}), (std::vector<int64_t>{-521664, 9072, 707940}));

  const std::vector<int8_t> s8(1000, 127);
  EXPECT_EQ(run<int64_t>(sum, {1000}, s8, {.axes = {0}}), (std::vector<int64_t>{127000})) << "s8 sums in s64";
  const std::vector<int8_t> neg(1000, -128);
  EXPECT_EQ(run<int64_t>(sum, {10, 100}, neg, {.axes = {0}})[0], -1280) << "s8 outer sum in s64";
  const std::vector<uint8_t> u8(1000, 255);
  EXPECT_EQ(run<uint64_t>(sum, {1000}, u8, {.axes = {0}}), (std::vector<uint64_t>{255000})) << "u8 sums in u64";
  EXPECT_EQ(run<uint64_t>(product, {2, 500}, u8, {.axes = {1}})[0], 0x0ddb2ada534c0c01ull)
      << "u8 products wrap modulo 2^64 (255^500 mod 2^64, from Python's pow)";
  const std::vector<uint8_t> pred{1, 0, 1, 1, 1, 0};
  EXPECT_EQ(run<uint64_t>(sum, {2, 3}, pred, {.axes = {1}}, DType::Pred), (std::vector<uint64_t>{2, 2}))
      << "pred sums count in u64";
}

TEST(Reduce, EmptyReductionsGiveTheIdentity) {
  const std::vector<float> none;
  const Shape s{0, 3};
  EXPECT_EQ(run<float>(sum, s, none, {.axes = {0}}), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(run<float>(product, s, none, {.axes = {0}}), (std::vector<float>{1, 1, 1}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run<float>(reduce_max, s, none, {.axes = {0}}), (std::vector<float>{-inf, -inf, -inf}));
  EXPECT_EQ(run<float>(reduce_min, s, none, {.axes = {0}}), (std::vector<float>{inf, inf, inf}));
  EXPECT_EQ(run<uint8_t>(all, s, none, {.axes = {0}}), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(run<uint8_t>(any, s, none, {.axes = {0}}), (std::vector<uint8_t>{0, 0, 0}));
  const std::vector<int32_t> inone;
  EXPECT_EQ(run<int32_t>(reduce_max, {3, 0}, inone, {.axes = {1}}),
            (std::vector<int32_t>(3, std::numeric_limits<int32_t>::lowest())))
      << "integer max of nothing is the lowest value";
  EXPECT_EQ(run<int64_t>(sum, {3, 0}, inone, {.axes = {0, 1}}), (std::vector<int64_t>{0}));
  EXPECT_TRUE(run<float>(sum, {0, 3}, none, {.axes = {1}}).empty()) << "no outputs, nothing written";
}

TEST(Reduce, NaNPropagatesThroughSumsMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{1, nan, 3, nan, -1, 2};
  EXPECT_TRUE(std::isnan(run<float>(reduce_max, {6}, x, {.axes = {0}})[0])) << "max with NaN inside";
  EXPECT_TRUE(std::isnan(run<float>(reduce_min, {6}, x, {.axes = {0}})[0])) << "min with NaN inside";
  EXPECT_TRUE(std::isnan(run<float>(sum, {6}, x, {.axes = {0}})[0]));
  const std::vector<float> max0 = run<float>(reduce_max, {3, 2}, x, {.axes = {0}});
  EXPECT_EQ(max0[0], 3.0f) << "outer max, column without NaN";
  EXPECT_TRUE(std::isnan(max0[1])) << "outer max, column with NaN";
  const std::vector<float> last{1, 2, 3, nan};
  EXPECT_TRUE(std::isnan(run<float>(reduce_max, {4}, last, {.axes = {0}})[0])) << "NaN last";
  std::vector<float> big(100000, 1.0f);
  big[77777] = nan;
  EXPECT_TRUE(std::isnan(run<float>(reduce_min, {100000}, big, {.axes = {0}})[0])) << "NaN deep in a long run";
  EXPECT_EQ(run<uint8_t>(all, {2}, std::vector<float>{nan, 1}, {.axes = {0}}), (std::vector<uint8_t>{1}))
      << "NaN is true";
}

TEST(Reduce, AllAndAnyReadAnyDTypeAsTruth) {
  const std::vector<int32_t> x{1, 0, 5, 2, 3, 4};
  EXPECT_EQ(run<uint8_t>(all, {2, 3}, x, {.axes = {1}}), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(run<uint8_t>(any, {2, 3}, x, {.axes = {0}}), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(run<uint8_t>(any, {3}, std::vector<float>{-0.0f, 0.0f, 0.0f}, {.axes = {0}}), (std::vector<uint8_t>{0}))
      << "-0 is false";
  const std::vector<complex64> c{{0, 0}, {0, 1}};
  EXPECT_EQ(run<uint8_t>(all, {2}, c, {.axes = {0}}), (std::vector<uint8_t>{0}));
  EXPECT_EQ(run<uint8_t>(any, {2}, c, {.axes = {0}}), (std::vector<uint8_t>{1})) << "an imaginary part is true";
}

TEST(Reduce, ComplexSumsAndProductsMatchNumpy) {
  const std::vector<float> p = cast<float>(pattern(12));
  std::vector<complex64> c;
  for (size_t i = 0; i < 12; ++i) c.emplace_back(p[i], p[11 - i]);
  const std::vector<complex64> sums = run<complex64>(sum, {3, 4}, c, {.axes = {0}});
  const std::vector<complex64> expected{{-0.375f, -9.25f}, {0.875f, 2.125f}, {2.125f, 0.875f}, {-9.25f, -0.375f}};
  EXPECT_EQ(sums, expected);
  std::vector<complex128> c2(c.begin(), c.end());
  const std::vector<complex128> prod = run<complex128>(product, {3, 4}, c2, {.axes = {1}});
  const std::vector<complex128> eprod{{137.373046875, 651.064453125}, {-41.640625, 0}, {137.373046875, -651.064453125}};
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(std::abs(prod[i] - eprod[i]), 1e-9) << "product " << i;
}

TEST(Reduce, HalfPrecisionSumsAccumulateInF32) {
  std::vector<half> h(4096, half{float_to_f16(1.0f)});
  EXPECT_EQ(f16_to_float(run<half>(sum, {4096}, h, {.axes = {0}})[0].bits), 4096.0f)
      << "an f16 running sum would stop at 2048";
  std::vector<bfloat16> b(1000, bfloat16{float_to_bf16(1.0f)});
  EXPECT_EQ(bf16_to_float(run<bfloat16>(sum, {10, 100}, b, {.axes = {0, 1}})[0].bits), 1000.0f)
      << "a bf16 running sum would stop at 256";
  const std::vector<bfloat16> cols = run<bfloat16>(sum, {500, 2}, std::vector<bfloat16>(b.begin(), b.end()), {.axes = {0}});
  EXPECT_EQ(bf16_to_float(cols[0].bits), 500.0f) << "outer bf16 sum";
  std::vector<half> m{half{float_to_f16(-2.5f)}, half{float_to_f16(7.0f)}, half{float_to_f16(3.0f)}};
  EXPECT_EQ(f16_to_float(run<half>(reduce_max, {3}, m, {.axes = {0}})[0].bits), 7.0f);
}

TEST(Reduce, LongFloatSumsArePairwiseAccurate) {
  // 2^24 times 0.1f: a running f32 sum is off by about 10%, pairwise by ~1e-6.
  const int64_t n = int64_t{1} << 24;
  const std::vector<float> x(static_cast<size_t>(n), 0.1f);
  const double exact = static_cast<double>(n) * static_cast<double>(0.1f);
  const float all = run<float>(sum, {n}, x, {.axes = {0}})[0];
  EXPECT_NEAR(all, exact, exact * 1e-6) << "inner (contiguous) sum";
  const std::vector<float> cols = run<float>(sum, {n / 4, 4}, x, {.axes = {0}});
  for (float v : cols) EXPECT_NEAR(v, exact / 4, exact / 4 * 1e-6) << "outer sum of narrow rows";
  const std::vector<float> wide = run<float>(sum, {n / 4096, 4096}, x, {.axes = {0}});
  EXPECT_NEAR(wide[4095], exact / 4096, exact / 4096 * 1e-6) << "outer sum of wide rows";
}

// Long double sums of x over `axes`, the output in row-major order.
std::vector<long double> naive_sum(const Shape& s, const std::vector<float>& x, const Axes& axes) {
  std::vector<int64_t> out_dims;
  for (int k = 0; k < s.rank(); ++k) {
    if (std::find(axes.begin(), axes.end(), k) == axes.end()) out_dims.push_back(s.dim(k));
  }
  const Shape os(out_dims);
  std::vector<long double> out(static_cast<size_t>(os.size()), 0.0L);
  std::vector<int64_t> idx(static_cast<size_t>(s.rank()), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (int k = 0; k < s.rank(); ++k) {
      if (std::find(axes.begin(), axes.end(), k) == axes.end()) o = o * s.dim(k) + idx[static_cast<size_t>(k)];
    }
    out[static_cast<size_t>(o)] += x[i];
    for (int k = s.rank() - 1; k >= 0 && ++idx[static_cast<size_t>(k)] == s.dim(k); --k) idx[static_cast<size_t>(k)] = 0;
  }
  return out;
}

TEST(Reduce, LargeReductionsOverEveryLayoutMatchLongDoubleSums) {
  struct Case {
    Shape shape;
    Axes axes;
  };
  const std::vector<Case> cases{
      {{300, 1000}, {1}},         {{300, 1000}, {0}},         {{7, 3000, 5}, {1}},
      {{40, 50, 60}, {0, 2}},     {{40, 50, 60}, {1}},        {{8, 1, 9000}, {0, 2}},
      {{3, 70000}, {1}},          {{70000, 3}, {0}},          {{2, 2, 2, 2, 5000}, {0, 2, 4}},
      {{100001, 3}, {0}},         {{5, 20000, 2}, {0, 1}},    {{200000}, {0}},
  };
  for (const Case& c : cases) {
    std::vector<float> x = cast<float>(pattern(c.shape.size()));
    const std::vector<float> got = run<float>(sum, c.shape, x, {.axes = c.axes});
    const std::vector<long double> want = naive_sum(c.shape, x, c.axes);
    ASSERT_EQ(got.size(), want.size()) << c.shape.str();
    long double scale = 0;
    for (float v : x) scale += std::fabs(v);
    for (size_t i = 0; i < got.size(); ++i) {
      // Error bound of a pairwise sum, relative to the sum of magnitudes.
      ASSERT_NEAR(got[i], static_cast<double>(want[i]), static_cast<double>(scale) * 1e-6 / static_cast<double>(got.size()) + 1e-3)
          << "sum of " << c.shape.str() << " over " << c.axes.size() << " axes, output " << i;
    }
  }
}

TEST(Reduce, LargeMaxAndAnyTakeEveryPath) {
  std::vector<float> x = cast<float>(pattern(3 * 70000));
  x[3 * 51234 + 1] = 100.0f;
  const std::vector<float> outer = run<float>(reduce_max, {70000, 3}, x, {.axes = {0}});
  EXPECT_EQ(outer, (std::vector<float>{6.5f, 100.0f, 6.5f})) << "column maxima, one planted";
  const std::vector<float> inner = run<float>(reduce_max, {3, 70000}, x, {.axes = {1}});
  EXPECT_EQ(inner, (std::vector<float>{6.5f, 6.5f, 100.0f})) << "row maxima, one planted";
  std::vector<int16_t> z(1 << 20, 0);
  z[999999] = 1;
  EXPECT_EQ(run<uint8_t>(any, {1 << 20}, z, {.axes = {0}}), (std::vector<uint8_t>{1}));
  EXPECT_EQ(run<uint8_t>(all, {1 << 10, 1 << 10}, z, {.axes = {0}})[575], 0);
}

TEST(Argmax, MatchesNumpyAlongAxesAndFlattened) {
  const std::vector<int32_t> z{-48, -11, 26, -38, -1, 36, -28, 9, 46, -18, 19, -45};
  EXPECT_EQ(run(argmax, {3, 4}, z, {.axis = 0}), (std::vector<int64_t>{2, 1, 0, 1}));
  EXPECT_EQ(run(argmin, {3, 4}, z, {.axis = 1}), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(run(argmax, {3, 4}, z, {}), (std::vector<int64_t>{8})) << "flattened";
  EXPECT_EQ(run(argmax, {3, 4}, z, {.keep_axis = true}), (std::vector<int64_t>{8}))
      << "flattened, kept as [1][1]";
  EXPECT_EQ(run(argmax, {3, 4}, z, {.axis = 1, .keep_axis = true}), (std::vector<int64_t>{2, 1, 0}));
}

TEST(Argmax, TiesGoToTheFirstOrTheLast) {
  const std::vector<float> t{1, 3, 3, 2, 5, 5, 0, 5, 0, 0, 0, 0};
  EXPECT_EQ(run(argmax, {3, 4}, t, {.axis = 1}), (std::vector<int64_t>{1, 0, 0})) << "low";
  EXPECT_EQ(run(argmax, {3, 4}, t, {.axis = 1, .tie_break = TieBreak::High}),
            (std::vector<int64_t>{2, 3, 3}))
      << "high";
  EXPECT_EQ(run(argmin, {3, 4}, t, {.axis = 0}), (std::vector<int64_t>{2, 2, 1, 2})) << "low";
  EXPECT_EQ(run(argmin, {3, 4}, t, {.axis = 0, .tie_break = TieBreak::High}),
            (std::vector<int64_t>{2, 2, 2, 2}))
      << "high";
}

TEST(Argmax, NaNWinsAndTiesWithNaNsByTheTieBreak) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{1, nan, 3, nan, -1};
  EXPECT_EQ(run(argmax, {5}, x, {}), (std::vector<int64_t>{1}));
  EXPECT_EQ(run(argmin, {5}, x, {}), (std::vector<int64_t>{1}));
  EXPECT_EQ(run(argmax, {5}, x, {.tie_break = TieBreak::High}), (std::vector<int64_t>{3}));
  EXPECT_EQ(run(argmin, {5}, x, {.tie_break = TieBreak::High}), (std::vector<int64_t>{3}));
  const std::vector<float> cols{0, 1, nan, 2, 5, nan};
  EXPECT_EQ(run(argmax, {3, 2}, cols, {.axis = 0, .tie_break = TieBreak::High}),
            (std::vector<int64_t>{1, 2}));
}

TEST(Argmax, LongRowsSplitAcrossTasksKeepTheTieBreak) {
  std::vector<double> x(1 << 20, 0.0);
  x[1000] = 7;
  x[900000] = 7;
  EXPECT_EQ(run(argmax, {1 << 20}, x, {}), (std::vector<int64_t>{1000}));
  EXPECT_EQ(run(argmax, {1 << 20}, x, {.tie_break = TieBreak::High}), (std::vector<int64_t>{900000}));
  EXPECT_EQ(run(argmin, {1 << 20}, x, {.tie_break = TieBreak::High}), (std::vector<int64_t>{(1 << 20) - 1}));
  x[500000] = std::numeric_limits<double>::quiet_NaN();
  x[600000] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(run(argmin, {1 << 20}, x, {.tie_break = TieBreak::High}), (std::vector<int64_t>{600000}));
  EXPECT_EQ(run(argmin, {1 << 20}, x, {}), (std::vector<int64_t>{500000}));
  std::vector<uint16_t> cols(2000 * 300, 3);
  cols[1234 * 300 + 299] = 9;
  EXPECT_EQ(run(argmax, {2000, 300}, cols, {.axis = 0})[299], 1234);
  EXPECT_EQ(run(argmax, {2000, 300}, cols, {.axis = 0, .tie_break = TieBreak::High})[0], 1999);
}

}  // namespace
}  // namespace sluice
