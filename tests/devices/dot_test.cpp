// dot on the host through the public API: plain and transposed matrices,
// batch axes anywhere, several contracting axes, every dtype family. Small
// cases against numpy (tests/devices/reference/dot.py), large ones against
// long double sums.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/devices/reference_inputs.h"

namespace sluice {
namespace {

using test::cast;
using test::pattern;

struct DotAxes {
  Axes contract_a, batch_a, contract_b, batch_b;
};

// The usual matrix product: a's last axis with b's first.
DotAxes matmul() { return {{1}, {}, {0}, {}}; }

// dot(a, b) over host data of `dtype`, run on the host.
template <typename T>
std::vector<T> run(const Shape& sa, const std::vector<T>& a, const Shape& sb, const std::vector<T>& b,
                   const DotAxes& ax, DType dtype = dtype_of<T>()) {
  const Spec as{dtype, sa}, bs{dtype, sb};
  const Function f = trace({as, bs}, [&](Expr x, Expr y) {
    return dot(x, ax.contract_a, ax.batch_a, y, ax.contract_b, ax.batch_b);
  });
  const Tensor c = compile(f).run({tensor_from_bytes(as, a.data()), tensor_from_bytes(bs, b.data())})[0];
  EXPECT_EQ(c.dtype(), dtype) << "dot keeps its operands' dtype";
  std::vector<T> out(static_cast<size_t>(c.size()));
  c.copy_to_host(out.data());
  return out;
}

// Transposes a row-major [rows][cols] matrix.
template <typename T>
std::vector<T> transpose(const std::vector<T>& x, int64_t rows, int64_t cols) {
  std::vector<T> t(x.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[static_cast<size_t>(j * rows + i)] = x[static_cast<size_t>(i * cols + j)];
  }
  return t;
}

const std::vector<double> kMatmul{-2.671875, -4.390625, 52.28125, -7.828125,
                                  -3.921875, -4.078125, 54.15625, -4.390625};

TEST(Dot, MatrixProductInEveryOrientationMatchesNumpy) {
  const std::vector<double> a = pattern(6), b = pattern(12, 50);
  EXPECT_EQ(run(Shape{2, 3}, a, Shape{3, 4}, b, matmul()), kMatmul) << "a plain, b plain";
  const std::vector<double> at = transpose(a, 2, 3), bt = transpose(b, 3, 4);
  EXPECT_EQ(run(Shape{3, 2}, at, Shape{3, 4}, b, {{0}, {}, {0}, {}}), kMatmul) << "a transposed";
  EXPECT_EQ(run(Shape{2, 3}, a, Shape{4, 3}, bt, {{1}, {}, {1}, {}}), kMatmul) << "b transposed";
  EXPECT_EQ(run(Shape{3, 2}, at, Shape{4, 3}, bt, {{0}, {}, {1}, {}}), kMatmul) << "both transposed";
  EXPECT_EQ(run(Shape{2, 3}, cast<float>(a), Shape{3, 4}, cast<float>(b), matmul()), cast<float>(kMatmul))
      << "f32";
}

TEST(Dot, BatchAxesLeadingOrNotMatchNumpy) {
  const std::vector<double> a = pattern(24), b = pattern(40, 7);
  EXPECT_EQ(run(Shape{2, 3, 4}, a, Shape{2, 4, 5}, b, {{2}, {0}, {1}, {0}}),
            (std::vector<double>{9.40625,   -31.640625, 20.421875, -1.6875,    33.015625, 0.390625,
                                 9.640625,  -36.34375,  2.890625,  13.71875,   30.828125, 31.984375,
                                 -11.046875, 31.140625, -40.296875, 1.421875,  -38.65625, 6.484375,
                                 -0.453125, 14.703125,  10.4375,   31.703125,  -21.203125, 22.15625,
                                 24.484375, -5.796875,  -39.96875, 11.078125,  -12.046875, 20.0625}))
      << "leading batch axes";
  EXPECT_EQ(run(Shape{3, 2, 4}, cast<float>(a), Shape{4, 2, 5}, cast<float>(b), {{2}, {1}, {0}, {1}}),
            (std::vector<float>{9.859375,   -72.21875, 22.453125,  -1.234375,  52.40625,  20.34375,
                                -8.484375,  -8.90625,  20.65625,   -9.75,      29.25,     53.671875,
                                -41.84375,  40.96875,  -73.484375, -35.703125, 17.734375, 14.359375,
                                -33.203125, 20.234375, -31.984375, 16.3125,    18.84375,  -33.859375,
                                14.4375,    -28.265625, 14.890625, 23.328125,  -34.515625, 8.640625}))
      << "batch axes in the middle: operands permuted first";
}

TEST(Dot, SeveralContractingAxesPairInOrder) {
  const std::vector<double> a = pattern(24), b = pattern(60, 3);
  EXPECT_EQ(run(Shape{2, 3, 4}, a, Shape{4, 3, 5}, b, {{1, 2}, {}, {1, 0}, {}}),
            (std::vector<double>{31.515625, -55.9375, -80.265625, 69.0, 13.109375, 34.75, 57.515625, -15.984375,
                                 -42.140625, 12.1875}));
}

TEST(Dot, IntegersWrapInTheirType) {
  std::vector<int32_t> ai, bi;
  for (double v : pattern(12)) ai.push_back(static_cast<int32_t>(v * 8));
  for (double v : pattern(8, 5)) bi.push_back(static_cast<int32_t>(v * 8));
  EXPECT_EQ(run(Shape{3, 4}, ai, Shape{4, 2}, bi, matmul()), (std::vector<int32_t>{-585, 1636, 387, 1080, 3177, -1395}))
      << "s32 against numpy";
  EXPECT_EQ(run(Shape{4, 3}, transpose(ai, 3, 4), Shape{2, 4}, transpose(bi, 4, 2), {{0}, {}, {1}, {}}),
            (std::vector<int32_t>{-585, 1636, 387, 1080, 3177, -1395}))
      << "s32, both operands transposed";
  EXPECT_EQ(run(Shape{1, 2}, std::vector<int8_t>{100, 100}, Shape{2, 1}, std::vector<int8_t>{100, 100}, matmul()),
            (std::vector<int8_t>{32}))
      << "s8: 20000 wraps to 20000 mod 256 = 32";
  EXPECT_EQ(run(Shape{1}, std::vector<uint16_t>{65535}, Shape{1}, std::vector<uint16_t>{65535}, {{0}, {}, {0}, {}}),
            (std::vector<uint16_t>{1}))
      << "u16: 65535^2 mod 65536 = 1";
  EXPECT_EQ(run(Shape{2}, std::vector<int64_t>{INT64_MAX, 1}, Shape{2}, std::vector<int64_t>{2, 2}, {{0}, {}, {0}, {}}),
            (std::vector<int64_t>{0}))
      << "s64: 2 (2^63 - 1) + 2 wraps to 0";
}

TEST(Dot, PredCountsInU8) {
  const std::vector<uint8_t> a{1, 0, 0, 0, 1, 1};  // [2][3]
  const std::vector<uint8_t> b{0, 1, 1, 0, 1, 1};  // [3][2]
  const Function f = trace({pred({2, 3}), pred({3, 2})}, [](Expr x, Expr y) { return dot(x, y); });
  const Tensor c =
      compile(f).run({tensor_from_bytes(pred({2, 3}), a.data()), tensor_from_bytes(pred({3, 2}), b.data())})[0];
  EXPECT_EQ(c.dtype(), DType::U8) << "a dot of pred counts, as Nx";
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 2, 1}));
}

