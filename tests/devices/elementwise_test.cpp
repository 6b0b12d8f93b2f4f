// The host backend's elementwise ops, through the public API: values of
// each op family for the dtypes it applies to, integer edge cases, NaN and
// infinity, conversions, f16/bf16 rounding, complex numbers, broadcast
// loads, fused regions with several outputs, donated inputs and large
// (multi-threaded) regions. Reference values are hand-computed; those
// marked "numpy" were printed by tests/devices/elementwise_reference.py.
// At the end, the kernel tables of the three ISAs (sse4, avx2, avx512) are
// run on the same inputs and compared with each other, entry by entry.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/ops/ops.h>
#include "tests/devices/run_traced.h"
#include <sluice/ops/passes/passes.h>

namespace sluice {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr double kInfD = std::numeric_limits<double>::infinity();

template <typename T>
Tensor vec(const std::vector<T>& v) {
  return tensor(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor preds(const std::vector<uint8_t>& v) {
  return tensor_from_bytes(pred({static_cast<int64_t>(v.size())}), v.data());
}
std::vector<half> halves(const std::vector<uint16_t>& bits) {
  std::vector<half> v;
  for (uint16_t b : bits) v.push_back(half{b});
  return v;
}
std::vector<uint16_t> bits_of(const std::vector<half>& v) {
  std::vector<uint16_t> b;
  for (half h : v) b.push_back(h.bits);
  return b;
}
std::vector<uint16_t> bits_of(const std::vector<bfloat16>& v) {
  std::vector<uint16_t> b;
  for (bfloat16 h : v) b.push_back(h.bits);
  return b;
}

using testing::run;
using testing::run1;

// Floats equal as values, NaN equal to NaN, and zeros of the same sign.
template <typename T>
bool same(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}
template <typename T>
::testing::AssertionResult same_floats(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same(got[i], want[i]))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- integers

TEST(ElementwiseIntegers, ArithmeticWraps) {
  EXPECT_EQ(run1([](Expr a, Expr b) { return a + b; }, {vec<int8_t>({127, -128, 100}), vec<int8_t>({1, -1, 100})})
                .to_vector<int8_t>(),
            (std::vector<int8_t>{-128, 127, -56}))
      << "s8 add wraps modulo 256";
  EXPECT_EQ(run1([](Expr a, Expr b) { return a - b; }, {vec<uint8_t>({0, 5}), vec<uint8_t>({1, 10})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255, 251}))
      << "u8 subtract wraps";
  EXPECT_EQ(run1([](Expr a, Expr b) { return a * b; }, {vec<int32_t>({65536, INT32_MIN}), vec<int32_t>({65536, -1})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{0, INT32_MIN}))
      << "s32 multiply wraps, MIN * -1 is MIN";
  EXPECT_EQ(run1([](Expr a, Expr b) { return a * b; }, {vec<uint16_t>({65535}), vec<uint16_t>({65535})})
                .to_vector<uint16_t>(),
            (std::vector<uint16_t>{1}))
      << "u16 0xffff^2 = 0xfffe0001 keeps its low half (no promotion to signed int)";
  EXPECT_EQ(run1([](Expr a, Expr b) { return a + b; }, {vec<int64_t>({INT64_MAX}), vec<int64_t>({1})}).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN}));
  EXPECT_EQ(run1([](Expr a) { return negate(a); }, {vec<int8_t>({-128, 5})}).to_vector<int8_t>(),
            (std::vector<int8_t>{-128, -5}));
  EXPECT_EQ(run1([](Expr a) { return sluice::abs(a); }, {vec<int64_t>({INT64_MIN, -5, 7})}).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN, 5, 7}))
      << "abs(MIN) wraps to MIN";
  EXPECT_EQ(run1([](Expr a) { return sign(a); }, {vec<int32_t>({-7, 0, 9})}).to_vector<int32_t>(),
            (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(run1([](Expr a) { return sign(a); }, {vec<uint8_t>({0, 200})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 1}));
}

TEST(ElementwiseIntegers, QuotientAndRemainderEdgeCases) {
  auto a = vec<int32_t>({7, -7, 7, -7, 5, INT32_MIN, INT32_MIN, 0});
  auto b = vec<int32_t>({2, 2, -2, -2, 0, -1, 1, 3});
  EXPECT_EQ(run1([](Expr x, Expr y) { return quotient(x, y); }, {a, b}).to_vector<int32_t>(),
            (std::vector<int32_t>{3, -3, -3, 3, -1, INT32_MIN, INT32_MIN, 0}))
      << "truncates toward zero; x / 0 = -1; MIN / -1 = MIN";
  EXPECT_EQ(run1([](Expr x, Expr y) { return remainder(x, y); }, {a, b}).to_vector<int32_t>(),
            (std::vector<int32_t>{1, -1, 1, -1, 5, 0, 0, 0}))
      << "sign of the dividend; x rem 0 = x; MIN rem -1 = 0";
  auto ua = vec<uint32_t>({7, 5, 0xffffffffu}), ub = vec<uint32_t>({2, 0, 16});
  EXPECT_EQ(run1([](Expr x, Expr y) { return quotient(x, y); }, {ua, ub}).to_vector<uint32_t>(),
            (std::vector<uint32_t>{3, 0xffffffffu, 0x0fffffffu}))
      << "u32: x / 0 has all bits set";
  EXPECT_EQ(run1([](Expr x, Expr y) { return remainder(x, y); }, {ua, ub}).to_vector<uint32_t>(),
            (std::vector<uint32_t>{1, 5, 15}));
  auto sa = vec<int8_t>({-128, -128, 100}), sb = vec<int8_t>({-1, 0, -7});
  EXPECT_EQ(run1([](Expr x, Expr y) { return quotient(x, y); }, {sa, sb}).to_vector<int8_t>(),
            (std::vector<int8_t>{-128, -1, -14}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return remainder(x, y); }, {sa, sb}).to_vector<int8_t>(),
            (std::vector<int8_t>{0, -128, 2}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return quotient(x, y); }, {vec<int64_t>({INT64_MIN}), vec<int64_t>({-1})})
                .to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN}));
}

TEST(ElementwiseIntegers, PowByRepeatedSquaring) {
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::pow(x, y); },
                 {vec<int32_t>({2, -2, 3, 1, -1, -1, 0, 2, 3}), vec<int32_t>({10, 3, -1, -5, -3, -4, 0, 31, 40})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{1024, -8, 0, 1, -1, 1, 1, INT32_MIN, 689956897}))
      << "negative exponents give 0 except for bases 1 and -1; 2^31 and 3^40 wrap (numpy: 3^40 mod 2^32)";
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::pow(x, y); }, {vec<int8_t>({2}), vec<int8_t>({7})}).to_vector<int8_t>(),
            (std::vector<int8_t>{-128}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::pow(x, y); }, {vec<uint8_t>({3}), vec<uint8_t>({5})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{243}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::pow(x, y); }, {vec<uint64_t>({3}), vec<uint64_t>({40})})
                .to_vector<uint64_t>(),
            (std::vector<uint64_t>{12157665459056928801ull}));
}

