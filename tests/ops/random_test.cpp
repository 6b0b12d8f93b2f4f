// Random numbers: threefry2x32 against the known-answer vectors published
// with Random123, keys, splits and draws (of an odd count, which pads the
// counters) against JAX's values for the same seed
// (tests/ops/random_reference.py prints them), and the distributions.

#include <sluice/ops/random.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <sluice/devices/backend.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

// A traced value computed on the host.
template <typename T>
std::vector<T> values_of(const Expr& e) {
  const Tensor t = compile(trace({}, [&] { return e; })).run({})[0];
  return t.template to_vector<T>();
}
std::vector<uint32_t> u32s(const Expr& e) { return values_of<uint32_t>(e); }

Expr u32_key(uint32_t k0, uint32_t k1) { return constant(std::vector<uint32_t>{k0, k1}, Shape{2}); }
Expr u32_scalar_vector(uint32_t v) { return constant(std::vector<uint32_t>{v}, Shape{1}); }

// Random123's kat_vectors for threefry2x32 with 20 rounds: counter, key, result.
TEST(Random, Threefry2x32MatchesTheKnownAnswers) {
  struct Kat {
    uint32_t ctr0, ctr1, key0, key1, out0, out1;
  };
  const Kat kats[] = {{0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
                      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
                      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0}};
  for (const Kat& k : kats) {
    Tuple y = threefry2x32(u32_key(k.key0, k.key1), u32_scalar_vector(k.ctr0), u32_scalar_vector(k.ctr1));
    EXPECT_EQ(u32s(y[0])[0], k.out0) << std::hex << "counter " << k.ctr0 << " " << k.ctr1;
    EXPECT_EQ(u32s(y[1])[0], k.out1) << std::hex << "counter " << k.ctr0 << " " << k.ctr1;
  }
}

TEST(Random, KeysAndSplitsAreJaxs) {
  EXPECT_EQ(u32s(random_key(42)), (std::vector<uint32_t>{0, 42}));
  EXPECT_EQ(u32s(random_key((uint64_t{3} << 32) | 7)), (std::vector<uint32_t>{3, 7}));
  // jax.random.split(jax.random.PRNGKey(0)), classic threefry.
  EXPECT_EQ(u32s(random_split(random_key(0), 2)), (std::vector<uint32_t>{4146024105u, 967050713u, 2718843009u, 1272950319u}));
  EXPECT_EQ(u32s(random_key_at(random_split(random_key(0), 2), 1)), (std::vector<uint32_t>{2718843009u, 1272950319u}));
}

// Printed by random_reference.py (JAX 0.10, classic threefry).
TEST(Random, DrawsAreJaxs) {
  const std::vector<float> uniform_f32 = {-1.6780723333358765f, -0.9965379238128662f, 1.2522958517074585f,
                                          -0.08862030506134033f, 1.377087116241455f};
  const std::vector<float> normal_f32 = {-0.8265807032585144f, -0.31624752283096313f, 1.8003449440002441f,
                                         0.85201495885849f, 0.40538841485977173f};
  const std::vector<double> uniform_f64 = {0.8342512933196171, 0.24674643884055047, 0.2697568739959031,
                                           0.8313179953694956, 0.21012609285178452};
  const std::vector<double> normal_f64 = {0.18600443975337544, -0.1762958148874507, 0.43968956175074825,
                                          -1.3058778501309836, 1.7010691982957895};
  // The same bits; u * (max - min) + min may round once (fused) or twice.
  std::vector<float> u32 = values_of<float>(random_uniform(random_key(7), Shape{5}, DType::F32, -2, 3));
  EXPECT_EQ(values_of<double>(random_uniform(random_key(7), Shape{5}, DType::F64)), uniform_f64);
  // erf_inv is a polynomial approximation on each side: a few ulps apart.
  std::vector<float> z32 = values_of<float>(random_normal(random_key(3), Shape{5}));
  std::vector<double> z64 = values_of<double>(random_normal(random_key(3), Shape{5}, DType::F64));
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(u32[i], uniform_f32[i], 2.5e-7 * (1 + std::abs(uniform_f32[i]))) << "f32 uniform draw " << i;
    EXPECT_NEAR(z32[i], normal_f32[i], 2e-6 * (1 + std::abs(normal_f32[i]))) << "f32 draw " << i;
    EXPECT_NEAR(z64[i], normal_f64[i], 1e-13 * (1 + std::abs(normal_f64[i]))) << "f64 draw " << i;
  }
}