TEST(Dot, ComplexMatchesNumpy) {
  const std::vector<double> re = pattern(6), im = pattern(6, 9), re2 = pattern(6, 4), im2 = pattern(6, 2);
  std::vector<complex128> c, d;
  for (size_t i = 0; i < 6; ++i) {
    c.emplace_back(re[i], im[i]);
    d.emplace_back(re2[i], -im2[i]);
  }
  const std::vector<complex128> expected{
      {36.328125, -9.671875}, {-20.8125, -20.765625}, {38.515625, -6.546875}, {-15.5, -17.640625}};
  EXPECT_EQ(run(Shape{2, 3}, c, Shape{3, 2}, d, matmul()), expected) << "c128";
  EXPECT_EQ(run(Shape{2, 3}, cast<complex64>(c), Shape{3, 2}, cast<complex64>(d), matmul()),
            cast<complex64>(expected))
      << "c64";
}

TEST(Dot, HalfPrecisionMultipliesInF32) {
  std::vector<half> a;
  std::vector<bfloat16> ab;
  for (double v : pattern(6)) {
    a.push_back(half{float_to_f16(static_cast<float>(v))});
    ab.push_back(bfloat16{float_to_bf16(static_cast<float>(v))});
  }
  std::vector<half> b;
  for (double v : pattern(12, 50)) b.push_back(half{float_to_f16(static_cast<float>(v))});
  const std::vector<half> got = run(Shape{2, 3}, a, Shape{3, 4}, b, matmul());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(f16_to_float(got[i].bits), f16_to_float(float_to_f16(static_cast<float>(kMatmul[i])))) << i;
  }
  // bf16 dot of a with itself transposed: the exact f32 value, rounded once.
  const std::vector<bfloat16> sq = run(Shape{2, 3}, ab, Shape{2, 3}, ab, {{1}, {}, {1}, {}});
  double s01 = 0;
  for (size_t k = 0; k < 3; ++k) s01 += pattern(6)[k] * pattern(6)[3 + k];
  EXPECT_EQ(bf16_to_float(sq[1].bits), bf16_to_float(float_to_bf16(static_cast<float>(s01))));
}