TEST(ElementwiseIntegers, ShiftsOutOfRange) {
  EXPECT_EQ(run1([](Expr x, Expr y) { return left_shift(x, y); },
                 {vec<int32_t>({1, 1, 1, -1, 5}), vec<int32_t>({31, 32, -1, 4, 0})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{INT32_MIN, 0, 0, -16, 5}))
      << "amounts < 0 or >= 32 shift everything out";
  EXPECT_EQ(run1([](Expr x, Expr y) { return right_shift(x, y); },
                 {vec<int32_t>({-8, -8, 8, -8, INT32_MIN}), vec<int32_t>({1, 40, 40, -1, 31})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{-4, -1, 0, -1, -1}))
      << "signed right shifts are arithmetic and fill with the sign out of range";
  EXPECT_EQ(run1([](Expr x, Expr y) { return right_shift(x, y); },
                 {vec<uint32_t>({0x80000000u, 0x80000000u, 7}), vec<uint32_t>({31, 32, 1})})
                .to_vector<uint32_t>(),
            (std::vector<uint32_t>{1, 0, 3}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return left_shift(x, y); }, {vec<int8_t>({1, 64}), vec<int8_t>({7, 1})})
                .to_vector<int8_t>(),
            (std::vector<int8_t>{-128, -128}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return right_shift(x, y); }, {vec<int8_t>({-128, -128}), vec<int8_t>({7, 8})})
                .to_vector<int8_t>(),
            (std::vector<int8_t>{-1, -1}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return left_shift(x, y); }, {vec<uint8_t>({255, 1}), vec<uint8_t>({1, 8})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{254, 0}));
}

TEST(ElementwiseIntegers, BitwiseAndCounting) {
  auto a = vec<int16_t>({0x0f0f}), b = vec<int16_t>({0x00ff});
  EXPECT_EQ(run1([](Expr x, Expr y) { return bitwise_and(x, y); }, {a, b}).to_vector<int16_t>(), (std::vector<int16_t>{0x000f}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return bitwise_or(x, y); }, {a, b}).to_vector<int16_t>(), (std::vector<int16_t>{0x0fff}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return bitwise_xor(x, y); }, {a, b}).to_vector<int16_t>(), (std::vector<int16_t>{0x0ff0}));
  EXPECT_EQ(run1([](Expr x) { return bitwise_not(x); }, {a}).to_vector<int16_t>(), (std::vector<int16_t>{-3856}))
      << "~0x0f0f = 0xf0f0";
  EXPECT_EQ(run1([](Expr x) { return count_leading_zeros(x); }, {vec<int32_t>({0, 1, -1, 0x00010000})}).to_vector<int32_t>(),
            (std::vector<int32_t>{32, 31, 0, 15}))
      << "clz(0) is the bit width";
  EXPECT_EQ(run1([](Expr x) { return count_leading_zeros(x); }, {vec<uint8_t>({0, 1, 0x80})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{8, 7, 0}));
  EXPECT_EQ(run1([](Expr x) { return count_leading_zeros(x); }, {vec<int64_t>({1})}).to_vector<int64_t>(),
            (std::vector<int64_t>{63}));
  EXPECT_EQ(run1([](Expr x) { return population_count(x); }, {vec<int16_t>({-1, 0, 0x0101})}).to_vector<int16_t>(),
            (std::vector<int16_t>{16, 0, 2}));
  EXPECT_EQ(run1([](Expr x) { return population_count(x); }, {vec<uint64_t>({~uint64_t{0}})}).to_vector<uint64_t>(),
            (std::vector<uint64_t>{64}));
}

TEST(ElementwiseIntegers, ComparisonsAndSelection) {
  auto a = vec<uint64_t>({~uint64_t{0}, 1, 5}), b = vec<uint64_t>({1, 1, 7});
  EXPECT_EQ(run1([](Expr x, Expr y) { return less(x, y); }, {a, b}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}))
      << "u64 compares unsigned";
  EXPECT_EQ(run1([](Expr x, Expr y) { return greater_equal(x, y); }, {a, b}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::max(x, y); }, {a, b}).to_vector<uint64_t>(),
            (std::vector<uint64_t>{~uint64_t{0}, 1, 7}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return sluice::min(x, y); }, {vec<int8_t>({-128, 3}), vec<int8_t>({127, -3})})
                .to_vector<int8_t>(),
            (std::vector<int8_t>{-128, -3}));
  EXPECT_EQ(run1([](Expr p, Expr x, Expr y) { return select(p, x, y); },
                 {preds({1, 0, 1}), vec<int16_t>({1, 2, 3}), vec<int16_t>({-1, -2, -3})})
                .to_vector<int16_t>(),
            (std::vector<int16_t>{1, -2, 3}));
  EXPECT_EQ(run1([](Expr x, Expr lo, Expr hi) { return clip(x, lo, hi); },
                 {vec<int32_t>({-5, 5, 50}), vec<int32_t>({0, 0, 0}), vec<int32_t>({10, 10, 10})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{0, 5, 10}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return logical_xor(x, y); }, {vec<int32_t>({0, 2, 3}), vec<int32_t>({0, 0, -1})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return logical_and(x, y); }, {preds({1, 1, 0}), preds({1, 0, 0})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return bitwise_or(x, y); }, {preds({1, 0, 0}), preds({0, 0, 1})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 1}));
}

// ---------------------------------------------------------------- floats

TEST(ElementwiseFloats, MinMaxPropagateNan) {
  auto a = vec<float>({kNan, 1, 3}), b = vec<float>({1, kNan, -kInf});
  EXPECT_TRUE(same_floats(run1([](Expr x, Expr y) { return sluice::min(x, y); }, {a, b}).to_vector<float>(),
                          std::vector<float>{kNan, kNan, -kInf}));
  EXPECT_TRUE(same_floats(run1([](Expr x, Expr y) { return sluice::max(x, y); }, {a, b}).to_vector<float>(),
                          std::vector<float>{kNan, kNan, 3}));
  EXPECT_TRUE(same_floats(run1([](Expr x, Expr lo, Expr hi) { return clip(x, lo, hi); },
                               {vec<float>({kNan, -5, 5, 0.5f}), vec<float>({0, 0, 0, 0}), vec<float>({1, 1, 1, 1})})
                              .to_vector<float>(),
                          std::vector<float>{kNan, 0, 1, 0.5f}));
}

