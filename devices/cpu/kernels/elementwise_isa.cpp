// Arithmetic, bitwise, comparison, logical and selection kernels of one ISA
// (compiled once per ISA, see simd_vec.h), and this ISA's table getter.
// Every kernel is a plain loop the compiler vectorizes under the ISA's flags.
// Integer semantics follow Nx/XLA: overflow wraps, division by zero and
// out-of-range shifts have defined results (see each functor).

#include <limits>

#include <sluice/devices/cpu/kernels/simd_vec.h>

namespace sluice::cpu::SLUICE_ISA {
namespace {

// Integer arithmetic wraps: it is done in an unsigned type at least as wide
// as unsigned int (so that narrow types do not promote to signed int).
template <typename T>
using Wrap = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct Add {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return T(Wrap<T>(a) + Wrap<T>(b)); else return a + b;
  }
};
struct Subtract {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return T(Wrap<T>(a) - Wrap<T>(b)); else return a - b;
  }
};
struct Multiply {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return T(Wrap<T>(a) * Wrap<T>(b)); else return a * b;
  }
};
struct Divide {
  template <typename T> T operator()(T a, T b) const { return a / b; }
};
// Truncates toward zero; x / 0 is -1 (all bits set); MIN / -1 wraps to MIN.
struct Quotient {
  template <typename T> T operator()(T a, T b) const {
    if (b == 0) return T(~T(0));
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(Wrap<T>(0) - Wrap<T>(a));
    }
    return T(a / b);
  }
};
// Takes the dividend's sign; x rem 0 is x; MIN rem -1 is 0.
struct IntRemainder {
  template <typename T> T operator()(T a, T b) const {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return 0;
    }
    return T(a % b);
  }
};
// Repeated squaring, wrapping; a negative exponent gives 0 except for bases
// 1 and -1.
struct IntPow {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return a == 1 ? T(1) : a == -1 ? T((b & 1) ? -1 : 1) : T(0);
    }
    Wrap<T> r = 1, base = Wrap<T>(a);
    for (auto e = std::make_unsigned_t<T>(b); e != 0; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return T(r);
  }
};
// min/max of floats propagate NaN.
struct Min {
  template <typename T> T operator()(T a, T b) const {
    T r = a < b ? a : b;
    if constexpr (kIsFloat<T>) {
      r = b != b ? b : r;
      r = a != a ? a : r;
    }
    return r;
  }
};
struct Max {
  template <typename T> T operator()(T a, T b) const {
    T r = a > b ? a : b;
    if constexpr (kIsFloat<T>) {
      r = b != b ? b : r;
      r = a != a ? a : r;
    }
    return r;
  }
};
struct Clip {
  template <typename T> T operator()(T x, T lo, T hi) const { return Min{}(Max{}(x, lo), hi); }
};
struct BitwiseAnd {
  template <typename T> T operator()(T a, T b) const { return T(a & b); }
};
struct BitwiseOr {
  template <typename T> T operator()(T a, T b) const { return T(a | b); }
};
struct BitwiseXor {
  template <typename T> T operator()(T a, T b) const { return T(a ^ b); }
};
struct BitwiseNot {
  template <typename T> T operator()(T a) const { return T(~a); }
};
struct PredNot {
  uint8_t operator()(uint8_t a) const { return uint8_t(a ^ 1u); }
};
// Shift amounts outside [0, bits) shift everything out: 0, or the sign
// fill for a right shift of a signed value.
template <typename T> inline bool shift_in_range(T b) {
  return std::make_unsigned_t<T>(b) < sizeof(T) * 8;
}
struct LeftShift {
  template <typename T> T operator()(T a, T b) const {
    bool ok = shift_in_range(b);
    T r = T(Wrap<T>(a) << (ok ? unsigned(b) : 0u));
    return ok ? r : T(0);
  }
};
struct RightShift {
  template <typename T> T operator()(T a, T b) const {
    bool ok = shift_in_range(b);
    T r = T(a >> (ok ? unsigned(b) : 0u));
    T fill = std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
    return ok ? r : fill;
  }
};