TEST(Random, UniformIsInRangeEvenAndReproducible) {
  const Expr key = random_key(7);
  std::vector<float> u = values_of<float>(random_uniform(key, Shape{100000}, DType::F32, -2, 3));
  EXPECT_EQ(u, values_of<float>(random_uniform(key, Shape{100000}, DType::F32, -2, 3))) << "a pure function of the key";
  EXPECT_NE(u, values_of<float>(random_uniform(random_key(8), Shape{100000}, DType::F32, -2, 3)));
  for (float v : u) ASSERT_TRUE(v >= -2 && v < 3) << v;
  const double mean = std::accumulate(u.begin(), u.end(), 0.0) / static_cast<double>(u.size());
  EXPECT_NEAR(mean, 0.5, 0.02) << "the mean of U(-2, 3); its standard error is 0.0046";
  std::vector<double> d = values_of<double>(random_uniform(key, Shape{1000, 10}, DType::F64));
  for (double v : d) ASSERT_TRUE(v >= 0 && v < 1) << v;
  for (DType t : {DType::F16, DType::BF16}) {
    Expr half = random_uniform(key, Shape{4096}, t);
    std::vector<float> h = values_of<float>(as_type(half, DType::F32));
    for (float v : h) ASSERT_TRUE(v >= 0 && v < 1) << dtype_name(t) << " " << v;
  }
}

// f16 and bf16 draws are JAX's too: 16 random bits per f16 value, 8 per bf16
// one (JAX 0.10.2, random_reference.py). They used to be the top bits of a
// 32-bit word each: 0.140625 where JAX gives 0.5234375 for the key below.
TEST(Random, HalfPrecisionDrawsAreJaxs) {
  auto halves = [](const Expr& e) { return values_of<float>(as_type(e, DType::F32)); };
  EXPECT_EQ(halves(random_uniform(u32_key(4290683981u, 2994753282u), Shape{}, DType::BF16)),
            std::vector<float>{0.5234375f});
  EXPECT_EQ(halves(random_uniform(random_key(7), Shape{5}, DType::F16)),
            (std::vector<float>{0.591796875f, 0.224609375f, 0.8486328125f, 0.42578125f, 0.7421875f}));
  EXPECT_EQ(halves(random_uniform(random_key(7), Shape{5}, DType::BF16)),
            (std::vector<float>{0.7421875f, 0.15625f, 0.625f, 0.0390625f, 0.7421875f}));
  EXPECT_EQ(halves(random_uniform(random_key(7), Shape{7}, DType::F16, -2, 3)),
            (std::vector<float>{0.958984375f, -0.876953125f, -0.1787109375f, -0.8525390625f, 1.7109375f, 0.265625f,
                                -1.2431640625f}));
  // Normal draws go through erf_inv, computed in f32 and rounded: within a unit in the last place.
  const std::vector<float> f16 = halves(random_normal(random_key(3), Shape{5}, DType::F16));
  const std::vector<float> bf16 = halves(random_normal(random_key(3), Shape{5}, DType::BF16));
  const std::vector<float> jax_f16 = {0.85888671875f, -0.7109375f, 0.5625f, -2.0390625f, 0.708984375f};
  const std::vector<float> jax_bf16 = {-0.55078125f, -0.82421875f, -2.109375f, -0.1123046875f, 0.142578125f};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(f16[i], jax_f16[i], std::abs(jax_f16[i]) * 0x1p-10) << "f16 draw " << i;
    EXPECT_NEAR(bf16[i], jax_bf16[i], std::abs(jax_bf16[i]) * 0x1p-7) << "bf16 draw " << i;
  }
}