TEST(ElementwiseFloats, RoundingFunctions) {
  auto x = vec<float>({0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 0.49999997f, 8388609.0f, -0.3f, kInf, kNan});
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::round(v); }, {x}).to_vector<float>(),
                          std::vector<float>{1, 2, 3, -1, -3, 0, 8388609.0f, -0.0f, kInf, kNan}))
      << "round is half away from zero, keeps the sign of zero";
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::floor(v); }, {vec<float>({-1.5f, 1.5f, -0.0f})}).to_vector<float>(),
                          std::vector<float>{-2, 1, -0.0f}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::ceil(v); }, {vec<double>({-1.5, 1.5, -0.5})}).to_vector<double>(),
                          std::vector<double>{-1, 2, -0.0}));
  std::vector<float> s = run1([](Expr v) { return sign(v); }, {vec<float>({-3, 0, -0.0f, 5, kNan, -kInf})}).to_vector<float>();
  EXPECT_TRUE(same_floats(std::vector<float>{s[0], s[3], s[4], s[5]}, std::vector<float>{-1, 1, kNan, -1}));
  EXPECT_EQ(s[1], 0.0f) << "sign(0)";
  EXPECT_EQ(s[2], 0.0f) << "sign(-0) is a zero";
}

TEST(ElementwiseFloats, NanAndInfinity) {
  auto x = vec<float>({kNan, kInf, -kInf, 0, 1});
  EXPECT_EQ(run1([](Expr v) { return is_nan(v); }, {x}).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(run1([](Expr v) { return is_infinity(v); }, {x}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0, 0}));
  EXPECT_EQ(run1([](Expr v) { return is_infinity(v); }, {vec<double>({-kInfD, 1e308})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(run1([](Expr v) { return is_nan(v); }, {vec<int32_t>({0, -1})}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0}))
      << "integers are never NaN";
  EXPECT_EQ(run1([](Expr v) { return is_infinity(v); }, {preds({1, 0})}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0}));
  auto a = vec<float>({kNan, kNan, kNan, 1}), b = vec<float>({kNan, 1, 1, kNan});
  EXPECT_EQ(run1([](Expr p, Expr q) { return equal(p, q); }, {a, b}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(run1([](Expr p, Expr q) { return not_equal(p, q); }, {a, b}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(run1([](Expr p, Expr q) { return less_equal(p, q); }, {a, b}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(run1([](Expr p, Expr q) { return logical_and(p, q); }, {vec<float>({kNan, 0, -0.0f, 2}), vec<float>({1, 1, 1, 0})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0, 0}))
      << "NaN is nonzero, -0 is zero";
  EXPECT_TRUE(same_floats(run1([](Expr p, Expr q) { return p / q; }, {vec<float>({1, -1, 0}), vec<float>({0, 0, 0})}).to_vector<float>(),
                          std::vector<float>{kInf, -kInf, kNan}));
  EXPECT_TRUE(same_floats(run1([](Expr p, Expr q) { return remainder(p, q); },
                               {vec<float>({-7.5f, 7.5f, 5, kInf, 1}), vec<float>({2, -2, 0, 1, kInf})})
                              .to_vector<float>(),
                          std::vector<float>{-1.5f, 1.5f, kNan, kNan, 1}))
      << "C's fmod: sign of the dividend";
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::sqrt(v); }, {vec<float>({-1, -0.0f, kInf})}).to_vector<float>(),
                          std::vector<float>{kNan, -0.0f, kInf}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::exp(v); }, {vec<float>({-kInf, kInf, kNan, 0, 100, -200})}).to_vector<float>(),
                          std::vector<float>{0, kInf, kNan, 1, kInf, 0}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::log(v); }, {vec<float>({0, -1, kInf, 1})}).to_vector<float>(),
                          std::vector<float>{-kInf, kNan, kInf, 0}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sluice::tanh(v); }, {vec<float>({kInf, -kInf, kNan, -0.0f})}).to_vector<float>(),
                          std::vector<float>{1, -1, kNan, -0.0f}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return sigmoid(v); }, {vec<float>({-kInf, kInf, 0, kNan, -200})}).to_vector<float>(),
                          std::vector<float>{0, 1, 0.5f, kNan, 0}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return erf_inv(v); }, {vec<float>({1, -1, 2, 0, -0.0f, kNan})}).to_vector<float>(),
                          std::vector<float>{kInf, -kInf, kNan, 0, -0.0f, kNan}));
  EXPECT_TRUE(same_floats(run1([](Expr v) { return erf_inv(v); }, {vec<double>({1, -1, -1.5})}).to_vector<double>(),
                          std::vector<double>{kInfD, -kInfD, std::nan("")}));
}

// ---------------------------------------------------------------- conversions

TEST(ElementwiseConvert, FloatToIntegerTruncatesAndSaturates) {
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S32); },
                 {vec<float>({3e9f, -3e9f, kNan, -1.9f, 1.9f, kInf, -kInf, 2147483520.0f, -2147483648.0f})})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{INT32_MAX, INT32_MIN, 0, -1, 1, INT32_MAX, INT32_MIN, 2147483520, INT32_MIN}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::U8); }, {vec<float>({-5, 300, 255.9f, kNan, 0.99f})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 255, 255, 0, 0}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S64); }, {vec<double>({1e19, -1e19, 9223372036854775808.0, -0.5})})
                .to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MAX, INT64_MIN, INT64_MAX, 0}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::U32); }, {vec<double>({4294967295.5, -0.5, 4294967296.0})})
                .to_vector<uint32_t>(),
            (std::vector<uint32_t>{4294967295u, 0, 4294967295u}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S8); }, {vec(halves({0x5a40, 0xbe00}))}).to_vector<int8_t>(),
            (std::vector<int8_t>{127, -1}))
      << "f16 200 saturates, f16 -1.5 truncates";
}

TEST(ElementwiseConvert, ToPredIsNonZero) {
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::Pred); }, {vec<float>({kNan, 0, -0.0f, 0.1f})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::Pred); }, {vec<int32_t>({5, 0, -1})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::Pred); }, {vec<complex64>({{0, 1}, {0, 0}})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::F32); }, {preds({1, 0})}).to_vector<float>(), (std::vector<float>{1, 0}));
}

TEST(ElementwiseConvert, IntegersWrapAndWiden) {
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S8); }, {vec<int64_t>({300, -129})}).to_vector<int8_t>(),
            (std::vector<int8_t>{44, 127}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S16); }, {vec<uint32_t>({65535})}).to_vector<int16_t>(),
            (std::vector<int16_t>{-1}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::F32); }, {vec<uint8_t>({255})}).to_vector<float>(),
            (std::vector<float>{255}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::F64); }, {vec<int64_t>({INT64_MIN})}).to_vector<double>(),
            (std::vector<double>{-9223372036854775808.0}));
}