struct Equal {
  template <typename T> uint8_t operator()(T a, T b) const { return a == b; }
};
struct NotEqual {
  template <typename T> uint8_t operator()(T a, T b) const { return a != b; }
};
struct Less {
  template <typename T> uint8_t operator()(T a, T b) const { return a < b; }
};
struct LessEqual {
  template <typename T> uint8_t operator()(T a, T b) const { return a <= b; }
};
struct Greater {
  template <typename T> uint8_t operator()(T a, T b) const { return a > b; }
};
struct GreaterEqual {
  template <typename T> uint8_t operator()(T a, T b) const { return a >= b; }
};
struct LogicalAnd {
  template <typename T> uint8_t operator()(T a, T b) const { return (a != 0) & (b != 0); }
};
struct LogicalOr {
  template <typename T> uint8_t operator()(T a, T b) const { return (a != 0) | (b != 0); }
};
struct LogicalXor {
  template <typename T> uint8_t operator()(T a, T b) const { return (a != 0) ^ (b != 0); }
};

struct Negate {
  template <typename T> T operator()(T a) const {
    if constexpr (kIsInt<T>) return T(Wrap<T>(0) - Wrap<T>(a)); else return -a;
  }
};
// abs(MIN) wraps to MIN, as negate does.
struct Abs {
  template <typename T> T operator()(T a) const {
    if constexpr (kIsFloat<T>) return __builtin_copysign(a, T(1));
    else if constexpr (std::is_signed_v<T>) return a < 0 ? Negate{}(a) : a;
    else return a;
  }
};
// sign of a float keeps NaN and the sign of zero.
struct Sign {
  template <typename T> T operator()(T a) const {
    if constexpr (kIsFloat<T>) return a > 0 ? T(1) : a < 0 ? T(-1) : a;
    else if constexpr (std::is_signed_v<T>) return T((a > 0) - (a < 0));
    else return T(a != 0);
  }
};
struct Identity {
  template <typename T> T operator()(T a) const { return a; }
};
struct Zero {
  template <typename T> T operator()(T) const { return T(0); }
};
struct False {
  template <typename T> uint8_t operator()(T) const { return 0; }
};
struct Floor {
  template <typename T> T operator()(T a) const { return __builtin_floor(a); }
  float operator()(float a) const { return __builtin_floorf(a); }
};
struct Ceil {
  template <typename T> T operator()(T a) const { return __builtin_ceil(a); }
  float operator()(float a) const { return __builtin_ceilf(a); }
};
struct Trunc {
  double operator()(double a) const { return __builtin_trunc(a); }
  float operator()(float a) const { return __builtin_truncf(a); }
};
// Half away from zero: the fraction left by truncation decides.
struct Round {
  template <typename T> T operator()(T a) const {
    T t = Trunc{}(a);
    T frac = Abs{}(a - t);
    return frac >= T(0.5) ? t + __builtin_copysign(T(1), a) : t;
  }
};
struct IsNan {
  template <typename T> uint8_t operator()(T a) const { return a != a; }
};
struct IsInfinity {
  template <typename T> uint8_t operator()(T a) const {
    return Abs{}(a) == std::numeric_limits<T>::infinity();
  }
};
struct CountLeadingZeros {
  template <typename T> T operator()(T a) const {
    constexpr int bits = sizeof(T) * 8;
    auto u = static_cast<uint64_t>(std::make_unsigned_t<T>(a));
    return T(u == 0 ? bits : __builtin_clzll(u) - (64 - bits));
  }
};
struct PopulationCount {
  template <typename T> T operator()(T a) const {
    return T(__builtin_popcountll(static_cast<uint64_t>(std::make_unsigned_t<T>(a))));
  }
};
template <typename F> struct ToComplex {
  Cx<F> operator()(F a) const { return {a, F(0)}; }
};

