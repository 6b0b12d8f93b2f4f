// The device functions every generated CUDA kernel starts from: storage and
// compute types of each dtype, f16/bf16 conversions, and one function per
// elementwise op of the catalogue, named as the op (sl::add, sl::tanh, ...),
// with the host backend's semantics (devices/cpu/kernels/elementwise_*.cpp):
// integers wrap, division by zero and out-of-range shifts have defined
// results, float min/max propagate NaN, float-to-integer conversion
// truncates and saturates with NaN to 0, f16/bf16 compute in f32.
//
// Written in the C++ both NVRTC and the host compiler accept: the CUDA
// backend embeds this file in every kernel it generates (kernel_source.cpp),
// and tests/devices/cuda_prelude_test.cpp includes it on the host to check
// each op and dtype against the host backend, so the semantics are verified
// where no GPU is. No #include under NVRTC: it has no standard headers.

#ifndef SLUICE_CUDA_PRELUDE
#define SLUICE_CUDA_PRELUDE

#ifdef __CUDACC_RTC__
#define SL_FN __device__ __forceinline__
#define SL_CALL __device__ __noinline__
#else
#include <cmath>
#include <cstring>
#define SL_FN inline
#define SL_CALL inline
#endif

namespace sl {

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// ---------------------------------------------------------------- traits
template <class T> struct traits { static const bool is_int = false, is_signed = false, is_float = false, is_cx = false; };
#define SL_INT_TRAITS(T, S, MIN, MAX)                                                                  \
  template <> struct traits<T> {                                                                       \
    static const bool is_int = true, is_signed = S, is_float = false, is_cx = false;                   \
    typedef T type;                                                                                    \
    SL_FN static T min() { return MIN; }                                                               \
    SL_FN static T max() { return MAX; }                                                               \
  };
SL_INT_TRAITS(i8, true, i8(-128), i8(127))
SL_INT_TRAITS(i16, true, i16(-32768), i16(32767))
SL_INT_TRAITS(i32, true, i32(-2147483647 - 1), i32(2147483647))
SL_INT_TRAITS(i64, true, i64(-9223372036854775807LL - 1), i64(9223372036854775807LL))
SL_INT_TRAITS(u8, false, u8(0), u8(255))
SL_INT_TRAITS(u16, false, u16(0), u16(65535))
SL_INT_TRAITS(u32, false, u32(0), u32(4294967295u))
SL_INT_TRAITS(u64, false, u64(0), u64(18446744073709551615ull))
#undef SL_INT_TRAITS
template <> struct traits<float> { static const bool is_int = false, is_signed = true, is_float = true, is_cx = false; };
template <> struct traits<double> { static const bool is_int = false, is_signed = true, is_float = true, is_cx = false; };

// Functions of integers only (and pred), or of floats only, take part in
// overload resolution for them alone: sl::bitwise_and(1.5f, x) does not
// compile.
template <bool B, class T> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <class T> using int_only = typename enable_if<traits<T>::is_int, T>::type;
template <class T> using float_only = typename enable_if<traits<T>::is_float, T>::type;
template <class T, class R = T> using real_only = typename enable_if<!traits<T>::is_cx, R>::type;

// Integer arithmetic wraps: done in an unsigned type at least as wide as
// unsigned int, so that narrow types do not promote to signed int.
template <class T> struct wrap_type { typedef u32 type; };
template <> struct wrap_type<i64> { typedef u64 type; };
template <> struct wrap_type<u64> { typedef u64 type; };
template <class T> struct unsigned_of { typedef T type; };
template <> struct unsigned_of<i8> { typedef u8 type; };
template <> struct unsigned_of<i16> { typedef u16 type; };
template <> struct unsigned_of<i32> { typedef u32 type; };
template <> struct unsigned_of<i64> { typedef u64 type; };

// ---------------------------------------------------------------- bits
#ifdef __CUDACC_RTC__
SL_FN u32 bits(float x) { return __float_as_uint(x); }
SL_FN float float_of(u32 u) { return __uint_as_float(u); }
SL_FN u64 bits(double x) { return (u64)__double_as_longlong(x); }
SL_FN double double_of(u64 u) { return __longlong_as_double((i64)u); }
SL_FN int clz64(u64 x) { return __clzll((i64)x); }
SL_FN int popc64(u64 x) { return __popcll(x); }
#else
SL_FN u32 bits(float x) { u32 u; std::memcpy(&u, &x, 4); return u; }
SL_FN float float_of(u32 u) { float x; std::memcpy(&x, &u, 4); return x; }
SL_FN u64 bits(double x) { u64 u; std::memcpy(&u, &x, 8); return u; }
SL_FN double double_of(u64 u) { double x; std::memcpy(&x, &u, 8); return x; }
SL_FN int clz64(u64 x) { return x == 0 ? 64 : __builtin_clzll(x); }
SL_FN int popc64(u64 x) { return __builtin_popcountll(x); }
#endif

template <class F> struct flt;
template <> struct flt<float> {
  SL_FN static float inf() { return float_of(0x7f800000u); }
  SL_FN static float nan() { return float_of(0x7fc00000u); }
  SL_FN static float min_normal() { return float_of(0x00800000u); }
  SL_FN static float max() { return float_of(0x7f7fffffu); }
  static const int digits = 24;
};
template <> struct flt<double> {
  SL_FN static double inf() { return double_of(0x7ff0000000000000ull); }
  SL_FN static double nan() { return double_of(0x7ff8000000000000ull); }
  SL_FN static double min_normal() { return double_of(0x0010000000000000ull); }
  SL_FN static double max() { return double_of(0x7fefffffffffffffull); }
  static const int digits = 53;
};

// ---------------------------------------------------------------- complex
template <class F> struct cx { F re, im; };
typedef cx<float> c64;
typedef cx<double> c128;
template <class F> struct traits<cx<F> > { static const bool is_int = false, is_signed = true, is_float = false, is_cx = true; };
template <class F> SL_FN cx<F> mk(F re, F im) { cx<F> z; z.re = re; z.im = im; return z; }

// ---------------------------------------------------------------- f16 and bf16
// Stored as their 16 bits; computed in f32. The conversions keep NaN
// payloads as the host's do (a bitcast through f16 changes no bit).
SL_FN float f16_to_f32(u16 h) {
  const u32 shifted_exp = 0x7c00u << 13;
  u32 o = (u32)(h & 0x7fffu) << 13;
  u32 e = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (e == shifted_exp) {
    o += (128u - 16u) << 23;
  } else if (e == 0) {
    o += 1u << 23;
    o = bits(float_of(o) - float_of(113u << 23));
  }
  o |= (u32)(h & 0x8000u) << 16;
  return float_of(o);
}
SL_FN u16 f32_to_f16(float v) {
  const u32 f32_inf = 255u << 23, f16_max = (127u + 16u) << 23;
  const u32 denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  u32 u = bits(v);
  const u32 sign = u & 0x80000000u;
  u ^= sign;
  u32 o;
  if (u >= f16_max) {
    const u32 payload = (u >> 13) & 0x3ffu;
    o = u > f32_inf ? 0x7c00u | (payload != 0 ? payload : 0x200u) : 0x7c00u;
  } else if (u < (113u << 23)) {
    float f = float_of(u) + float_of(denorm_magic);
    o = bits(f) - denorm_magic;
  } else {
    const u32 mant_odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu;
    u += mant_odd;
    o = u >> 13;
  }
  return (u16)(o | (sign >> 16));
}
SL_FN float bf16_to_f32(u16 h) { return float_of((u32)h << 16); }
SL_FN u16 f32_to_bf16(float v) {
  u32 u = bits(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | ((u & 0x7f0000u) ? 0u : 0x40u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
}
// The results of f16/bf16 ops are rounded to their precision after each op.
SL_FN float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }
SL_FN float round_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

// The f32 nearest x rounded to odd: converting that to f16/bf16 rounds once,
// as a direct conversion would. Integers below 2^24 and f32 are exact.
SL_FN float to_f32_odd(double x) {
  float f = (float)x;
  bool inexact = (double)f != x && f - f == 0;
  u32 u = bits(f);
  u -= (inexact && ::fabs((double)f) > ::fabs(x)) ? 1u : 0u;
  return float_of(inexact ? (u | 1u) : u);
}
template <class S> SL_FN float to_f32_odd(S x) {
  if constexpr (sizeof(S) < 4) return (float)x;
  bool negative = false;
  if constexpr (traits<S>::is_signed) negative = x < 0;
  u64 m = negative ? u64(0) - u64(x) : u64(x);
  if (m < (u64(1) << 24)) return (float)x;
  int shift = 40 - clz64(m);
  u64 top = (m >> shift) | ((m & ((u64(1) << shift) - 1)) != 0);
  float r = (float)top * (float)(u64(1) << shift);
  return negative ? -r : r;
}
SL_FN float to_f32_odd(float x) { return x; }

// ---------------------------------------------------------------- conversions (as_type)
// as_type<D>(x): x of a compute type as D's compute type. Floats to integers
// truncate toward zero and saturate, NaN to 0; complex to real keeps the
// real part; real to complex has imaginary part 0. Pred and f16/bf16
// targets have their own (to_pred, narrow_from): their compute types are
// shared with u8 and f32.
template <class T> struct kind { static const int value = traits<T>::is_int ? 1 : traits<T>::is_float ? 2 : 3; };
template <class D, class S, int DK = kind<D>::value, int SK = kind<S>::value> struct conv;
template <class D, class S> struct conv<D, S, 1, 1> { SL_FN static D from(S x) { return D(x); } };
template <class D, class S> struct conv<D, S, 1, 2> {
  SL_FN static D from(S x) {
    const S lo = S(traits<D>::min()), hi = S(traits<D>::max());
    D r = x <= lo ? traits<D>::min() : x >= hi ? traits<D>::max() : D(x);
    return x != x ? D(0) : r;
  }
};
template <class D, class S> struct conv<D, S, 2, 1> { SL_FN static D from(S x) { return D(x); } };
template <class D, class S> struct conv<D, S, 2, 2> { SL_FN static D from(S x) { return D(x); } };
template <class D, class S, int SK> struct conv<D, S, 3, SK> {
  SL_FN static D from(S x) {
    typedef decltype(D().re) F;
    return mk(conv<F, S>::from(x), F(0));
  }
};
template <class D, class S, int DK> struct conv<D, S, DK, 3> {
  SL_FN static D from(S x) { return conv<D, double>::from((double)x.re); }
};
template <class D, class S> struct conv<D, S, 3, 3> {
  SL_FN static D from(S x) {
    typedef decltype(D().re) F;
    return mk((F)x.re, (F)x.im);
  }
};
template <class D, class S> SL_FN D as_type(S x) { return conv<D, S>::from(x); }
template <class S> SL_FN u8 to_pred(S x) { return x != 0; }
template <class F> SL_FN u8 to_pred(cx<F> x) { return (x.re != 0) | (x.im != 0); }
// To f16/bf16: the f32 to round (the caller rounds it once).
template <class S> SL_FN float narrow_from(S x) { return to_f32_odd(x); }
template <class F> SL_FN float narrow_from(cx<F> x) { return to_f32_odd((double)x.re); }

// ---------------------------------------------------------------- elementwise ops
// Each takes and returns compute types: the generator converts storage to
// compute types around them (f16 and bf16 as f32, rounded after each op
// whose result is not exact).

// ---- arithmetic
template <class T> SL_FN T add(T a, T b) {
  if constexpr (traits<T>::is_int) return T(typename wrap_type<T>::type(a) + typename wrap_type<T>::type(b));
  return a + b;
}
template <class T> SL_FN T subtract(T a, T b) {
  if constexpr (traits<T>::is_int) return T(typename wrap_type<T>::type(a) - typename wrap_type<T>::type(b));
  return a - b;
}
template <class T> SL_FN T multiply(T a, T b) {
  if constexpr (traits<T>::is_int) return T(typename wrap_type<T>::type(a) * typename wrap_type<T>::type(b));
  return a * b;
}
template <class T> SL_FN T negate(T a) {
  if constexpr (traits<T>::is_int) return T(typename wrap_type<T>::type(0) - typename wrap_type<T>::type(a));
  return -a;
}
template <class F> SL_FN cx<F> add(cx<F> a, cx<F> b) { return mk(a.re + b.re, a.im + b.im); }
template <class F> SL_FN cx<F> subtract(cx<F> a, cx<F> b) { return mk(a.re - b.re, a.im - b.im); }
template <class F> SL_FN cx<F> multiply(cx<F> a, cx<F> b) {
  return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <class F> SL_FN cx<F> negate(cx<F> a) { return mk(-a.re, -a.im); }

SL_FN float fabs_(float x) { return ::fabsf(x); }
SL_FN double fabs_(double x) { return ::fabs(x); }
SL_FN float copysign_(float a, float b) { return ::copysignf(a, b); }
SL_FN double copysign_(double a, double b) { return ::copysign(a, b); }

template <class T> SL_FN real_only<T> divide(T a, T b) { return a / b; }
// Smith's algorithm, as the host: scales by the larger part of the divisor;
// a zero divisor gives a / |0| part by part.
template <class F> SL_FN F times_ratio(F x, F d, F c, F r) {
  if (fabs_(r) >= flt<F>::min_normal()) return x * r;
  F p = x * d;
  return fabs_(p) >= flt<F>::min_normal() ? p / c : x / c * d;
}
template <class F> SL_CALL cx<F> divide(cx<F> a, cx<F> b) {
  if (fabs_(b.re) >= fabs_(b.im)) {
    if (b.re == 0) return mk(a.re / fabs_(b.re), a.im / fabs_(b.re));
    F r = b.im / b.re, den = b.re + b.im * r;
    return mk((a.re + times_ratio(a.im, b.im, b.re, r)) / den, (a.im - times_ratio(a.re, b.im, b.re, r)) / den);
  }
  F r = b.re / b.im, den = b.re * r + b.im;
  return mk((times_ratio(a.re, b.re, b.im, r) + a.im) / den, (times_ratio(a.im, b.re, b.im, r) - a.re) / den);
}

// Truncates toward zero; x / 0 is -1 (all bits set); MIN / -1 wraps to MIN.
template <class T> SL_FN int_only<T> quotient(T a, T b) {
  if (b == 0) return T(~T(0));
  if constexpr (traits<T>::is_signed)
    if (b == T(-1)) return negate(a);
  return T(a / b);
}
// Integers: the dividend's sign; x rem 0 is x; MIN rem -1 is 0. Floats: fmod.
template <class T> SL_FN int_only<T> remainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (traits<T>::is_signed)
    if (b == T(-1)) return 0;
  return T(a % b);
}
SL_FN float remainder(float a, float b) { return ::fmodf(a, b); }
SL_FN double remainder(double a, double b) { return ::fmod(a, b); }

// Integers: repeated squaring, wrapping; a negative exponent gives 0 except
// for bases 1 and -1.
template <class T> SL_FN int_only<T> pow(T a, T b) {
  if constexpr (traits<T>::is_signed)
    if (b < 0) return a == 1 ? T(1) : a == T(-1) ? T((b & 1) ? -1 : 1) : T(0);
  typename wrap_type<T>::type r = 1, base = typename wrap_type<T>::type(a);
  for (typename unsigned_of<T>::type e = typename unsigned_of<T>::type(b); e != 0; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return T(r);
}
SL_FN float pow(float a, float b) { return ::powf(a, b); }
SL_FN double pow(double a, double b) { return ::pow(a, b); }

// min and max propagate NaN.
template <class T> SL_FN real_only<T> min(T a, T b) {
  T r = a < b ? a : b;
  if constexpr (traits<T>::is_float) {
    r = b != b ? b : r;
    r = a != a ? a : r;
  }
  return r;
}
template <class T> SL_FN real_only<T> max(T a, T b) {
  T r = a > b ? a : b;
  if constexpr (traits<T>::is_float) {
    r = b != b ? b : r;
    r = a != a ? a : r;
  }
  return r;
}
template <class T> SL_FN real_only<T> clip(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <class T> SL_FN T select(u8 p, T a, T b) { return p ? a : b; }

// ---- bitwise (integers and pred)
template <class T> SL_FN int_only<T> bitwise_and(T a, T b) { return T(a & b); }
template <class T> SL_FN int_only<T> bitwise_or(T a, T b) { return T(a | b); }
template <class T> SL_FN int_only<T> bitwise_xor(T a, T b) { return T(a ^ b); }
template <class T> SL_FN int_only<T> bitwise_not(T a) { return T(~a); }
SL_FN u8 bitwise_not_pred(u8 a) { return u8(a ^ 1u); }
// Shift amounts outside [0, bits) shift everything out: 0, or the sign fill
// of a right shift of a negative value.
template <class T> SL_FN bool shift_in_range(T b) {
  return typename unsigned_of<T>::type(b) < sizeof(T) * 8;
}
template <class T> SL_FN int_only<T> left_shift(T a, T b) {
  bool ok = shift_in_range(b);
  T r = T(typename wrap_type<T>::type(a) << (ok ? unsigned(b) : 0u));
  return ok ? r : T(0);
}
template <class T> SL_FN int_only<T> right_shift(T a, T b) {
  bool ok = shift_in_range(b);
  T r = T(a >> (ok ? unsigned(b) : 0u));
  T fill = T(0);
  if constexpr (traits<T>::is_signed) fill = a < 0 ? T(-1) : T(0);
  return ok ? r : fill;
}
template <class T> SL_FN int_only<T> count_leading_zeros(T a) {
  const int width = sizeof(T) * 8;
  u64 u = u64(typename unsigned_of<T>::type(a));
  return T(u == 0 ? width : clz64(u) - (64 - width));
}
template <class T> SL_FN int_only<T> population_count(T a) { return T(popc64(u64(typename unsigned_of<T>::type(a)))); }

// ---- comparisons and logic: pred results
template <class T> SL_FN u8 equal(T a, T b) { return a == b; }
template <class T> SL_FN u8 not_equal(T a, T b) { return a != b; }
template <class T> SL_FN real_only<T, u8> less(T a, T b) { return a < b; }
template <class T> SL_FN real_only<T, u8> less_equal(T a, T b) { return a <= b; }
template <class T> SL_FN real_only<T, u8> greater(T a, T b) { return a > b; }
template <class T> SL_FN real_only<T, u8> greater_equal(T a, T b) { return a >= b; }
template <class T> SL_FN u8 logical_and(T a, T b) { return (a != 0) & (b != 0); }
template <class T> SL_FN u8 logical_or(T a, T b) { return (a != 0) | (b != 0); }
template <class T> SL_FN u8 logical_xor(T a, T b) { return (a != 0) ^ (b != 0); }
template <class F> SL_FN u8 equal(cx<F> a, cx<F> b) { return (a.re == b.re) & (a.im == b.im); }
template <class F> SL_FN u8 not_equal(cx<F> a, cx<F> b) { return (a.re != b.re) | (a.im != b.im); }
template <class F> SL_FN u8 logical_and(cx<F> a, cx<F> b) { return to_pred(a) & to_pred(b); }
template <class F> SL_FN u8 logical_or(cx<F> a, cx<F> b) { return to_pred(a) | to_pred(b); }
template <class F> SL_FN u8 logical_xor(cx<F> a, cx<F> b) { return to_pred(a) ^ to_pred(b); }

// ---- sign, rounding, classification
template <class T> SL_FN real_only<T> abs(T a) {
  if constexpr (traits<T>::is_signed) return a < 0 ? negate(a) : a;
  else return a;
}
SL_FN float abs(float a) { return ::fabsf(a); }
SL_FN double abs(double a) { return ::fabs(a); }
template <class F> SL_FN F abs(cx<F> z) { return ::hypot(z.re, z.im); }
SL_FN float abs(cx<float> z) { return ::hypotf(z.re, z.im); }
// Floats keep NaN and the sign of zero.
template <class T> SL_FN real_only<T> sign(T a) {
  if constexpr (traits<T>::is_float) return a > 0 ? T(1) : a < 0 ? T(-1) : a;
  else if constexpr (traits<T>::is_signed) return T((a > 0) - (a < 0));
  else return T(a != 0);
}
template <class T> SL_FN int_only<T> floor(T a) { return a; }
template <class T> SL_FN int_only<T> ceil(T a) { return a; }
template <class T> SL_FN int_only<T> round(T a) { return a; }
SL_FN float floor(float a) { return ::floorf(a); }
SL_FN double floor(double a) { return ::floor(a); }
SL_FN float ceil(float a) { return ::ceilf(a); }
SL_FN double ceil(double a) { return ::ceil(a); }
// Half away from zero.
SL_FN float round(float a) {
  float t = ::truncf(a);
  return ::fabsf(a - t) >= 0.5f ? t + ::copysignf(1.0f, a) : t;
}
SL_FN double round(double a) {
  double t = ::trunc(a);
  return ::fabs(a - t) >= 0.5 ? t + ::copysign(1.0, a) : t;
}
template <class T> SL_FN real_only<T, u8> is_nan(T a) { return a != a; }
template <class T> SL_FN typename enable_if<traits<T>::is_int, u8>::type is_infinity(T) { return 0; }
SL_FN u8 is_infinity(float a) { return ::fabsf(a) == flt<float>::inf(); }
SL_FN u8 is_infinity(double a) { return ::fabs(a) == flt<double>::inf(); }
template <class F> SL_FN u8 is_nan(cx<F> a) { return (a.re != a.re) | (a.im != a.im); }
template <class F> SL_FN u8 is_infinity(cx<F> a) { return is_infinity(a.re) | is_infinity(a.im); }

// An identity: grad passes no gradient through it, CSE removes it before a
// backend sees it; here so that every op of the catalogue has its function.
template <class T> SL_FN T stop_gradient(T a) { return a; }

// ---- real and imaginary parts
template <class T> SL_FN real_only<T> real(T a) { return a; }
template <class T> SL_FN real_only<T> imag(T) { return T(0); }
template <class F> SL_FN F real(cx<F> a) { return a.re; }
template <class F> SL_FN F imag(cx<F> a) { return a.im; }
template <class F> SL_FN cx<float_only<F> > conjugate(F a) { return mk(a, F(0)); }
template <class F> SL_FN cx<F> conjugate(cx<F> a) { return mk(a.re, -a.im); }

// ---- real math: CUDA's (or libm's) functions, both within a few ulp
#define SL_MATH1(name, f32, f64)                         \
  SL_FN float name(float x) { return ::f32(x); }         \
  SL_FN double name(double x) { return ::f64(x); }
SL_MATH1(exp, expf, exp)
SL_MATH1(expm1, expm1f, expm1)
SL_MATH1(log, logf, log)
SL_MATH1(log1p, log1pf, log1p)
SL_MATH1(sqrt, sqrtf, sqrt)
SL_MATH1(cbrt, cbrtf, cbrt)
SL_MATH1(sin, sinf, sin)
SL_MATH1(cos, cosf, cos)
SL_MATH1(tan, tanf, tan)
SL_MATH1(asin, asinf, asin)
SL_MATH1(acos, acosf, acos)
SL_MATH1(atan, atanf, atan)
SL_MATH1(sinh, sinhf, sinh)
SL_MATH1(cosh, coshf, cosh)
SL_MATH1(tanh, tanhf, tanh)
SL_MATH1(asinh, asinhf, asinh)
SL_MATH1(acosh, acoshf, acosh)
SL_MATH1(atanh, atanhf, atanh)
SL_MATH1(erf, erff, erf)
SL_MATH1(erfc, erfcf, erfc)
#undef SL_MATH1
SL_FN float rsqrt(float x) { return 1.0f / ::sqrtf(x); }
SL_FN double rsqrt(double x) { return 1.0 / ::sqrt(x); }
SL_FN float atan2(float a, float b) { return ::atan2f(a, b); }
SL_FN double atan2(double a, double b) { return ::atan2(a, b); }
// 1 / (1 + e^-x), from e = e^-|x| so that nothing overflows.
template <class F> SL_FN float_only<F> sigmoid(F x) {
  F e = exp(-fabs_(x));
  return (x >= 0 ? F(1) : e) / (F(1) + e);
}

// erf_inv: Giles' single-precision approximation for f32; for f64 a start
// from it polished by two Newton steps on erf (erf is within an ulp).
SL_FN float erf_inv(float x) {
  if (x != x || x < -1.0f || x > 1.0f) return flt<float>::nan();
  if (x == 1.0f) return flt<float>::inf();
  if (x == -1.0f) return -flt<float>::inf();
  float w = -::logf((1.0f - x) * (1.0f + x)), p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = ::sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  float y = p * x;
  // One Newton step on erf(y) = x brings it within an ulp or two.
  const float two_over_sqrt_pi = 1.12837917f;
  float err = ::erff(y) - x;
  return y - err / (two_over_sqrt_pi * ::expf(-y * y));
}
SL_FN double erf_inv(double x) {
  if (x != x || x < -1.0 || x > 1.0) return flt<double>::nan();
  if (x == 1.0) return flt<double>::inf();
  if (x == -1.0) return -flt<double>::inf();
  double y = (double)erf_inv((float)x);
  if (y - y != 0) y = x > 0 ? 5.9 : -5.9;  // |x| rounded to 1 in f32
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 3; ++i) {
    double d = two_over_sqrt_pi * ::exp(-y * y);
    if (d == 0) break;
    y -= (::erf(y) - x) / d;
  }
  return y;
}

// ---- complex math, with the host's formulas where they guard an edge.
// Not inlined: each is compiled once per kernel however often a region calls
// it (a region's loop calls its element four times and more).
// The special values follow C99's Annex G (as glibc's cexp, csinh, ... and
// so the host backend and numpy): a zero or infinite part does not turn the
// other into NaN through 0 * inf.
template <class F> SL_FN bool finite(F x) { return x - x == 0; }
template <class F> SL_CALL cx<F> exp(cx<F> z) {
  if (z.im == 0) return mk(exp(z.re), z.im);
  if (!finite(z.im)) {
    if (z.re == flt<F>::inf()) return mk(z.re, z.im - z.im);
    if (z.re == -flt<F>::inf()) return mk(F(0), F(0));
  }
  F e = exp(z.re);
  if (!finite(e) && z.re > 0) {  // e^x overflows: apply it in two halves
    F h = exp(z.re / 2);
    return mk(h * cos(z.im) * h, h * sin(z.im) * h);
  }
  return mk(e * cos(z.im), e * sin(z.im));
}
// Near 0 without cancelling: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2).
template <class F> SL_CALL cx<F> expm1(cx<F> z) {
  if (z.im == 0) return mk(expm1(z.re), z.im);
  if (z.re > log(flt<F>::max())) {
    F h = exp(z.re / 2);
    return mk(h * cos(z.im) * h - 1, h * sin(z.im) * h);
  }
  F s = sin(z.im / 2);
  return mk(expm1(z.re) * cos(z.im) - 2 * s * s, exp(z.re) * sin(z.im));
}
template <class F> SL_CALL cx<F> log(cx<F> z) { return mk(log(abs(z)), atan2(z.im, z.re)); }
// log(1 + z): |1 + z|^2 = 1 + (2x + x^2 + y^2), unless that may overflow.
template <class F> SL_CALL cx<F> log1p(cx<F> z) {
  const F big = sqrt(flt<F>::max()) / 2;
  if (fabs_(z.re) > big || fabs_(z.im) > big) return mk(log(abs(mk(1 + z.re, z.im))), atan2(z.im, 1 + z.re));
  return mk(F(0.5) * log1p(z.re * (2 + z.re) + z.im * z.im), atan2(z.im, 1 + z.re));
}
// The principal root, by Kahan's formula: t = sqrt((|x| + |z|) / 2), scaled
// where |z| could overflow.
template <class F> SL_CALL cx<F> sqrt(cx<F> z) {
  F x = z.re, y = z.im;
  if (x == 0 && y == 0) return mk(F(0), y);
  if (is_infinity(y)) return mk(flt<F>::inf(), y);
  if (x != x) return mk(x, y == y ? x : y);
  if (is_infinity(x)) {
    if (x > 0) return mk(x, y != y ? y : copysign_(F(0), y));
    return mk(y != y ? fabs_(y - y) : F(0), copysign_(-x, y));
  }
  if (y != y) return mk(y, y);
  const F big = flt<F>::max() / 4;
  F scale = 1;
  if (fabs_(x) > big || fabs_(y) > big) {
    x *= F(0.25);
    y *= F(0.25);
    scale = 2;
  }
  F t = sqrt((fabs_(x) + abs(mk(x, y))) / 2);
  if (x >= 0) return mk(t * scale, y / (2 * t) * scale);
  return mk(fabs_(y) / (2 * t) * scale, copysign_(t, y) * scale);
}
template <class F> SL_CALL cx<F> rsqrt(cx<F> z) { return divide(mk(F(1), F(0)), sqrt(z)); }
template <class F> SL_CALL cx<F> sinh(cx<F> z) {
  const F x = z.re, y = z.im;
  if (y == 0) return mk(sinh(x), y);
  if (x == 0) return mk(x, sin(y));
  if (!finite(x) && x == x && !finite(y)) return mk(x, y - y);
  return mk(sinh(x) * cos(y), cosh(x) * sin(y));
}
template <class F> SL_CALL cx<F> cosh(cx<F> z) {
  const F x = z.re, y = z.im;
  if (y == 0) return mk(cosh(x), copysign_(F(0), x) * copysign_(F(1), y));
  if (x == 0) return mk(cos(y), finite(y) ? x * sin(y) : x);
  if (!finite(x) && x == x && !finite(y)) return mk(fabs_(x), y - y);
  return mk(cosh(x) * cos(y), sinh(x) * sin(y));
}
// sin z = -i sinh(i z), cos z = cosh(i z): their special values follow.
template <class F> SL_CALL cx<F> sin(cx<F> z) {
  const cx<F> w = sinh(mk(-z.im, z.re));
  return mk(w.im, -w.re);
}
template <class F> SL_CALL cx<F> cos(cx<F> z) { return cosh(mk(-z.im, z.re)); }
// Kahan's tanh: t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2):
// tanh z = (r s b + i t) / (1 + b s^2); for large |x|, sign(x) + i 4 sin y
// cos y e^-2|x|.
template <class F> SL_CALL cx<F> tanh(cx<F> z) {
  F x = z.re, y = z.im;
  if (x != x) return mk(x, y == 0 ? y : x);
  if (!finite(y)) {
    if (is_infinity(x)) return mk(copysign_(F(1), x), copysign_(F(0), y));
    if (x == 0) return mk(x, y - y);
    return mk(y - y, y - y);
  }
  if (fabs_(x) >= F(flt<F>::digits == 24 ? 9 : 22)) {
    F e = exp(-2 * fabs_(x));
    return mk(copysign_(F(1), x), 4 * sin(y) * cos(y) * e);
  }
  F t = tan(y), b = 1 + t * t, s = sinh(x), r = sqrt(1 + s * s), d = 1 + b * s * s;
  return mk(b * r * s / d, t / d);
}
// tan z = -i tanh(i z).
template <class F> SL_CALL cx<F> tan(cx<F> z) {
  cx<F> w = tanh(mk(-z.im, z.re));
  return mk(w.im, -w.re);
}
// 1 / (1 + e^-z); where |e^z| is below F's precision that is e^z, which
// does not overflow where e^-z would.
template <class F> SL_CALL cx<F> sigmoid(cx<F> z) {
  if (z.re < -F(flt<F>::digits) * F(0.6931471805599453) - 1) return exp(z);
  cx<F> e = exp(mk(-z.re, -z.im));
  return divide(mk(F(1), F(0)), mk(1 + e.re, e.im));
}
// z / |z|, and 0 for 0; subnormal parts scaled up exactly first.
template <class F> SL_CALL cx<F> sign(cx<F> z) {
  if (fabs_(z.re) < flt<F>::min_normal() && fabs_(z.im) < flt<F>::min_normal()) {
    const F scale = F(u64(1) << (flt<F>::digits - 1)) * F(2);
    z = mk(z.re * scale, z.im * scale);
  }
  F r = abs(z);
  return r == 0 ? mk(F(0), F(0)) : mk(z.re / r, z.im / r);
}
// As numpy: z^0 is 1, 0^w is 0 for Re(w) > 0; otherwise exp(w log z).
template <class F> SL_CALL cx<F> pow(cx<F> z, cx<F> w) {
  if (w.re == 0 && w.im == 0) return mk(F(1), F(0));
  if (z.re == 0 && z.im == 0 && w.re > 0) return mk(F(0), F(0));
  return exp(multiply(w, log(z)));
}

// ---- inverse trigonometric and hyperbolic functions of complex numbers.
// Finite values by Kahan's formulas ("Branch cuts for complex elementary
// functions"), written with square roots whose signed zeros put each value
// on its side of a branch cut: with s = sqrt(1 - z), t = sqrt(1 + z),
//   asin z  = atan(x / Re(s t)) + i asinh(Im(conj(s) t))
//   acos z  = 2 atan(Re s / Re t) + i asinh(Im(conj(t) s))
//   acosh z = asinh(Re(conj(u) v)) + i 2 atan(Im u / Re v), u = sqrt(z - 1), v = sqrt(z + 1)
//   atanh z = log1p(4x / ((1 - x)^2 + y^2)) / 4 + i atan2(2y, (1 - x)(1 + x) - y^2) / 2
// and asinh z = i asin(-i z), atan z = -i atanh(i z). Infinities, NaNs and
// zeros as C99's Annex G says (and so glibc's casinh, cacosh, catanh, on
// which the host backend's std:: functions stand), sign by sign.
template <class F> SL_FN F pi_() { return F(3.14159265358979323846); }
template <class F> SL_CALL cx<F> asin(cx<F> z) {
  const F x = z.re, y = z.im;
  if (finite(x) && finite(y)) {
    if (x == 0 && y == 0) return z;
    const cx<F> s = sqrt(mk(1 - x, -y)), t = sqrt(mk(1 + x, y));
    return mk(atan2(x, fabs_(s.re * t.re - s.im * t.im)), asinh(s.re * t.im - s.im * t.re));
  }
  const cx<F> w = asinh(mk(-y, x));  // asin z = -i asinh(i z)
  return mk(w.im, -w.re);
}
template <class F> SL_CALL cx<F> asinh(cx<F> z) {
  const F x = z.re, y = z.im;
  if (finite(x) && finite(y)) {
    const cx<F> w = asin(mk(y, -x));  // asinh z = i asin(-i z)
    return mk(-w.im, w.re);
  }
  if (is_infinity(y)) {
    if (x != x) return mk(copysign_(flt<F>::inf(), x), flt<F>::nan());
    return mk(copysign_(flt<F>::inf(), x), copysign_(finite(x) ? pi_<F>() / 2 : pi_<F>() / 4, y));
  }
  if (!finite(x)) {  // infinite or NaN, y finite or NaN
    const bool zero_im = (is_infinity(x) && y == y) || (x != x && y == 0);
    return mk(x, zero_im ? copysign_(F(0), y) : flt<F>::nan());
  }
  return mk(flt<F>::nan(), flt<F>::nan());
}
template <class F> SL_CALL cx<F> acos(cx<F> z) {
  const F x = z.re, y = z.im;
  if (finite(x) && finite(y) && !(x == 0 && y == 0)) {
    const cx<F> s = sqrt(mk(1 - x, -y)), t = sqrt(mk(1 + x, y));
    return mk(2 * atan2(s.re, t.re), asinh(t.re * s.im - t.im * s.re));
  }
  const cx<F> w = asin(z);  // pi/2 - asin z, exact where this is reached
  return mk(pi_<F>() / 2 - w.re, -w.im);
}
template <class F> SL_CALL cx<F> acosh(cx<F> z) {
  const F x = z.re, y = z.im;
  if (finite(x) && finite(y)) {
    if (x == 0 && y == 0) return mk(F(0), copysign_(pi_<F>() / 2, y));
    const cx<F> u = sqrt(mk(x - 1, y)), v = sqrt(mk(x + 1, y));
    return mk(asinh(u.re * v.re + u.im * v.im), 2 * atan2(u.im, v.re));
  }
  if (is_infinity(y)) {
    if (x != x) return mk(flt<F>::inf(), flt<F>::nan());
    const F angle = is_infinity(x) ? (x < 0 ? 3 * pi_<F>() / 4 : pi_<F>() / 4) : pi_<F>() / 2;
    return mk(flt<F>::inf(), copysign_(angle, y));
  }
  if (is_infinity(x)) {
    if (y != y) return mk(flt<F>::inf(), flt<F>::nan());
    return mk(flt<F>::inf(), copysign_(x < 0 ? pi_<F>() : F(0), y));
  }
  return mk(flt<F>::nan(), x == 0 ? pi_<F>() / 2 : flt<F>::nan());
}
template <class F> SL_CALL cx<F> atanh(cx<F> z) {
  const F x = z.re, y = z.im;
  if (!finite(x) || !finite(y)) {
    if (is_infinity(y)) return mk(copysign_(F(0), x), copysign_(pi_<F>() / 2, y));
    if (is_infinity(x) || x == 0) return mk(copysign_(F(0), x), y == y ? copysign_(pi_<F>() / 2, y) : flt<F>::nan());
    return mk(flt<F>::nan(), flt<F>::nan());
  }
  if (x == 0 && y == 0) return z;
  const F ax = fabs_(x), ay = fabs_(y);
  // Beyond 2^p / eps the squares would overflow: the value is 1/z to F's precision.
  const F big = F(flt<F>::digits == 24 ? 1.34217728e8 : 7.2057594037927936e16);
  if (ax >= big || ay >= big) {
    F re;
    if (ay <= 1) re = 1 / x;
    else if (ax <= 1) re = x / y / y;
    else {
      const F h = abs(mk(x / 2, y / 2));
      re = x / h / h / 4;
    }
    return mk(re, copysign_(pi_<F>() / 2, y));
  }
  const F y2 = y * y, below = 1 - x, above = 1 + x;
  const F num = above * above + y2, den = below * below + y2;
  F re = num / den < F(0.5) ? F(0.25) * log(num / den) : F(0.25) * log1p(4 * x / den);
  const F tiny = F(flt<F>::digits == 24 ? 1.4210855e-14 : 4.930380657631324e-32);  // eps^2
  if (ax == 1 && ay < tiny) re = copysign_(F(0.5), x) * (F(0.6931471805599453) - log(ay));  // y^2 would underflow

  F d = (1 - ax) * (1 + ax) - ay * ay;
  if (d == 0) d = 0;  // -0.0 would turn atan2 to the other side of the cut
  return mk(re, F(0.5) * atan2(2 * y, d));
}
template <class F> SL_CALL cx<F> atan(cx<F> z) {
  const cx<F> w = atanh(mk(-z.im, z.re));  // atan z = -i atanh(i z)
  return mk(w.im, -w.re);
}

// ---------------------------------------------------------------- kernels' plumbing
// A kernel's parameters: 64-bit words the launcher packs (kernel_params.h).
template <int N> struct Words { u64 w[N]; };
// Sixteen bytes moved as one element (c128, in shape copies).
struct b16 { u64 lo, hi; };

// An element of a kernel's input, through the read-only data cache: the
// inputs of a region are never written by it at another element, so the
// compiler may load ahead of the stores of earlier elements.
template <class T> SL_FN T ld(const T* p) {
#ifdef __CUDACC_RTC__
  return __ldg(p);
#else
  return *p;
#endif
}
#ifdef __CUDACC_RTC__
template <> SL_FN c64 ld(const c64* p) {
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return mk(v.x, v.y);
}
template <> SL_FN c128 ld(const c128* p) {
  const double2 v = __ldg(reinterpret_cast<const double2*>(p));
  return mk(v.x, v.y);
}
#endif

// The bits of x read as To (of the same size).
template <class To, class From> SL_FN To bitcast(From x) {
#ifdef __CUDACC_RTC__
  union { From from; To to; } u;
  u.from = x;
  return u.to;
#else
  To to;
  std::memcpy(&to, &x, sizeof(To));
  return to;
#endif
}

// The offset of element i of a row-major walk over `dims`, in a view whose
// axes step by `strides` (elements). Not inlined: its 64-bit divisions are
// compiled once per kernel, not once per use (NVRTC's time goes there).
SL_CALL i64 offset_of(i64 i, int rank, const i64* dims, const i64* strides) {
  i64 offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const i64 c = i % dims[d];
    i /= dims[d];
    offset += c * strides[d];
  }
  return offset;
}

}  // namespace sl

#endif  // SLUICE_CUDA_PRELUDE