TEST(ElementwiseConvert, NarrowFloatsRoundOnceToNearestEven) {
  EXPECT_EQ(bits_of(run1([](Expr v) { return as_type(v, DType::F16); }, {vec<int32_t>({2049, 65519, 65520, -70000})})
                        .to_vector<half>()),
            (std::vector<uint16_t>{0x6800, 0x7bff, 0x7c00, 0xfc00}))
      << "2049 ties to 2048, 65519 to the largest f16, 65520 ties up to infinity (numpy)";
  EXPECT_EQ(bits_of(run1([](Expr v) { return as_type(v, DType::F16); }, {vec<double>({1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11})})
                        .to_vector<half>()),
            (std::vector<uint16_t>{0x3c01, 0x3c00}))
      << "just above a tie rounds up, as numpy converting f64 directly: rounding through f32 first would tie";
  EXPECT_EQ(bits_of(run1([](Expr v) { return as_type(v, DType::BF16); },
                         {vec<int64_t>({(int64_t{1} << 40) + (int64_t{1} << 32) + 1, (int64_t{1} << 40) + (int64_t{1} << 32)})})
                        .to_vector<bfloat16>()),
            (std::vector<uint16_t>{0x5381, 0x5380}))
      << "bf16 spacing at 2^40 is 2^33: 2^40 + 2^32 + 1 rounds up, 2^40 + 2^32 ties to even (through f32 both would tie)";
  EXPECT_EQ(bits_of(run1([](Expr v) { return as_type(v, DType::BF16); },
                         {vec<float>({1 + 0x1p-8f, 1 + 3 * 0x1p-9f, kNan, 3.4e38f, -0.0f})})
                        .to_vector<bfloat16>()),
            (std::vector<uint16_t>{0x3f80, 0x3f81, 0x7fc0, 0x7f80, 0x8000}))
      << "1 + 2^-8 ties to 1, 1 + 3 * 2^-9 rounds up, 3.4e38 is above bf16's largest + half ulp";
  EXPECT_TRUE(same_floats(run1([](Expr v) { return as_type(v, DType::F32); }, {vec(halves({0x3c01, 0x7c00, 0x0001}))})
                              .to_vector<float>(),
                          std::vector<float>{1 + 0x1p-10f, kInf, 0x1p-24f}))
      << "f16 widens exactly, subnormals too";
}

TEST(ElementwiseConvert, ComplexAndReal) {
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::F32); }, {vec<complex64>({{1.5f, 2}})}).to_vector<float>(),
            (std::vector<float>{1.5f}))
      << "complex to real keeps the real part";
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::S32); }, {vec<complex128>({{-2.7, 5}})}).to_vector<int32_t>(),
            (std::vector<int32_t>{-2}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::C64); }, {vec<float>({2.5f})}).to_vector<complex64>(),
            (std::vector<complex64>{{2.5f, 0}}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::C64); }, {vec<int32_t>({3})}).to_vector<complex64>(),
            (std::vector<complex64>{{3, 0}}));
  EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::C64); }, {vec<complex128>({{0.1, -0.2}})}).to_vector<complex64>(),
            (std::vector<complex64>{{0.1f, -0.2f}}));
}

TEST(ElementwiseConvert, BitcastKeepsBits) {
  EXPECT_EQ(run1([](Expr v) { return bitcast(v, DType::S32); }, {vec<float>({1, -0.0f})}).to_vector<int32_t>(),
            (std::vector<int32_t>{0x3f800000, INT32_MIN}));
  EXPECT_TRUE(std::isnan(run1([](Expr v) { return bitcast(v, DType::F32); }, {vec<uint32_t>({0x7fc00000u})}).to_vector<float>()[0]));
  EXPECT_EQ(run1([](Expr v) { return bitcast(v, DType::U16); }, {vec(halves({0x3c00, 0x8001}))}).to_vector<uint16_t>(),
            (std::vector<uint16_t>{0x3c00, 0x8001}))
      << "f16 keeps its bits, the negative subnormal too";
  EXPECT_EQ(bits_of(run1([](Expr v) { return bitcast(v, DType::F16); }, {vec<uint16_t>({0x7c00, 0x0001})}).to_vector<half>()),
            (std::vector<uint16_t>{0x7c00, 0x0001}));
  EXPECT_EQ(bits_of(run1([](Expr v) { return bitcast(v, DType::BF16); }, {vec(halves({0x3c00}))}).to_vector<bfloat16>()),
            (std::vector<uint16_t>{0x3c00}));
  EXPECT_EQ(run1([](Expr v) { return bitcast(v, DType::U64); }, {vec<double>({1.0})}).to_vector<uint64_t>(),
            (std::vector<uint64_t>{0x3ff0000000000000ull}));
  EXPECT_EQ(run1([](Expr v) { return bitcast(v, DType::U8); }, {vec<int8_t>({-1})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255}));
}

// ---------------------------------------------------------------- f16 and bf16

TEST(ElementwiseNarrowFloats, EachOpRoundsToTheNarrowType) {
  // numpy: float16(0.1) + float16(0.2) = 0x34cc; float16(exp(float32(1))) = 0x4170;
  // float16(1) / float16(3) = 0x3555; float16(sqrt(float32(2))) = 0x3da8.
  auto a = vec(halves({0x6800, 0x2e66, 0x7bff, 0x3c00, 0x3c00}));  // 2048, 0.1, 65504, 1, 1
  auto b = vec(halves({0x3c00, 0x3266, 0x7bff, 0x4200, 0x4000}));  // 1, 0.2, 65504, 3, 2
  EXPECT_EQ(bits_of(run1([](Expr x, Expr y) { return x + y; }, {a, b}).to_vector<half>()),
            (std::vector<uint16_t>{0x6800, 0x34cc, 0x7c00, 0x4400, 0x4200}))
      << "2048 + 1 ties to 2048; 65504 + 65504 overflows to infinity";
  EXPECT_EQ(bits_of(run1([](Expr x, Expr y) { return x / y; }, {a, b}).to_vector<half>())[3], 0x3555) << "1 / 3";
  EXPECT_EQ(bits_of(run1([](Expr x) { return sluice::exp(x); }, {vec(halves({0x3c00}))}).to_vector<half>()),
            (std::vector<uint16_t>{0x4170}));
  EXPECT_EQ(bits_of(run1([](Expr x) { return sluice::sqrt(x); }, {vec(halves({0x4000}))}).to_vector<half>()),
            (std::vector<uint16_t>{0x3da8}));
  EXPECT_EQ(bits_of(run1([](Expr x, Expr y) { return (x + y) * y; }, {vec(halves({0x6800})), vec(halves({0x3c00}))})
                        .to_vector<half>()),
            (std::vector<uint16_t>{0x6800}))
      << "(2048 + 1) * 1: the sum is rounded to f16 before the product, as unfused ops would";
  EXPECT_EQ(run1([](Expr x, Expr y) { return less(x, y); }, {a, b}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 1, 1}));

  // bf16: 256 + 1 ties to 256; 1 + 2^-8 ties to 1; e rounds to 2.71875 (0x402e).
  auto c = std::vector<bfloat16>{{0x4380}, {0x3f80}}, d = std::vector<bfloat16>{{0x3f80}, {0x3b80}};
  EXPECT_EQ(bits_of(run1([](Expr x, Expr y) { return x + y; }, {vec(c), vec(d)}).to_vector<bfloat16>()),
            (std::vector<uint16_t>{0x4380, 0x3f80}));
  EXPECT_EQ(bits_of(run1([](Expr x) { return sluice::exp(x); }, {vec(std::vector<bfloat16>{{0x3f80}})}).to_vector<bfloat16>()),
            (std::vector<uint16_t>{0x402e}));
}