template <typename T>
void select_kernel(void* out, const void* p, const void* a, const void* b, int64_t n) {
  T* __restrict o = static_cast<T*>(out);
  const uint8_t* __restrict s = static_cast<const uint8_t*>(p);
  const T* __restrict x = static_cast<const T*>(a);
  const T* __restrict y = static_cast<const T*>(b);
  for (int64_t i = 0; i < n; ++i) o[i] = s[i] ? x[i] : y[i];
}

// ---- complex arithmetic on interleaved parts

// add/subtract/negate act on each part alike: the real loop over 2n parts.
template <typename F, typename Fn>
void parts_binary(void* out, const void* a, const void* b, const void*, int64_t n) {
  loop2<F, F, Fn>(out, a, b, 2 * n);
}
template <typename F, typename Fn>
void parts_unary(void* out, const void* a, const void*, const void*, int64_t n) {
  loop1<F, F, Fn>(out, a, 2 * n);
}
struct CxMultiply {
  template <typename F> Cx<F> operator()(Cx<F> a, Cx<F> b) const {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
};
// Smith's algorithm: scales by the larger part of the divisor, so that
// squaring it cannot overflow. Where the ratio r of the parts is subnormal
// (or 0) it has lost bits: x r is computed as (x d) / c then, or as
// (x / c) d where x d would be subnormal too. A zero divisor gives a / |0|
// part by part (inf or NaN), as numpy and C99 do: (1 + 0i) / 0 = inf + NaN i.
template <typename F>
inline F times_ratio(F x, F d, F c, F r) {
  if (Abs{}(r) >= std::numeric_limits<F>::min()) return x * r;
  F p = x * d;
  return Abs{}(p) >= std::numeric_limits<F>::min() ? p / c : x / c * d;
}
struct CxDivide {
  template <typename F> Cx<F> operator()(Cx<F> a, Cx<F> b) const {
    if (Abs{}(b.re) >= Abs{}(b.im)) {
      if (b.re == 0) return {a.re / Abs{}(b.re), a.im / Abs{}(b.re)};  // b.im is 0 as well
      F r = b.im / b.re, den = b.re + b.im * r;
      return {(a.re + times_ratio(a.im, b.im, b.re, r)) / den, (a.im - times_ratio(a.re, b.im, b.re, r)) / den};
    }
    F r = b.re / b.im, den = b.re * r + b.im;
    return {(times_ratio(a.re, b.re, b.im, r) + a.im) / den, (times_ratio(a.im, b.re, b.im, r) - a.re) / den};
  }
};
struct CxConjugate {
  template <typename F> Cx<F> operator()(Cx<F> a) const { return {a.re, -a.im}; }
};
struct CxReal {
  template <typename F> F operator()(Cx<F> a) const { return a.re; }
};
struct CxImag {
  template <typename F> F operator()(Cx<F> a) const { return a.im; }
};
struct CxEqual {
  template <typename F> uint8_t operator()(Cx<F> a, Cx<F> b) const { return (a.re == b.re) & (a.im == b.im); }
};
struct CxNotEqual {
  template <typename F> uint8_t operator()(Cx<F> a, Cx<F> b) const { return (a.re != b.re) | (a.im != b.im); }
};
template <typename F> inline bool cx_nonzero(Cx<F> a) { return (a.re != 0) | (a.im != 0); }
struct CxLogicalAnd {
  template <typename F> uint8_t operator()(Cx<F> a, Cx<F> b) const { return cx_nonzero(a) & cx_nonzero(b); }
};
struct CxLogicalOr {
  template <typename F> uint8_t operator()(Cx<F> a, Cx<F> b) const { return cx_nonzero(a) | cx_nonzero(b); }
};
struct CxLogicalXor {
  template <typename F> uint8_t operator()(Cx<F> a, Cx<F> b) const { return cx_nonzero(a) ^ cx_nonzero(b); }
};
struct CxIsNan {
  template <typename F> uint8_t operator()(Cx<F> a) const { return (a.re != a.re) | (a.im != a.im); }
};
struct CxIsInfinity {
  template <typename F> uint8_t operator()(Cx<F> a) const {
    return IsInfinity{}(a.re) | IsInfinity{}(a.im);
  }
};

// ---- filling the table

template <typename T>
void fill_comparable(KernelTable& t, DType d) {
  set(t, Op::Equal, d, binary_kernel<uint8_t, T, Equal>);
  set(t, Op::NotEqual, d, binary_kernel<uint8_t, T, NotEqual>);
  set(t, Op::Less, d, binary_kernel<uint8_t, T, Less>);
  set(t, Op::LessEqual, d, binary_kernel<uint8_t, T, LessEqual>);
  set(t, Op::Greater, d, binary_kernel<uint8_t, T, Greater>);
  set(t, Op::GreaterEqual, d, binary_kernel<uint8_t, T, GreaterEqual>);
  set(t, Op::LogicalAnd, d, binary_kernel<uint8_t, T, LogicalAnd>);
  set(t, Op::LogicalOr, d, binary_kernel<uint8_t, T, LogicalOr>);
  set(t, Op::LogicalXor, d, binary_kernel<uint8_t, T, LogicalXor>);
  set(t, Op::Min, d, binary_kernel<T, T, Min>);
  set(t, Op::Max, d, binary_kernel<T, T, Max>);
  set(t, Op::Clip, d, ternary_kernel<T, T, Clip>);
  set(t, Op::Select, d, select_kernel<T>);
}

// Real numbers: integers and floats (pred is not arithmetic).
template <typename T>
void fill_real(KernelTable& t, DType d) {
  fill_comparable<T>(t, d);
  set(t, Op::Add, d, binary_kernel<T, T, Add>);
  set(t, Op::Subtract, d, binary_kernel<T, T, Subtract>);
  set(t, Op::Multiply, d, binary_kernel<T, T, Multiply>);
  set(t, Op::Negate, d, unary_kernel<T, T, Negate>);
  set(t, Op::Abs, d, unary_kernel<T, T, Abs>);
  set(t, Op::Sign, d, unary_kernel<T, T, Sign>);
  set(t, Op::Real, d, unary_kernel<T, T, Identity>);
  set(t, Op::Imag, d, unary_kernel<T, T, Zero>);
}

template <typename T>
void fill_integer(KernelTable& t, DType d) {
  fill_real<T>(t, d);
  set(t, Op::Quotient, d, binary_kernel<T, T, Quotient>);
  set(t, Op::Remainder, d, binary_kernel<T, T, IntRemainder>);
  set(t, Op::Pow, d, binary_kernel<T, T, IntPow>);
  set(t, Op::BitwiseAnd, d, binary_kernel<T, T, BitwiseAnd>);
  set(t, Op::BitwiseOr, d, binary_kernel<T, T, BitwiseOr>);
  set(t, Op::BitwiseXor, d, binary_kernel<T, T, BitwiseXor>);
  set(t, Op::BitwiseNot, d, unary_kernel<T, T, BitwiseNot>);
  set(t, Op::LeftShift, d, binary_kernel<T, T, LeftShift>);
  set(t, Op::RightShift, d, binary_kernel<T, T, RightShift>);
  set(t, Op::CountLeadingZeros, d, unary_kernel<T, T, CountLeadingZeros>);
  set(t, Op::PopulationCount, d, unary_kernel<T, T, PopulationCount>);
  // Integers are already whole and finite.
  set(t, Op::Floor, d, unary_kernel<T, T, Identity>);
  set(t, Op::Ceil, d, unary_kernel<T, T, Identity>);
  set(t, Op::Round, d, unary_kernel<T, T, Identity>);
  set(t, Op::IsNan, d, unary_kernel<uint8_t, T, False>);
  set(t, Op::IsInfinity, d, unary_kernel<uint8_t, T, False>);
}

template <typename F>
void fill_float(KernelTable& t, DType d) {
  fill_real<F>(t, d);
  set(t, Op::Divide, d, binary_kernel<F, F, Divide>);
  set(t, Op::Floor, d, unary_kernel<F, F, Floor>);
  set(t, Op::Ceil, d, unary_kernel<F, F, Ceil>);
  set(t, Op::Round, d, unary_kernel<F, F, Round>);
  set(t, Op::IsNan, d, unary_kernel<uint8_t, F, IsNan>);
  set(t, Op::IsInfinity, d, unary_kernel<uint8_t, F, IsInfinity>);
  set(t, Op::Conjugate, d, unary_kernel<Cx<F>, F, ToComplex<F>>);
}

template <typename F>
void fill_complex(KernelTable& t, DType d) {
  using C = Cx<F>;
  set(t, Op::Add, d, parts_binary<F, Add>);
  set(t, Op::Subtract, d, parts_binary<F, Subtract>);
  set(t, Op::Negate, d, parts_unary<F, Negate>);
  set(t, Op::Multiply, d, binary_kernel<C, C, CxMultiply>);
  set(t, Op::Divide, d, binary_kernel<C, C, CxDivide>);
  set(t, Op::Conjugate, d, unary_kernel<C, C, CxConjugate>);
  set(t, Op::Real, d, unary_kernel<F, C, CxReal>);
  set(t, Op::Imag, d, unary_kernel<F, C, CxImag>);
  set(t, Op::Equal, d, binary_kernel<uint8_t, C, CxEqual>);
  set(t, Op::NotEqual, d, binary_kernel<uint8_t, C, CxNotEqual>);
  set(t, Op::LogicalAnd, d, binary_kernel<uint8_t, C, CxLogicalAnd>);
  set(t, Op::LogicalOr, d, binary_kernel<uint8_t, C, CxLogicalOr>);
  set(t, Op::LogicalXor, d, binary_kernel<uint8_t, C, CxLogicalXor>);
  set(t, Op::IsNan, d, unary_kernel<uint8_t, C, CxIsNan>);
  set(t, Op::IsInfinity, d, unary_kernel<uint8_t, C, CxIsInfinity>);
  set(t, Op::Select, d, select_kernel<C>);
}

}  // namespace