// A draw that rounds up to max is moved below it: in f32 over [1e6, 1e6 + 1)
// about 3% of draws used to equal 1e6 + 1, in bf16 over [10, 11) likewise.
TEST(Random, UniformNeverReachesItsUpperBound) {
  const std::vector<float> f = values_of<float>(random_uniform(random_key(11), Shape{100000}, DType::F32, 1e6, 1e6 + 1));
  EXPECT_EQ(std::count_if(f.begin(), f.end(), [](float v) { return v >= 1e6f + 1; }), 0);
  EXPECT_EQ(std::count_if(f.begin(), f.end(), [](float v) { return v < 1e6f; }), 0);
  const std::vector<float> b =
      values_of<float>(as_type(random_uniform(random_key(11), Shape{100000}, DType::BF16, 10, 11), DType::F32));
  EXPECT_EQ(std::count_if(b.begin(), b.end(), [](float v) { return v >= 11 || v < 10; }), 0);
  const std::vector<double> d = values_of<double>(random_uniform(random_key(11), Shape{100000}, DType::F64, -1, -0.0));
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](double v) { return v >= 0 || v < -1; }), 0);
}

// Normal draws in f16 and bf16 are finite: the uniform under them is open at
// -1 in their own precision (taken in f32, its bound rounded to -1, and
// erf_inv(-1) is -inf: 106 of 100,000 f16 and 808 bf16 draws were -inf).
TEST(Random, HalfPrecisionNormalDrawsAreFinite) {
  for (DType t : {DType::F16, DType::BF16}) {
    const std::vector<float> z =
        values_of<float>(as_type(random_normal(u32_key(0, 20240611), Shape{100000}, t), DType::F32));
    EXPECT_EQ(std::count_if(z.begin(), z.end(), [](float v) { return !std::isfinite(v); }), 0) << dtype_name(t);
  }
}

TEST(Random, NormalHasItsMeanAndDeviation) {
  for (DType t : {DType::F32, DType::F64}) {
    std::vector<double> z = values_of<double>(as_type(random_normal(random_key(3), Shape{200000}, t, 1.5, 2.0), DType::F64));
    double mean = 0, var = 0;
    for (double v : z) mean += v / static_cast<double>(z.size());
    for (double v : z) var += (v - mean) * (v - mean) / static_cast<double>(z.size());
    EXPECT_NEAR(mean, 1.5, 0.02) << dtype_name(t) << ": standard error 0.0045";
    EXPECT_NEAR(std::sqrt(var), 2.0, 0.02) << dtype_name(t);
    for (double v : z) ASSERT_TRUE(std::isfinite(v)) << dtype_name(t);
  }
}

TEST(Random, AStageCarriesItsKey) {
  // Each chunk adds noise from one half of the key and carries the other on.
  Function step = trace({f32({4}), u32({2})}, [](Expr x, Expr key) {
    Expr keys = random_split(key, 2);
    return tuple(x + random_uniform(random_key_at(keys, 0), x.shape()), random_key_at(keys, 1));
  });
  Executable exe = compile(step);
  std::vector<Tensor> a = exe.run({zeros(f32({4})), tensor<uint32_t>({0, 1})});
  std::vector<Tensor> b = exe.run({zeros(f32({4})), a[1]});
  EXPECT_NE(a[0].to_vector<float>(), b[0].to_vector<float>()) << "a new key each chunk";
  EXPECT_EQ(a[0].to_vector<float>(), exe.run({zeros(f32({4})), tensor<uint32_t>({0, 1})})[0].to_vector<float>());
}

TEST(Random, ArgumentsAreChecked) {
  EXPECT_THROW_WITH(random_uniform(constant(std::vector<int32_t>{0, 1}, Shape{2}), Shape{3}), TypeError,
                    "random_uniform", "key", "u32[2]", "s32[2]");
  EXPECT_THROW_WITH(random_normal(constant(std::vector<uint32_t>{0, 1, 2}, Shape{3}), Shape{3}), ShapeError,
                    "random_normal", "key", "u32[3]");
  EXPECT_THROW_WITH(random_uniform(random_key(1), Shape{3}, DType::S32), TypeError, "random_uniform", "dtype", "s32");
  EXPECT_THROW_WITH(random_split(random_key(1), 0), ShapeError, "random_split", "n", "0");
  EXPECT_THROW_WITH(random_key_at(random_split(random_key(1), 2), 2), ShapeError, "random_key_at", "2");
}

}  // namespace
}  // namespace sluice