// ---------------------------------------------------------------- complex

TEST(ElementwiseComplex, Arithmetic) {
  auto a = vec<complex64>({{1, 2}, {0, 0}}), b = vec<complex64>({{3, 4}, {1, 0}});
  EXPECT_EQ(run1([](Expr x, Expr y) { return x * y; }, {a, b}).to_vector<complex64>(),
            (std::vector<complex64>{{-5, 10}, {0, 0}}));
  auto q = run1([](Expr x, Expr y) { return x / y; }, {a, b}).to_vector<complex64>();
  EXPECT_NEAR(q[0].real(), 0.44, 1e-7) << "(1+2i)/(3+4i) = (11+2i)/25";
  EXPECT_NEAR(q[0].imag(), 0.08, 1e-7);
  EXPECT_EQ(run1([](Expr x, Expr y) { return x - y; }, {a, b}).to_vector<complex64>(),
            (std::vector<complex64>{{-2, -2}, {-1, 0}}));
  EXPECT_EQ(run1([](Expr x) { return conjugate(x); }, {a}).to_vector<complex64>(), (std::vector<complex64>{{1, -2}, {0, -0.0f}}));
  EXPECT_EQ(run1([](Expr x) { return real(x); }, {a}).to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(run1([](Expr x) { return imag(x); }, {a}).to_vector<float>(), (std::vector<float>{2, 0}));
  EXPECT_EQ(run1([](Expr x) { return sluice::abs(x); }, {vec<complex64>({{3, 4}})}).to_vector<float>(),
            (std::vector<float>{5}));
  EXPECT_EQ(run1([](Expr x, Expr y) { return equal(x, y); }, {a, vec<complex64>({{1, 2}, {0, 1}})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0}));
  auto s = run1([](Expr x) { return sign(x); }, {vec<complex128>({{3, 4}, {0, 0}})}).to_vector<complex128>();
  EXPECT_NEAR(s[0].real(), 0.6, 1e-15) << "z / |z|";
  EXPECT_NEAR(s[0].imag(), 0.8, 1e-15);
  EXPECT_EQ(s[1], complex128(0, 0)) << "sign(0) = 0";
}

TEST(ElementwiseComplex, Functions) {
  // numpy: exp(i pi) = -1 + 1.2246467991473532e-16i; log(-1) = i pi;
  // sqrt(-4) = 2i; i^2 = -1; tanh(1 + i) = 1.0839233273386946 + 0.2717525853195118i.
  const double pi = 3.141592653589793;
  auto e = run1([](Expr x) { return sluice::exp(x); }, {vec<complex128>({{0, pi}})}).to_vector<complex128>()[0];
  EXPECT_NEAR(e.real(), -1, 1e-15);
  EXPECT_NEAR(e.imag(), 1.2246467991473532e-16, 1e-30);
  auto l = run1([](Expr x) { return sluice::log(x); }, {vec<complex128>({{-1, 0}})}).to_vector<complex128>()[0];
  EXPECT_NEAR(l.imag(), pi, 1e-15);
  EXPECT_EQ(l.real(), 0);
  auto r = run1([](Expr x) { return sluice::sqrt(x); }, {vec<complex64>({{-4, 0}})}).to_vector<complex64>()[0];
  EXPECT_EQ(r, complex64(0, 2));
  auto p = run1([](Expr x, Expr y) { return sluice::pow(x, y); }, {vec<complex128>({{0, 1}, {0, 0}}), vec<complex128>({{2, 0}, {0, 0}})})
               .to_vector<complex128>();
  EXPECT_NEAR(p[0].real(), -1, 1e-15);
  EXPECT_NEAR(p[0].imag(), 0, 1e-15);
  EXPECT_EQ(p[1], complex128(1, 0)) << "0^0 = 1, as numpy";
  auto t = run1([](Expr x) { return sluice::tanh(x); }, {vec<complex128>({{1, 1}})}).to_vector<complex128>()[0];
  EXPECT_NEAR(t.real(), 1.0839233273386946, 1e-15);
  EXPECT_NEAR(t.imag(), 0.2717525853195118, 1e-15);
  // e^z - 1 at z = (1 + i) 1e-10: real part 1e-10 + O(1e-30), imaginary
  // part e^x sin y = 1e-10 + 1e-20: computed as exp(z) - 1, both would lose
  // six digits.
  auto m1 = run1([](Expr x) { return sluice::expm1(x); }, {vec<complex128>({{1e-10, 1e-10}})}).to_vector<complex128>()[0];
  EXPECT_NEAR(m1.real(), 1e-10, 1e-24) << "expm1 does not cancel near 0";
  EXPECT_NEAR(m1.imag(), 1.0000000001e-10, 1e-24);
}

// ---------------------------------------------------------------- broadcasts and regions

TEST(ElementwiseBroadcast, LoadsOfEveryShape) {
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  Tensor x43 = tensor(x, Shape{4, 3});
  // A row along the last axis: x[i][j] + r[j].
  EXPECT_EQ(run1([](Expr a, Expr r) { return a + r; }, {x43, tensor<float>({100, 200, 300})}).to_vector<float>(),
            (std::vector<float>{100, 201, 302, 103, 204, 305, 106, 207, 308, 109, 210, 311}));
  // A column: x[i][j] * c[i].
  EXPECT_EQ(run1([](Expr a, Expr c) { return a * c; }, {x43, tensor(std::vector<float>{1, -1, 2, 0}, Shape{4, 1})})
                .to_vector<float>(),
            (std::vector<float>{0, 1, 2, -3, -4, -5, 12, 14, 16, 0, 0, 0}));
  // A scalar, and a weak scalar constant.
  EXPECT_EQ(run1([](Expr a, Expr s) { return a - s + 0.5; }, {x43, scalar(10.0f)}).to_vector<float>()[11], 1.5f);
  // A middle axis: [2][1][3] repeated along axis 1 of [2][4][3].
  std::vector<float> m{1, 2, 3, 4, 5, 6};
  std::vector<float> got = run1([](Expr a, Expr b) { return a + b; },
                                {tensor(std::vector<float>(24, 0.0f), Shape{2, 4, 3}), tensor(m, Shape{2, 1, 3})})
                               .to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(got[static_cast<size_t>((i * 4 + j) * 3 + k)], m[static_cast<size_t>(i * 3 + k)]) << i << "," << j << "," << k;
}

TEST(ElementwiseBroadcast, LongRowsAndNarrowTypes) {
  // A row longer than a tile is gathered tile by tile rather than kept.
  const int64_t rows = 40, cols = 1000;
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) row[static_cast<size_t>(j)] = static_cast<float>(j) * 0.5f;
  std::vector<float> got = run1([](Expr a, Expr r) { return a + r; },
                                {tensor(std::vector<float>(static_cast<size_t>(rows * cols), 1.0f), Shape{rows, cols}),
                                 tensor(row, Shape{cols})})
                               .to_vector<float>();
  for (int64_t i = 0; i < rows * cols; i += 37) EXPECT_EQ(got[static_cast<size_t>(i)], 1.0f + row[static_cast<size_t>(i % cols)]) << i;
  // An f16 row and an f16 scalar: widened once when loaded.
  std::vector<uint16_t> out = bits_of(run1([](Expr a, Expr r, Expr s) { return a * r + s; },
                                           {tensor(halves({0x4000, 0x4000, 0x4000, 0x4000}), Shape{2, 2}),
                                            vec(halves({0x3c00, 0x3800})), tensor(halves({0x3c00}), Shape{})})
                                          .to_vector<half>());
  EXPECT_EQ(out, (std::vector<uint16_t>{0x4200, 0x4000, 0x4200, 0x4000})) << "2 * [1, 0.5] + 1 = [3, 2]";
}