void fill_arith_kernels(KernelTable& t) {
  fill_comparable<uint8_t>(t, DType::Pred);
  set(t, Op::BitwiseAnd, DType::Pred, binary_kernel<uint8_t, uint8_t, BitwiseAnd>);
  set(t, Op::BitwiseOr, DType::Pred, binary_kernel<uint8_t, uint8_t, BitwiseOr>);
  set(t, Op::BitwiseXor, DType::Pred, binary_kernel<uint8_t, uint8_t, BitwiseXor>);
  set(t, Op::BitwiseNot, DType::Pred, unary_kernel<uint8_t, uint8_t, PredNot>);
  set(t, Op::IsNan, DType::Pred, unary_kernel<uint8_t, uint8_t, False>);
  set(t, Op::IsInfinity, DType::Pred, unary_kernel<uint8_t, uint8_t, False>);
  fill_integer<int8_t>(t, DType::S8);
  fill_integer<int16_t>(t, DType::S16);
  fill_integer<int32_t>(t, DType::S32);
  fill_integer<int64_t>(t, DType::S64);
  fill_integer<uint8_t>(t, DType::U8);
  fill_integer<uint16_t>(t, DType::U16);
  fill_integer<uint32_t>(t, DType::U32);
  fill_integer<uint64_t>(t, DType::U64);
  fill_float<float>(t, DType::F32);
  fill_float<double>(t, DType::F64);
  fill_complex<float>(t, DType::C64);
  fill_complex<double>(t, DType::C128);
}

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.isa = kIsa;
    fill_arith_kernels(t);
    fill_math_kernels(t);
    fill_convert_kernels(t);
    fill_complex_kernels(t);
    fill_block_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace sluice::cpu::SLUICE_ISA
