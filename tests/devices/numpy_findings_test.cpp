// Wrong results that a randomized comparison against numpy and mpmath found
// (issue 13), each reproduced through the public API on the host backend,
// and the behaviours decided there (complex division by zero, argmax with
// NaNs, min of signed zeros, arithmetic on pred). Reference values were
// printed by numpy 1.24 (/usr/bin/python3) unless marked mpmath, where
// numpy itself overflows.

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/ops/ops.h>
#include "tests/devices/run_traced.h"

namespace sluice {
namespace {

template <typename T>
Tensor vec(const std::vector<T>& v) {
  return tensor(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor preds(const std::vector<uint8_t>& v, Shape shape) { return tensor_from_bytes(Spec{DType::Pred, std::move(shape)}, v.data()); }

using testing::run;
using testing::run1;

// ---------------------------------------------------------------- empty results with broadcast operands

TEST(NumpyFindings, EmptyElementwiseResultWithBroadcastOperand) {
  // Each used to divide by the zero-sized axis when planning the broadcast
  // load, killing the process with SIGFPE.
  Tensor e = run1([](Expr a, Expr b) { return add(a, b); }, {vec<float>({}), tensor(std::vector<float>{2}, Shape{})});
  EXPECT_EQ(e.spec(), f32({0}));
  Tensor m = run1([](Expr a, Expr b) { return a + b; },
                  {tensor(std::vector<float>{}, Shape{0, 3}), vec<float>({1, 2, 3})});
  EXPECT_EQ(m.spec(), f32({0, 3}));
  Tensor x = run1([](Expr a) { return exp(broadcast(a, Shape{0})); }, {tensor(std::vector<float>{1}, Shape{})});
  EXPECT_EQ(x.spec(), f32({0}));
  // The same with constants, which constant folding evaluates at compile time.
  Tensor c = compile(trace({}, [] { return exp(broadcast(constant(1.0, DType::F32), Shape{0, 4})); })).run({}).at(0);
  EXPECT_EQ(c.spec(), f32({0, 4}));
}

// ---------------------------------------------------------------- pred outputs hold 0 or 1

TEST(NumpyFindings, MinOfPredIsTrueWhereNothingIsFalse) {
  EXPECT_EQ(run1([](Expr p) { return reduce_min(p); }, {preds({}, Shape{0})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1}))
      << "the min of no truth values is true (numpy: np.min of an empty bool array has no identity; all() is True)";
  EXPECT_EQ(run1([](Expr p) { return reduce_min(p, {.axes = {1}}); }, {preds({}, Shape{2, 0})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(run1([](Expr p) { return reduce_max(p, {.axes = {1}}); }, {preds({}, Shape{2, 0})}).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(run1([](Expr p) { return reduce_min(p, {.axes = {0}}); }, {preds({1, 0, 1, 1}, Shape{2, 2})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0}));
  // Padding holds min's identity, which for pred is true, not the byte 255.
  EXPECT_EQ(run1([](Expr p) { return window_min(p, {2}, {.padding = {{1, 1}}}); }, {preds({1, 0, 1}, Shape{3})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(run1([](Expr p) { return window_min(p, {3}, {.padding = {{2, 2}}}); }, {preds({1}, Shape{1})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(run1([](Expr p) { return window_max(p, {3}, {.padding = {{2, 2}}}); }, {preds({0}, Shape{1})})
                .to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 0, 0}));
}

// ---------------------------------------------------------------- bitcast keeps every bit

// f16 NaNs: signalling (quiet bit 0x200 clear) with payloads, a quiet one
// with a payload, negative ones; then non-NaN specials for good measure.
const std::vector<uint16_t> kF16Bits = {0x7d00, 0x7c01, 0xfd55, 0x7e01, 0xffff, 0x7c00, 0x0001, 0x8000, 0x3c00};
// bf16 NaNs likewise (quiet bit 0x40).
const std::vector<uint16_t> kBf16Bits = {0x7f81, 0x7fa0, 0xff81, 0x7fc1, 0xffff, 0x7f80, 0x0001, 0x8000, 0x3f80};

TEST(NumpyFindings, BitcastThroughNarrowFloatsKeepsEveryBit) {
  for (DType narrow : {DType::F16, DType::BF16}) {
    const std::vector<uint16_t>& bits = narrow == DType::F16 ? kF16Bits : kBf16Bits;
    // Through a kernel: u16 -> narrow -> u16 in one region, and u16 -> narrow as an output.
    EXPECT_EQ(run1([&](Expr v) { return bitcast(bitcast(v, narrow), DType::U16); }, {vec(bits)}).to_vector<uint16_t>(),
              bits)
        << dtype_name(narrow);
    Tensor stored = run1([&](Expr v) { return bitcast(v, narrow); }, {vec(bits)});
    EXPECT_EQ(run1([](Expr v) { return bitcast(v, DType::S16); }, {stored}).to_vector<int16_t>(),
              std::vector<int16_t>(bits.begin(), bits.end()))
        << dtype_name(narrow) << " stored, then read back by a second computation";
    // Folded: the input is a constant, evaluated at compile time.
    Tensor folded = compile(trace({}, [&] {
                      return bitcast(bitcast(constant(bits, Shape{static_cast<int64_t>(bits.size())}), narrow),
                                     DType::U16);
                    })).run({}).at(0);
    EXPECT_EQ(folded.to_vector<uint16_t>(), bits) << dtype_name(narrow) << " folded";
  }
}

TEST(NumpyFindings, NarrowFloatConversionsOfEveryIsaKeepNanBits) {
  // The kernels the dispatch does not pick on this CPU (SLUICE_ISA caps it
  // once per process), called through each ISA's table.
  const size_t n = 37;  // whole vectors and a tail for every width
  int tables = 0;
  for (cpu::Isa isa : {cpu::Isa::Sse4, cpu::Isa::Avx2, cpu::Isa::Avx512}) {
    const cpu::KernelTable* t = cpu::kernel_table(isa);
    if (t == nullptr) continue;
    ++tables;
    for (DType narrow : {DType::F16, DType::BF16}) {
      const std::vector<uint16_t>& base = narrow == DType::F16 ? kF16Bits : kBf16Bits;
      std::vector<uint16_t> bits(n);
      for (size_t i = 0; i < n; ++i) bits[i] = base[i % base.size()];
      const int d = static_cast<int>(narrow), u16 = static_cast<int>(DType::U16);
      std::vector<float> wide(n);
      std::vector<uint16_t> back(n);
      t->widen[d](wide.data(), bits.data(), nullptr, nullptr, static_cast<int64_t>(n));
      t->narrow[d](back.data(), wide.data(), nullptr, nullptr, static_cast<int64_t>(n));
      EXPECT_EQ(back, bits) << cpu::isa_name(isa) << " widen then narrow of " << dtype_name(narrow);
      t->bitcast[u16][d](wide.data(), bits.data(), nullptr, nullptr, static_cast<int64_t>(n));
      t->bitcast[d][u16](back.data(), wide.data(), nullptr, nullptr, static_cast<int64_t>(n));
      EXPECT_EQ(back, bits) << cpu::isa_name(isa) << " bitcast u16 -> " << dtype_name(narrow) << " -> u16";
    }
  }
  EXPECT_GE(tables, 1);
}

// ---------------------------------------------------------------- u64 dynamic starts

TEST(NumpyFindings, HugeUnsignedStartsClampAsLargeValues) {
  const Tensor x = vec<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (uint64_t start : {uint64_t{1} << 63, ~uint64_t{0}, uint64_t{11}}) {
    const Tensor s = tensor(std::vector<uint64_t>{start}, Shape{});
    EXPECT_EQ(run1([](Expr v, Expr i) { return slice(v, std::vector<Expr>{i}, {3}); }, {x, s}).to_vector<int32_t>(),
              (std::vector<int32_t>{7, 8, 9}))
        << "slice at " << start;
    EXPECT_EQ(run1([](Expr v, Expr i) {
                return put_slice(v, std::vector<Expr>{i}, broadcast(constant(-1.0, DType::S32), Shape{2}));
              },
                   {x, s})
                  .to_vector<int32_t>(),
              (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, -1, -1}))
        << "put_slice at " << start;
  }
}

// ---------------------------------------------------------------- complex functions and division

template <typename F>
::testing::AssertionResult near(std::complex<F> got, std::complex<F> want, F rel) {
  auto close = [&](F g, F w) {
    if (std::isnan(w)) return std::isnan(g);
    if (std::isinf(w)) return g == w;
    return std::fabs(g - w) <= rel * std::fabs(w);
  };
  if (close(got.real(), want.real()) && close(got.imag(), want.imag())) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got (" << got.real() << ", " << got.imag() << "), want (" << want.real()
                                       << ", " << want.imag() << ")";
}

template <typename C, typename F>
C unary_at(F&& f, C z) {
  return run1(f, {tensor(std::vector<C>{z}, Shape{})}).template to_vector<C>()[0];
}
template <typename C>
C divide_at(C a, C b) {
  return run1([](Expr x, Expr y) { return x / y; }, {tensor(std::vector<C>{a}, Shape{}), tensor(std::vector<C>{b}, Shape{})})
      .template to_vector<C>()[0];
}

TEST(NumpyFindings, ComplexFunctionsDoNotOverflowInIntermediates) {
  // numpy: log1p(complex64(1.7+1.7e38j)) = 88.02886+1.5707964j.
  EXPECT_TRUE(near(unary_at([](Expr z) { return log1p(z); }, complex64(1.7f, 1.7e38f)), complex64(88.02886f, 1.5707964f),
                   2e-7f));
  EXPECT_TRUE(near(unary_at([](Expr z) { return log1p(z); }, complex64(-3e38f, 1.0f)),
                   complex64(88.59685f, 3.1415927f), 2e-7f));
  // Near 0 the cancelling-free formula still holds: log1p(1e-10 + 1e-10j).
  EXPECT_TRUE(near(unary_at([](Expr z) { return log1p(z); }, complex128(1e-10, 1e-10)),
                   complex128(1.0000000000e-10, 9.999999999e-11), 1e-9));
  // mpmath (numpy's expm1 overflows here too): expm1(90.93 - 3.19e-6j) in
  // f32 has real part e^90.93 ~ 2.8e39 (inf in f32) and a finite imaginary part.
  const float x = 90.93f, y = -3.19e-6f;
  const auto imag = static_cast<float>(std::exp(static_cast<double>(x)) * std::sin(static_cast<double>(y)));
  EXPECT_TRUE(near(unary_at([](Expr z) { return expm1(z); }, complex64(x, y)),
                   complex64(std::numeric_limits<float>::infinity(), imag), 1e-6f));
  EXPECT_TRUE(std::isfinite(imag));
  EXPECT_TRUE(near(unary_at([](Expr z) { return expm1(z); }, complex64(100.0f, 0.0f)),
                   complex64(std::numeric_limits<float>::infinity(), 0.0f), 0.0f))
      << "a real argument keeps imaginary part 0, not inf * 0";
  // Division of a huge real by a complex whose parts' ratio is subnormal
  // (Smith's ratio 1e-315 keeps 31 bits): 1e300 / (1e15 + 1e-300j) =
  // 1e285 - 1e-30j, the imaginary part -(1e300 * 1e-300) / 1e30.
  const double im = -(1e300 * 1e-300) / 1e15 / 1e15;
  EXPECT_TRUE(near(divide_at(complex128(1e300, 0), complex128(1e15, 1e-300)), complex128(1e285, im), 1e-15));
  EXPECT_TRUE(near(divide_at(complex128(0, 1e300), complex128(1e-300, 1e15)), complex128(1e285, -im), 1e-15));
  EXPECT_TRUE(near(divide_at(complex64(3, 4), complex64(1, 2)), complex64(2.2f, -0.4f), 1e-6f)) << "plain values";
}

TEST(NumpyFindings, SignOfComplexHasUnitModulus) {
  const float r = std::sqrt(0.5f);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(near(unary_at([](Expr z) { return sign(z); }, complex64(tiny, tiny)), complex64(r, r), 1e-7f));
  EXPECT_TRUE(near(unary_at([](Expr z) { return sign(z); }, complex64(-3 * tiny, 4 * tiny)), complex64(-0.6f, 0.8f), 1e-6f));
  const double tiny_d = std::numeric_limits<double>::denorm_min();
  EXPECT_TRUE(near(unary_at([](Expr z) { return sign(z); }, complex128(tiny_d, tiny_d)),
                   complex128(std::sqrt(0.5), std::sqrt(0.5)), 1e-15));
  EXPECT_TRUE(near(unary_at([](Expr z) { return sign(z); }, complex64(0, 0)), complex64(0, 0), 0.0f));
  EXPECT_TRUE(near(unary_at([](Expr z) { return sign(z); }, complex64(3e37f, -4e37f)), complex64(0.6f, -0.8f), 1e-6f));
}

TEST(NumpyFindings, PowOfTheLargestFloatToTheFirstPower) {
  EXPECT_EQ(run1([](Expr a, Expr b) { return pow(a, b); }, {vec<double>({DBL_MAX, -DBL_MAX, 2.0}), vec<double>({1, 1, 1})})
                .to_vector<double>(),
            (std::vector<double>{DBL_MAX, -DBL_MAX, 2.0}));
  EXPECT_EQ(run1([](Expr a, Expr b) { return pow(a, b); }, {vec<float>({FLT_MAX, -FLT_MAX}), vec<float>({1, 1})})
                .to_vector<float>(),
            (std::vector<float>{FLT_MAX, -FLT_MAX}));
}

// ---------------------------------------------------------------- decided behaviours (ops/ops.h)

TEST(NumpyFindings, ComplexDivisionByZeroIsInfiniteAsNumpy) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  // numpy: (1+0j)/0 = inf+nanj, (1+1j)/0 = inf+infj, (-1+0j)/0 = -inf+nanj, 0/0 = nan+nanj.
  EXPECT_TRUE(near(divide_at(complex128(1, 0), complex128(0, 0)), complex128(inf, nan), 0.0));
  EXPECT_TRUE(near(divide_at(complex128(1, 1), complex128(0, 0)), complex128(inf, inf), 0.0));
  EXPECT_TRUE(near(divide_at(complex128(-1, 0), complex128(-0.0, 0)), complex128(-inf, nan), 0.0));
  EXPECT_TRUE(near(divide_at(complex128(0, 0), complex128(0, 0)), complex128(nan, nan), 0.0));
  EXPECT_TRUE(near(divide_at(complex128(0, 1), complex128(0, 0)), complex128(nan, inf), 0.0))
      << "a part 0: NaN";
  EXPECT_TRUE(near(divide_at(complex128(0, -1), complex128(-0.0, -0.0)), complex128(nan, -inf), 0.0))
      << "|0|";
  EXPECT_TRUE(near(divide_at(complex64(2, -3), complex64(0, 0)),
                   complex64(std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()), 0.0f));
}

TEST(NumpyFindings, ComplexFunctionsOfARealArgumentKeepImaginaryZero) {
  const double inf = std::numeric_limits<double>::infinity();
  // C99's cexp(+inf + 0i) = +inf + 0i; numpy's expm1(1000+0j) is inf+nanj.
  EXPECT_TRUE(near(unary_at([](Expr z) { return expm1(z); }, complex128(1000, 0)), complex128(inf, 0), 0.0));
  EXPECT_TRUE(near(unary_at([](Expr z) { return exp(z); }, complex128(1000, 0)), complex128(inf, 0), 0.0));
  EXPECT_TRUE(near(unary_at([](Expr z) { return expm1(z); }, complex64(100.0f, 0.0f)),
                   complex64(std::numeric_limits<float>::infinity(), 0.0f), 0.0f));
}

TEST(NumpyFindings, IndexedPutOfPredKeepsPred) {
  // Nothing is added, so nothing computes in u8: pred in, pred out.
  const Tensor put = run1(
      [](Expr x, Expr i, Expr u) { return indexed_put(x, i, u); },
      {preds({0, 1, 0}, Shape{3}), tensor(std::vector<int32_t>{2, 1}, Shape{2, 1}), preds({1, 0}, Shape{2})});
  EXPECT_EQ(put.spec(), pred({3}));
  EXPECT_EQ(put.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  const Tensor added = run1(
      [](Expr x, Expr i, Expr u) { return indexed_add(x, i, u); },
      {preds({0, 1, 0}, Shape{3}), tensor(std::vector<int32_t>{1, 1}, Shape{2, 1}), preds({1, 1}, Shape{2})});
  EXPECT_EQ(added.spec(), u8({3})) << "indexed_add of pred adds in u8, as pred + pred";
  EXPECT_EQ(added.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 3, 0}));
}

TEST(NumpyFindings, ArgmaxWithNansTakesTheFirstOrLastNan) {
  const float nan = std::nanf("");
  const Tensor x = vec<float>({1, nan, 3, nan, 3});
  auto arg = [&](bool max, TieBreak tb) {
    return run1([&](Expr v) { return max ? argmax(v, {.tie_break = tb}) : argmin(v, {.tie_break = tb}); }, {x})
        .to_vector<int64_t>()[0];
  };
  EXPECT_EQ(arg(true, TieBreak::Low), 1) << "numpy: argmax([1, nan, 3, nan, 3]) = 1";
  EXPECT_EQ(arg(true, TieBreak::High), 3) << "NaN is the maximum; its last occurrence with tie_break high";
  EXPECT_EQ(arg(false, TieBreak::Low), 1) << "numpy: argmin also stops at the first NaN";
  EXPECT_EQ(arg(false, TieBreak::High), 3);
  // Along an axis, rows and columns (the two kernels' loops).
  const Tensor m = tensor(std::vector<double>{nan, 2, nan, nan, 5, 1}, Shape{3, 2});
  EXPECT_EQ(run1([](Expr v) { return argmax(v, {.axis = 0, .tie_break = TieBreak::High}); }, {m}).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(run1([](Expr v) { return argmax(v, {.axis = 1, .tie_break = TieBreak::High}); }, {m}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 0}));
}

TEST(NumpyFindings, MinAndMaxOfEqualOperandsReturnTheSecondAsNumpy) {
  // numpy: minimum(-0.0, 0.0) = 0.0, minimum(0.0, -0.0) = -0.0; maximum alike.
  const size_t n = 37;  // whole vectors and a tail
  for (DType t : {DType::F32, DType::F64}) {
    auto signs = [&](auto f, double a, double b) {
      const std::vector<double> r =
          run1([&](Expr p, Expr q) { return as_type(f(as_type(p, t), as_type(q, t)), DType::F64); },
               {vec(std::vector<double>(n, a)), vec(std::vector<double>(n, b))})
              .template to_vector<double>();
      size_t negative = 0;
      for (double v : r) negative += std::signbit(v) ? 1 : 0;
      return negative;
    };
    auto mn = [](Expr p, Expr q) { return min(p, q); };
    auto mx = [](Expr p, Expr q) { return max(p, q); };
    EXPECT_EQ(signs(mn, -0.0, 0.0), 0u) << dtype_name(t) << ": min(-0.0, 0.0) is 0.0";
    EXPECT_EQ(signs(mn, 0.0, -0.0), n) << dtype_name(t) << ": min(0.0, -0.0) is -0.0";
    EXPECT_EQ(signs(mx, -0.0, 0.0), 0u) << dtype_name(t) << ": max(-0.0, 0.0) is 0.0";
    EXPECT_EQ(signs(mx, 0.0, -0.0), n) << dtype_name(t) << ": max(0.0, -0.0) is -0.0";
  }
  // Both orders in one function: not merged as one node (min is not
  // commutative in the catalogue), so each keeps its own answer.
  const std::vector<Tensor> both = run([](Expr a, Expr b) { return tuple(min(a, b), min(b, a)); },
                                       {vec<float>({-0.0f}), vec<float>({0.0f})});
  EXPECT_FALSE(std::signbit(both[0].to_vector<float>()[0]));
  EXPECT_TRUE(std::signbit(both[1].to_vector<float>()[0]));
}

TEST(NumpyFindings, ArithmeticOnPredComputesInU8AsNx) {
  const Tensor p = preds({1, 1, 0}, Shape{3});
  const Tensor q = preds({1, 0, 0}, Shape{3});
  Tensor sum = run1([](Expr a, Expr b) { return a + b; }, {p, q});
  EXPECT_EQ(sum.spec(), u8({3}));
  EXPECT_EQ(sum.to_vector<uint8_t>(), (std::vector<uint8_t>{2, 1, 0})) << "true + true = 2";
  Tensor plus_one = run1([](Expr a) { return a + 1; }, {p});
  EXPECT_EQ(plus_one.spec(), u8({3})) << "a weak scalar takes pred's arithmetic type, u8";
  EXPECT_EQ(plus_one.to_vector<uint8_t>(), (std::vector<uint8_t>{2, 2, 1}));
  EXPECT_EQ(run1([](Expr a) { return -a; }, {p}).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 255, 0}));
  Tensor inverted = run1([](Expr a) { return ~a; }, {p});
  EXPECT_EQ(inverted.spec(), pred({3})) << "bitwise_not of pred is the logical not";
  EXPECT_EQ(inverted.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  Tensor both = run1([](Expr a, Expr b) { return a & b; }, {p, q});
  EXPECT_EQ(both.spec(), pred({3})) << "bitwise ops keep pred";
  EXPECT_EQ(both.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 0}));
}

}  // namespace
}  // namespace sluice