TEST(ElementwiseBroadcast, AxesInAnyOrder) {
  // Not made by the builders (they want increasing axes), but a region
  // loads any broadcast: out[i][j] = x[j][i].
  Expr x = parameter(0, f32({3, 2}));
  Attrs attrs;
  attrs.axes = {1, 0};
  Expr b(Node::make(Op::Broadcast, f32({2, 3}), {x.node()}, attrs));
  Executable e = compile(Function({f32({3, 2})}, {b + 1.0}));
  EXPECT_EQ(e.run({tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, Shape{3, 2})})[0].to_vector<float>(),
            (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST(ElementwiseRegion, SeveralOutputsInOneRegion) {
  Function f = trace({f32({5}), f32({5})}, [](Expr a, Expr b) {
    Expr s = a + b;
    return tuple(s, s * b, sluice::exp(a) - s, less(s, b));
  });
  int fused = 0;
  for (const passes::WorkUnit& step : passes::schedule(f)) fused += step.fused ? 1 : 0;
  EXPECT_EQ(fused, 1) << "the four outputs come from one fused region";
  std::vector<float> a{0, 1, -1, 2, 0.5f}, b{1, 1, 1, -2, 4};
  auto out = compile(f).run({vec(a), vec(b)});
  ASSERT_EQ(out.size(), 4u);
  std::vector<float> s = out[0].to_vector<float>(), sb = out[1].to_vector<float>(), es = out[2].to_vector<float>();
  std::vector<uint8_t> lt = out[3].to_vector<uint8_t>();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(s[i], a[i] + b[i]) << i;
    EXPECT_EQ(sb[i], (a[i] + b[i]) * b[i]) << i;
    EXPECT_NEAR(es[i], std::exp(double{a[i]}) - (a[i] + b[i]), 1e-6 * std::exp(double{a[i]})) << i;
    EXPECT_EQ(lt[i], a[i] + b[i] < b[i] ? 1 : 0) << i;
  }
}

TEST(ElementwiseRegion, FoldedScaleAndShiftRoundAsSeparateOps) {
  // tanh(x * 3 + 0.1), exp(-x), sin(1 - x) and exp(x * 2) next to x * 2 as
  // an output of its own: each product and sum is rounded to f32 before
  // the function sees it, whether or not it was folded into the function.
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i) * 0.0137f);
  x.push_back(-0.0f);
  auto out = run([](Expr v) { return tuple(sluice::tanh(v * 3.0 + 0.1), sluice::exp(-v), sluice::sin(1.0 - v), v * 2.0,
                                           sluice::exp(v * 2.0)); },
                 {vec(x)});
  auto separate = [&](auto fn, std::vector<float> in) { return run1([fn](Expr v) { return fn(v); }, {vec(in)}).template to_vector<float>(); };
  std::vector<float> t_in, n_in, s_in, d_in;
  for (float v : x) {
    float p = v * 3.0f;  // rounded, then added
    t_in.push_back(p + 0.1f);
    n_in.push_back(-v);
    s_in.push_back(1.0f - v);
    d_in.push_back(v * 2.0f);
  }
  EXPECT_TRUE(same_floats(out[0].to_vector<float>(), separate([](Expr v) { return sluice::tanh(v); }, t_in)));
  EXPECT_TRUE(same_floats(out[1].to_vector<float>(), separate([](Expr v) { return sluice::exp(v); }, n_in)));
  EXPECT_TRUE(same_floats(out[2].to_vector<float>(), separate([](Expr v) { return sluice::sin(v); }, s_in)));
  EXPECT_TRUE(same_floats(out[3].to_vector<float>(), d_in));
  EXPECT_TRUE(same_floats(out[4].to_vector<float>(), separate([](Expr v) { return sluice::exp(v); }, d_in)));
}

TEST(ElementwiseRegion, LargeRegionSplitAcrossThreads) {
  // Not a multiple of the tile: the last tile is short.
  const int64_t n = 300007;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.25f - 100.0f;
    y[static_cast<size_t>(i)] = static_cast<float>(i % 7) + 1.0f;
  }
  auto out = run([](Expr a, Expr b) { return tuple((a * 3.0 - b) / (b + 0.5), sluice::max(a, b), as_type(a, DType::S32)); },
                 {vec(x), vec(y)});
  std::vector<float> q = out[0].to_vector<float>(), m = out[1].to_vector<float>();
  std::vector<int32_t> c = out[2].to_vector<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    auto k = static_cast<size_t>(i);
    ASSERT_EQ(q[k], (x[k] * 3.0f - y[k]) / (y[k] + 0.5f)) << i;
    ASSERT_EQ(m[k], std::max(x[k], y[k])) << i;
    ASSERT_EQ(c[k], static_cast<int32_t>(x[k])) << i;
  }
}