TEST(Dot, EmptyContractionIsZeroAndVectorsGiveScalars) {
  EXPECT_EQ(run(Shape{3, 0}, std::vector<float>{}, Shape{0, 2}, std::vector<float>{}, matmul()),
            (std::vector<float>(6, 0.0f)));
  EXPECT_EQ(run(Shape{3}, std::vector<float>{1, 2, 3}, Shape{3}, std::vector<float>{4, 5, 6}, {{0}, {}, {0}, {}}),
            (std::vector<float>{32}));
  EXPECT_EQ(run(Shape{2}, std::vector<float>{1, 2}, Shape{3}, std::vector<float>{1, 10, 100}, {{}, {}, {}, {}}),
            (std::vector<float>{1, 10, 100, 2, 20, 200}))
      << "no contracting axes: outer product";
}

// Long double reference of a batched [batch][m][k] x [batch][k][n].
template <typename T>
std::vector<long double> naive(const std::vector<T>& a, const std::vector<T>& b, int64_t batch, int64_t m, int64_t n,
                               int64_t k) {
  std::vector<long double> c(static_cast<size_t>(batch * m * n), 0.0L);
  for (int64_t p = 0; p < batch; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const long double av = a[static_cast<size_t>((p * m + i) * k + kk)];
        for (int64_t j = 0; j < n; ++j) {
          c[static_cast<size_t>((p * m + i) * n + j)] += av * b[static_cast<size_t>((p * k + kk) * n + j)];
        }
      }
    }
  }
  return c;
}

TEST(Dot, LargeProductsSplitAcrossCoresMatchLongDouble) {
  const int64_t m = 300, k = 500, n = 200;
  const std::vector<float> a = cast<float>(pattern(m * k)), b = cast<float>(pattern(k * n, 11));
  const std::vector<float> got = run(Shape{m, k}, a, Shape{k, n}, b, matmul());
  const std::vector<long double> want = naive(a, b, 1, m, n, k);
  for (size_t i = 0; i < got.size(); ++i) {
    // |a|, |b| <= 6.5: each product under 43, k of them: f32 error well under 1e-2.
    ASSERT_NEAR(got[i], static_cast<double>(want[i]), 1e-2) << "element " << i;
  }
  const std::vector<float> bt = transpose(b, k, n);
  EXPECT_EQ(run(Shape{m, k}, a, Shape{n, k}, bt, {{1}, {}, {1}, {}}), got)
      << "b transposed gives the same product";
  // a transposed: each block of rows of the product starts at a column of
  // a, the leading dimension staying a's whole row.
  const std::vector<float> at = transpose(a, m, k);
  const std::vector<float> a_t = run(Shape{k, m}, at, Shape{k, n}, b, {{0}, {}, {0}, {}});
  const std::vector<float> both_t = run(Shape{k, m}, at, Shape{n, k}, bt, {{0}, {}, {1}, {}});
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(a_t[i], static_cast<double>(want[i]), 1e-2) << "a transposed, element " << i;
    ASSERT_NEAR(both_t[i], static_cast<double>(want[i]), 1e-2) << "both transposed, element " << i;
  }
}

TEST(Dot, ManySmallBatchesMatchLongDouble) {
  const int64_t batch = 500, m = 8, k = 9, n = 7;
  const std::vector<double> a = pattern(batch * m * k), b = pattern(batch * k * n, 5);
  const std::vector<double> got = run(Shape{batch, m, k}, a, Shape{batch, k, n}, b, {{2}, {0}, {1}, {0}});
  const std::vector<long double> want = naive(a, b, batch, m, n, k);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], static_cast<double>(want[i]), 1e-9) << i;
  std::vector<int16_t> ia, ib;
  for (double v : a) ia.push_back(static_cast<int16_t>(v * 8));
  for (double v : b) ib.push_back(static_cast<int16_t>(v * 8));
  const std::vector<int16_t> igot = run(Shape{batch, m, k}, ia, Shape{batch, k, n}, ib, {{2}, {0}, {1}, {0}});
  const std::vector<long double> iwant = naive(ia, ib, batch, m, n, k);
  for (size_t i = 0; i < igot.size(); ++i) {
    ASSERT_EQ(igot[i], static_cast<int16_t>(static_cast<int64_t>(iwant[i]))) << "s16 batched, element " << i;
  }
}

TEST(Dot, LargeIntegerProductsMatchLongDouble) {
  const int64_t m = 130, k = 700, n = 300;
  std::vector<int64_t> a, b;
  for (double v : pattern(m * k)) a.push_back(static_cast<int64_t>(v * 8));
  for (double v : pattern(k * n, 3)) b.push_back(static_cast<int64_t>(v * 8));
  const std::vector<int64_t> got = run(Shape{m, k}, a, Shape{k, n}, b, matmul());
  const std::vector<long double> want = naive(a, b, 1, m, n, k);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<int64_t>(want[i])) << i;
}

}  // namespace
}  // namespace sluice