TEST(ElementwiseRegion, DonatedInputIsReadBeforeItIsOverwritten) {
  // The output may reuse x's buffer; both outputs read x after one of them
  // could have been written over it.
  const int64_t n = 70001;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i) * 1e-3f;
  Executable e = compile(trace({f32({n})}, [](Expr v) { return tuple(v * 2.0, v + 1.0); }));
  Tensor arg = vec(x);
  auto out = e.run({arg}, {.donate = {0}});
  std::vector<float> d = out[0].to_vector<float>(), p = out[1].to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(d[static_cast<size_t>(i)], x[static_cast<size_t>(i)] * 2.0f) << i;
    ASSERT_EQ(p[static_cast<size_t>(i)], x[static_cast<size_t>(i)] + 1.0f) << i;
  }
}

TEST(ElementwiseRegion, MissingKernelFailsAtCompileTime) {
  // add of pred is not an arithmetic the kernels define; the builders never
  // make it, a hand-made node reaches the backend and is refused there.
  Expr p = parameter(0, pred({4}));
  Expr sum(Node::make(Op::Add, pred({4}), {p.node(), p.node()}));
  try {
    compile(Function({pred({4})}, {sum}));
    ADD_FAILURE() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("add is not implemented for pred"), std::string::npos) << e.what();
  }
}


// ---------------------------------------------------------------- kernel tables of each ISA

// Inputs in compute representation (isa.h): f16/bf16 as f32 values exact
// in the narrow type, pred as 0/1. Floats are specials, then values of
// magnitude 1e-3 to 1e3 (complex: no specials, so that an FMA or its
// absence cannot turn a cancellation into a different NaN or infinity).
std::vector<uint8_t> samples(DType t, size_t n, uint32_t seed) {
  uint64_t state = 0x9e3779b97f4a7c15ull * (seed + 1);
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  auto uniform = [&] { return static_cast<double>(next()) / 9007199254740992.0; };
  auto bounded = [&] { return (next() & 1 ? -1.0 : 1.0) * std::pow(10.0, uniform() * 6 - 3); };
  const double specials[] = {0.0, -0.0, 1.0, -1.0, kInfD, -kInfD, std::nan(""), 1e-40, 0.5, 2.0};
  DType c = cpu::compute_dtype(t);
  std::vector<uint8_t> out(n * static_cast<size_t>(dtype_size(c)));
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = out.data() + i * static_cast<size_t>(dtype_size(c));
    double v = i < std::size(specials) ? specials[i] : bounded();
    if (t == DType::Pred) {
      p[0] = static_cast<uint8_t>(next() & 1);
    } else if (is_integer(t)) {
      uint64_t r = next() * 0x2545f4914f6cdd1dull;
      std::memcpy(p, &r, static_cast<size_t>(dtype_size(t)));
    } else if (t == DType::F16 || t == DType::BF16) {
      float f = t == DType::F16 ? f16_to_float(float_to_f16(static_cast<float>(v))) : bf16_to_float(float_to_bf16(static_cast<float>(v)));
      std::memcpy(p, &f, 4);
    } else if (t == DType::F32) {
      auto f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else if (t == DType::F64) {
      std::memcpy(p, &v, 8);
    } else if (t == DType::C64) {
      complex64 z(static_cast<float>(bounded()), static_cast<float>(bounded()));
      std::memcpy(p, &z, 8);
    } else {
      complex128 z(bounded(), bounded());
      std::memcpy(p, &z, 16);
    }
  }
  return out;
}

template <typename F>
int64_t ulps(F a, F b) {
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  auto ordered = [](F f) {
    I i;
    std::memcpy(&i, &f, sizeof(F));
    return i < 0 ? static_cast<int64_t>(std::numeric_limits<I>::min() - i) : static_cast<int64_t>(i);
  };
  return std::abs(ordered(a) - ordered(b));
}

// Outputs of two tables agree: integers exactly, floats within 4 ulp (the
// vector math of each ISA differs in its last bits), complex parts within
// 8 ulp of the larger part.
template <typename F>
bool floats_agree(F a, F b, F scale) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  F ulp = std::nextafter(std::fabs(scale), std::numeric_limits<F>::infinity()) - std::fabs(scale);
  return ulps(a, b) <= 4 || std::fabs(a - b) <= 8 * ulp;
}
std::string disagreement(DType out, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t size = static_cast<size_t>(dtype_size(cpu::compute_dtype(out)));
  for (size_t i = 0; i < a.size() / size; ++i) {
    const uint8_t* x = a.data() + i * size;
    const uint8_t* y = b.data() + i * size;
    bool ok;
    if (out == DType::F32 || out == DType::F16 || out == DType::BF16) {
      float p, q;
      std::memcpy(&p, x, 4);
      std::memcpy(&q, y, 4);
      ok = floats_agree(p, q, p);
    } else if (out == DType::F64) {
      double p, q;
      std::memcpy(&p, x, 8);
      std::memcpy(&q, y, 8);
      ok = floats_agree(p, q, p);
    } else if (out == DType::C64 || out == DType::C128) {
      auto parts = [&](auto zero) {
        using F = decltype(zero);
        F p[2], q[2];
        std::memcpy(p, x, sizeof(p));
        std::memcpy(q, y, sizeof(q));
        F scale = std::max(std::fabs(p[0]), std::fabs(p[1]));
        return floats_agree(p[0], q[0], scale) && floats_agree(p[1], q[1], scale);
      };
      ok = out == DType::C64 ? parts(0.0f) : parts(0.0);
    } else {
      ok = std::memcmp(x, y, size) == 0;
    }
    if (!ok) return "element " + std::to_string(i);
  }
  return "";
}

TEST(ElementwiseKernelTables, EveryIsaAgreesWithTheOthers) {
  std::vector<const cpu::KernelTable*> tables;
  for (cpu::Isa isa : {cpu::Isa::Sse4, cpu::Isa::Avx2, cpu::Isa::Avx512}) {
    if (const cpu::KernelTable* t = cpu::kernel_table(isa)) tables.push_back(t);
  }
  ASSERT_FALSE(tables.empty()) << "sse4 is the x86-64 baseline here";
  const size_t n = 1003;  // not a multiple of any vector width
  int compared = 0;
  auto compare = [&](cpu::Kernel (*entry)(const cpu::KernelTable&), const std::string& what, DType in, DType out,
                     std::vector<DType> operands) {
    std::vector<std::vector<uint8_t>> args;
    for (size_t k = 0; k < operands.size(); ++k) args.push_back(samples(operands[k], n, static_cast<uint32_t>(k)));
    const void* a[3] = {};
    for (size_t k = 0; k < args.size(); ++k) a[k] = args[k].data();
    std::vector<std::vector<uint8_t>> results;
    for (const cpu::KernelTable* t : tables) {
      cpu::Kernel k = entry(*t);
      ASSERT_NE(k, nullptr) << what << " " << dtype_name(in) << " is missing from " << cpu::isa_name(t->isa);
      results.emplace_back(n * static_cast<size_t>(dtype_size(cpu::compute_dtype(out))));
      k(results.back().data(), a[0], a[1], a[2], static_cast<int64_t>(n));
    }
    for (size_t i = 1; i < results.size(); ++i) {
      std::string where = disagreement(out, results[0], results[i]);
      EXPECT_EQ(where, "") << what << " of " << dtype_name(in) << ": " << cpu::isa_name(tables[0]->isa) << " and "
                           << cpu::isa_name(tables[i]->isa) << " differ at " << where;
    }
    ++compared;
  };
  static Op op;
  static DType from, to;
  for (int o = 0; o < kOpCount; ++o) {
    op = static_cast<Op>(o);
    for (int d = 0; d < kDTypeCount; ++d) {
      from = static_cast<DType>(d);
      if (tables.back()->op[o][d] == nullptr) continue;
      std::vector<DType> operands(static_cast<size_t>(op_arity(op)), from);
      if (op == Op::Select) operands[0] = DType::Pred;
      compare([](const cpu::KernelTable& t) { return t.op[static_cast<int>(op)][static_cast<int>(from)]; },
              std::string(op_name(op)), from, op_result_dtype(op, from), operands);
    }
  }
  for (int f = 0; f < kDTypeCount; ++f) {
    for (int t = 0; t < kDTypeCount; ++t) {
      from = static_cast<DType>(f);
      to = static_cast<DType>(t);
      compare([](const cpu::KernelTable& k) { return k.as_type[static_cast<int>(from)][static_cast<int>(to)]; },
              "as_type to " + std::string(dtype_name(to)), from, to, {from});
      if (tables.back()->bitcast[f][t] == nullptr) continue;
      compare([](const cpu::KernelTable& k) { return k.bitcast[static_cast<int>(from)][static_cast<int>(to)]; },
              "bitcast to " + std::string(dtype_name(to)), from, to, {from});
    }
  }
  for (DType narrow : {DType::F16, DType::BF16}) {
    from = narrow;
    compare([](const cpu::KernelTable& k) { return k.round[static_cast<int>(from)]; }, "round", from, from, {DType::F32});
  }
  EXPECT_GT(compared, 600) << "every entry of the widest table was compared";
}

// What ops/ops.h promises across tables exactly: IEEE's correctly rounded
// operations of real floats (+ - * / sqrt), the exact ones (kExact), and
// comparisons give the same bits on every table; only the vector math
// (transcendental functions) may differ, as checked above.
TEST(ElementwiseKernelTables, CorrectlyRoundedEntriesAreTheSameBitsOnEveryIsa) {
  std::vector<const cpu::KernelTable*> tables;
  for (cpu::Isa isa : {cpu::Isa::Sse4, cpu::Isa::Avx2, cpu::Isa::Avx512})
    if (const cpu::KernelTable* t = cpu::kernel_table(isa)) tables.push_back(t);
  const size_t n = 1003;
  int compared = 0;
  for (int o = 0; o < kOpCount; ++o) {
    const Op op = static_cast<Op>(o);
    const bool rounded_once =
        op == Op::Add || op == Op::Subtract || op == Op::Multiply || op == Op::Divide || op == Op::Sqrt;
    if (!rounded_once && !op_has(op, kExact) && !is_comparison(op)) continue;
    for (DType d : {DType::F32, DType::F64}) {
      if (tables.front()->op[o][static_cast<int>(d)] == nullptr) continue;
      std::vector<std::vector<uint8_t>> args;
      const void* a[3] = {};
      for (int k = 0; k < op_arity(op); ++k) {
        args.push_back(samples(op == Op::Select && k == 0 ? DType::Pred : d, n, static_cast<uint32_t>(k)));
        a[k] = args.back().data();
      }
      std::vector<std::vector<uint8_t>> results;
      for (const cpu::KernelTable* t : tables) {
        results.emplace_back(n * 8);
        t->op[o][static_cast<int>(d)](results.back().data(), a[0], a[1], a[2], static_cast<int64_t>(n));
      }
      for (size_t i = 1; i < results.size(); ++i)
        EXPECT_EQ(results[i], results[0])
            << op_name(op) << " of " << dtype_name(d) << ": " << cpu::isa_name(tables[i]->isa)
            << " differs from " << cpu::isa_name(tables[0]->isa);
      ++compared;
    }
  }
  EXPECT_GE(compared, 30);
}

TEST(ElementwiseKernelTables, AffineEntriesRoundLikeSeparateOps) {
  // op(x * s + t) from an affine entry equals op applied to x * s + t
  // computed as two rounded f32/f64 ops, bit for bit, on every ISA.
  for (cpu::Isa isa : {cpu::Isa::Sse4, cpu::Isa::Avx2, cpu::Isa::Avx512}) {
    const cpu::KernelTable* table = cpu::kernel_table(isa);
    if (table == nullptr) continue;
    int checked = 0;
    for (int o = 0; o < kOpCount; ++o) {
      for (DType d : {DType::F32, DType::F64}) {
        cpu::Kernel affine = table->affine[o][static_cast<int>(d)];
        if (affine == nullptr) continue;
        const size_t n = 203;
        std::vector<uint8_t> x = samples(d, n, 7), want(n * 8), got(n * 8), moved(n * 8);
        const float sf = -1.75f, tf = 0.3f;
        const double sd = -1.75, td = 0.3;
        for (size_t i = 0; i < n; ++i) {
          if (d == DType::F32) {
            float v;
            std::memcpy(&v, x.data() + 4 * i, 4);
            float p = v * sf;
            v = p + tf;
            std::memcpy(moved.data() + 4 * i, &v, 4);
          } else {
            double v;
            std::memcpy(&v, x.data() + 8 * i, 8);
            double p = v * sd;
            v = p + td;
            std::memcpy(moved.data() + 8 * i, &v, 8);
          }
        }
        const void* s = d == DType::F32 ? static_cast<const void*>(&sf) : &sd;
        const void* t = d == DType::F32 ? static_cast<const void*>(&tf) : &td;
        affine(got.data(), x.data(), s, t, static_cast<int64_t>(n));
        table->op[o][static_cast<int>(d)](want.data(), moved.data(), nullptr, nullptr, static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          bool ok;
          if (d == DType::F32) {
            float a, b;
            std::memcpy(&a, got.data() + 4 * i, 4);
            std::memcpy(&b, want.data() + 4 * i, 4);
            ok = same(a, b);
          } else {
            double a, b;
            std::memcpy(&a, got.data() + 8 * i, 8);
            std::memcpy(&b, want.data() + 8 * i, 8);
            ok = same(a, b);
          }
          ASSERT_TRUE(ok) << op_name(static_cast<Op>(o)) << " " << dtype_name(d) << " on " << cpu::isa_name(isa)
                          << ": element " << i;
        }
        ++checked;
      }
    }
    EXPECT_GE(checked, 20) << cpu::isa_name(isa) << ": the unary math of f32 and f64 has affine entries";
  }
}

}  // namespace
}  // namespace sluice
