// Float math kernels of one ISA (compiled once per ISA, see simd_vec.h):
// SLEEF's vector functions for the transcendental set, plain loops for
// sqrt/rsqrt, and the composites SLEEF lacks (sigmoid, erf_inv). Every f32
// function stays within 4 ulp of the correctly rounded result
// (tests/devices/math_accuracy_test.cpp measures it).

#include <limits>

#include <sluice/devices/cpu/kernels/simd_vec.h>

namespace sluice::cpu::SLUICE_ISA {
namespace {

template <typename T, typename F>
void vector_unary(void* out, const void* a, const void*, const void*, int64_t n) {
  vmap<T, F>(static_cast<T*>(out), static_cast<const T*>(a), n);
}
// F(a * scale + shift), multiplied and added in registers (KernelTable::affine).
template <typename T, typename F>
void vector_affine(void* out, const void* a, const void* scale, const void* shift, int64_t n) {
  const Vec<T> s = broadcast(*static_cast<const T*>(scale)), t = broadcast(*static_cast<const T*>(shift));
  vmap<T>(static_cast<T*>(out), static_cast<const T*>(a), n, [s, t](Vec<T> x) { return F{}(rounded(x * s) + t); });
}
template <typename T, typename F>
void vector_binary(void* out, const void* a, const void* b, const void*, int64_t n) {
  vmap<T, F>(static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b), n);
}

// SLEEF's pow overflows a little before the largest float (pow(DBL_MAX, 1)
// is inf there): a lane that overflowed from finite operands is computed
// again by libm, which rounds correctly at the edge. (__builtin_pow calls
// libm; an inline std:: overload could be merged across the ISA copies.)
template <typename T, typename F>
void pow_kernel(void* out, const void* a, const void* b, const void*, int64_t n) {
  vector_binary<T, F>(out, a, b, nullptr, n);
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (int64_t i = 0; i < n; ++i) {
    if (__builtin_isinf(o[i]) && __builtin_isfinite(x[i]) && __builtin_isfinite(y[i])) {
      if constexpr (sizeof(T) == 4) o[i] = __builtin_powf(x[i], y[i]);
      else o[i] = __builtin_pow(x[i], y[i]);
    }
  }
}

struct Sqrt {
  float operator()(float a) const { return __builtin_sqrtf(a); }
  double operator()(double a) const { return __builtin_sqrt(a); }
};
struct Rsqrt {
  template <typename T> T operator()(T a) const { return T(1) / Sqrt{}(a); }
};

// ---- f32 exp, tanh, sigmoid: the functions of activations and of the
// benchmarked chains, written here because SLEEF's tanh takes twice the time
// of the rest of a typical region. Both are branch-free over a vector;
// the accuracy test measures them (exp, tanh <= 1.3 ulp, sigmoid <= 2.5).

inline VecF select(VecI mask, VecF a, VecF b) { return mask ? a : b; }

// e^x = 2^n e^r with n = rint(x / ln 2), |r| <= ln(2) / 2, e^r by a
// degree-6 minimax polynomial (relative error 3e-9). `Range` says where x
// may lie, to spare the work for results that cannot occur. Clamping x to
// [-104, 89] keeps n in [-150, 128]. A NaN x gives NaN in r and p, and so
// in the result, whatever garbage its n makes of the scale.
// NonNegative: x >= 0 or NaN, and x above 88 may be taken as 88 (e^88 is
// still finite).
enum class ExpRange { Any, NonNegative };

template <ExpRange Range>
inline VecF exp_f32_impl(VecF x) {
  VecF xc = min_ps(broadcast(Range == ExpRange::Any ? 89.0f : 88.0f), x);  // NaN stays NaN, through to the result
  if constexpr (Range == ExpRange::Any) xc = max_ps(broadcast(-104.0f), xc);
  const VecF magic = broadcast(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  VecF n = (xc * 1.44269504088896341f + magic) - magic;
  VecF r = fmadd(n, broadcast(-0.693145751953125f), xc);  // ln 2 in two parts: n * hi is exact
  r = fmadd(n, broadcast(-1.428606765330187045e-06f), r);
  VecF p = broadcast(0.0013814613f);
  p = fmadd(p, r, broadcast(0.0083687101f));
  p = fmadd(p, r, broadcast(0.041668389f));
  p = fmadd(p, r, broadcast(0.16666521f));
  p = fmadd(p, r, broadcast(0.49999994f));
  p = fmadd(p, r * r, r + 1.0f);
  VecI k = __builtin_convertvector(n, VecI);
  if constexpr (Range == ExpRange::NonNegative) {
    // n in [0, 127]: 2^n as one factor.
    return p * VecF((k + 127) << 23);
  } else {
    // n in [-150, 128]: 2^n as two factors, so that results that overflow
    // or fall into subnormals round once, right.
    VecI k1 = k >> 1, k2 = k - k1;
    return p * VecF((k1 + 127) << 23) * VecF((k2 + 127) << 23);
  }
}
inline VecF exp_f32(VecF x) { return exp_f32_impl<ExpRange::Any>(x); }

inline VecF abs_f32(VecF x) { return VecF(VecI(x) & 0x7fffffff); }

// tanh |x| below 0.75: x + x^3 q(x^2), q minimax of degree 5 (relative
// error 2e-9); above: 1 - 2 / (e^2|x| + 1), where the subtraction cannot
// cancel (the quotient is below 0.37; e^2|x| is at most e^88, so the
// reciprocal sees a finite value). A vector whose lanes all fall on one
// side computes that side only. The sign is copied back.
inline VecF tanh_small(VecF a) {
  VecF a2 = a * a;
  VecF q = broadcast(0.0017369328f);
  q = fmadd(q, a2, broadcast(-0.0076572509f));
  q = fmadd(q, a2, broadcast(0.021452032f));
  q = fmadd(q, a2, broadcast(-0.053892724f));
  q = fmadd(q, a2, broadcast(0.13332695f));
  q = fmadd(q, a2, broadcast(-0.33333316f));
  return fmadd(a * a2, q, a);
}
inline VecF tanh_large(VecF a) {
  return 1.0f - 2.0f * reciprocal(exp_f32_impl<ExpRange::NonNegative>(a + a) + 1.0f);
}
inline VecF tanh_f32(VecF x) {
  VecF a = abs_f32(x);
  VecI is_small = a < 0.75f;
  int lanes = lane_bits(is_small);
  VecF t = lanes == kAllLanes ? tanh_small(a) : lanes == 0 ? tanh_large(a) : select(is_small, tanh_small(a), tanh_large(a));
  return VecF(VecI(t) | (VecI(x) & int32_t(0x80000000u)));
}

// 1 / (1 + e^-x) through e = e^-|x| <= 1, so nothing overflows:
// 1 / (1 + e) for x >= 0, e / (1 + e) below; one division either way.
inline VecF sigmoid_f32(VecF x) {
  VecF e = exp_f32(-abs_f32(x));
  return select(x >= 0.0f, broadcast(1.0f), e) / (1.0f + e);
}

template <VecF (*F)(VecF)>
struct F32Fn {
  VecF operator()(VecF x) const { return F(x); }
};

// Composites work through a stack block, so that each SLEEF call and each
// plain loop between them runs over a whole vectorizable array.
inline constexpr int64_t kBlock = 256;

// sigmoid of f64, as sigmoid_f32 computes it, through a block.
void sigmoid_f64(void* out, const void* a, const void*, const void*, int64_t n) {
  auto* o = static_cast<double*>(out);
  const auto* x = static_cast<const double*>(a);
  alignas(64) double e[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    for (int64_t i = 0; i < m; ++i) e[i] = -__builtin_fabs(x[i0 + i]);
    vmap<double, SLUICE_SLEEF_D(exp, u10)>(e, e, m);
    for (int64_t i = 0; i < m; ++i) o[i0 + i] = (x[i0 + i] >= 0 ? 1.0 : e[i]) / (1.0 + e[i]);
  }
}

// erf_inv in double precision, used for f64 and, rounded, for f32: Giles'
// single-precision approximation ("Approximating the erfinv function", GPU
// Computing Gems, 2011) as the start, then two Halley steps on
// f(y) = erf(y) - a. Near |x| = 1 the step uses erfc, so that 1 - a, exact
// there, carries the information rather than erf(y), which rounds to 1.
// Halley converges cubically: from Giles' ~1e-7 the first step reaches
// double precision; the second covers the far tail of f64 (|x| > 1 - 1e-12),
// where the start is outside the range Giles fitted.
// Beyond that range (w > 16, |x| > 1 - 1e-7, reached by f64 only) the start
// is the asymptotic inverse of erfc(y) ~ e^-y^2 / (y sqrt(pi)) instead:
// y^2 = -log(sqrt(pi) y (1 - |x|)), iterated once from y^2 = -log(1 - |x|),
// within 1% of the root.
void erf_inv_block(double* y, const double* x, int64_t m) {
  alignas(64) double a[kBlock], w[kBlock], erf_y[kBlock], erfc_y[kBlock], d[kBlock];
  for (int64_t i = 0; i < m; ++i) {
    a[i] = __builtin_fabs(x[i]);
    w[i] = (1.0 - a[i]) * (1.0 + a[i]);
    d[i] = 1.0 - a[i];
  }
  vmap<double, SLUICE_SLEEF_D(log, u10)>(w, w, m);
  vmap<double, SLUICE_SLEEF_D(log, u10)>(d, d, m);
  constexpr double kSqrtPi = 1.7724538509055160;
  for (int64_t i = 0; i < m; ++i) d[i] = kSqrtPi * __builtin_sqrt(-d[i]) * (1.0 - a[i]);
  vmap<double, SLUICE_SLEEF_D(log, u10)>(d, d, m);
  for (int64_t i = 0; i < m; ++i) erfc_y[i] = __builtin_sqrt(-d[i]);  // the asymptotic start
  for (int64_t i = 0; i < m; ++i) {
    double v = -w[i], p;
    if (v < 5.0) {
      v -= 2.5;
      p = 2.81022636e-08;
      p = 3.43273939e-07 + p * v;
      p = -3.5233877e-06 + p * v;
      p = -4.39150654e-06 + p * v;
      p = 0.00021858087 + p * v;
      p = -0.00125372503 + p * v;
      p = -0.00417768164 + p * v;
      p = 0.246640727 + p * v;
      p = 1.50140941 + p * v;
    } else {
      v = __builtin_sqrt(v) - 3.0;
      p = -0.000200214257;
      p = 0.000100950558 + p * v;
      p = 0.00134934322 + p * v;
      p = -0.00367342844 + p * v;
      p = 0.00573950773 + p * v;
      p = -0.0076224613 + p * v;
      p = 0.00943887047 + p * v;
      p = 1.00167406 + p * v;
      p = 2.83297682 + p * v;
    }
    y[i] = -w[i] > 16.0 ? erfc_y[i] : p * a[i];
  }
  constexpr double kTwoOverSqrtPi = 1.1283791670955126;
  for (int step = 0; step < 2; ++step) {
    vmap<double, SLUICE_SLEEF_D(erf, u10)>(erf_y, y, m);
    vmap<double, SLUICE_SLEEF_D(erfc, u15)>(erfc_y, y, m);
    for (int64_t i = 0; i < m; ++i) d[i] = -y[i] * y[i];
    vmap<double, SLUICE_SLEEF_D(exp, u10)>(d, d, m);
    for (int64_t i = 0; i < m; ++i) {
      double f = a[i] < 0.5 ? erf_y[i] - a[i] : (1.0 - a[i]) - erfc_y[i];
      double slope = kTwoOverSqrtPi * d[i];
      double next = y[i] - f / (slope + y[i] * f);
      // Where the slope underflows (the far tail) the step is meaningless.
      y[i] = slope > 0 ? next : y[i];
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < m; ++i) {
    double r = a[i] == 1.0 ? kInf : a[i] < 1.0 ? y[i] : kNan;  // NaN fails both tests
    y[i] = __builtin_copysign(r, x[i]);
  }
}

template <typename T>
void erf_inv(void* out, const void* a, const void*, const void*, int64_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  alignas(64) double xd[kBlock], yd[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    for (int64_t i = 0; i < m; ++i) xd[i] = double(x[i0 + i]);
    erf_inv_block(yd, xd, m);
    for (int64_t i = 0; i < m; ++i) o[i0 + i] = T(yd[i]);
  }
}

// ---- where SLEEF's domain ends

// SLEEF documents some functions on a bounded domain only (sinh and cosh to
// |x| <= 88 in f32, 709 in f64; asinh and acosh to 1.8e19 and 1.34e154;
// log1p to 1e38 and 1e307); beyond, it overflows in intermediates. Elements
// there are recomputed with libm, element by element.
struct Beyond {
  double f32, f64;  // where SLEEF's domain ends, by |x|
};

template <typename T, typename F, Beyond B, T (*Libm)(T)>
void sleef_with_libm_beyond(void* out, const void* a, const void*, const void*, int64_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  vmap<T, F>(o, x, n);
  const T edge = T(std::is_same_v<T, float> ? B.f32 : B.f64);
  for (int64_t i = 0; i < n; ++i) {
    if (__builtin_fabs(x[i]) > edge) o[i] = Libm(x[i]);
  }
}

float libm_sinh(float x) { return __builtin_sinhf(x); }
double libm_sinh(double x) { return __builtin_sinh(x); }
float libm_cosh(float x) { return __builtin_coshf(x); }
double libm_cosh(double x) { return __builtin_cosh(x); }
float libm_asinh(float x) { return __builtin_asinhf(x); }
double libm_asinh(double x) { return __builtin_asinh(x); }
float libm_acosh(float x) { return __builtin_acoshf(x); }
double libm_acosh(double x) { return __builtin_acosh(x); }
float libm_log1p(float x) { return __builtin_log1pf(x); }
double libm_log1p(double x) { return __builtin_log1p(x); }

template <typename T, typename F, Beyond B, T (*Libm)(T)>
void set_bounded(KernelTable& t, Op op) {
  constexpr DType d = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  set(t, op, d, sleef_with_libm_beyond<T, F, B, Libm>);
}

// C's fmod, exact: SLEEF's loses the result when x / y is huge.
struct Fmod {
  float operator()(float a, float b) const { return __builtin_fmodf(a, b); }
  double operator()(double a, double b) const { return __builtin_fmod(a, b); }
};

// One X per SLEEF function: op, SLEEF name, f32 accuracy, f64 accuracy
// (u35 is 3.5 ulp, u10 1.0 ulp, u15 1.5 ulp).
#define SLUICE_SLEEF_UNARY(X)                                                          \
  X(Expm1, expm1, u10, u10) X(Log, log, u10, u10) X(Cbrt, cbrt, u10, u10)              \
  X(Sin, sin, u10, u10) X(Cos, cos, u10, u10) X(Tan, tan, u10, u10)                    \
  X(Asin, asin, u10, u10) X(Acos, acos, u10, u10) X(Atan, atan, u10, u10)              \
  X(Atanh, atanh, u10, u10) X(Erf, erf, u10, u10) X(Erfc, erfc, u15, u15)

// The same for the functions of bounded domain: op, name, domain, libm.
#define SLUICE_SLEEF_BOUNDED(X)                                        \
  X(Sinh, sinh, (Beyond{88, 709}), libm_sinh)                          \
  X(Cosh, cosh, (Beyond{88, 709}), libm_cosh)                          \
  X(Asinh, asinh, (Beyond{1.8e19, 1.34e154}), libm_asinh)              \
  X(Acosh, acosh, (Beyond{1.8e19, 1.34e154}), libm_acosh)              \
  X(Log1p, log1p, (Beyond{1e38, 1e307}), libm_log1p)

// A vector function of T for op, plain and with its affine prologue.
template <typename T, typename F>
void set_vector(KernelTable& t, Op op) {
  constexpr DType d = std::is_same_v<T, float> ? DType::F32 : DType::F64;
  set(t, op, d, vector_unary<T, F>);
  t.affine[static_cast<int>(op)][static_cast<int>(d)] = vector_affine<T, F>;
}

}  // namespace

void fill_math_kernels(KernelTable& t) {
#define SLUICE_SET_SLEEF(op, fn, uf, ud)                    \
  set_vector<float, SLUICE_SLEEF_F(fn, uf)>(t, Op::op); \
  set_vector<double, SLUICE_SLEEF_D(fn, ud)>(t, Op::op);
  SLUICE_SLEEF_UNARY(SLUICE_SET_SLEEF)
#undef SLUICE_SET_SLEEF
#define SLUICE_SET_BOUNDED(op, fn, beyond, libm)                                 \
  set_bounded<float, SLUICE_SLEEF_F(fn, u10), beyond, libm>(t, Op::op); \
  set_bounded<double, SLUICE_SLEEF_D(fn, u10), beyond, libm>(t, Op::op);
  SLUICE_SLEEF_BOUNDED(SLUICE_SET_BOUNDED)
#undef SLUICE_SET_BOUNDED
  set_vector<float, F32Fn<exp_f32>>(t, Op::Exp);
  set_vector<double, SLUICE_SLEEF_D(exp, u10)>(t, Op::Exp);
  set_vector<float, F32Fn<tanh_f32>>(t, Op::Tanh);
  set_vector<double, SLUICE_SLEEF_D(tanh, u10)>(t, Op::Tanh);
  set_vector<float, F32Fn<sigmoid_f32>>(t, Op::Sigmoid);
  set(t, Op::Pow, DType::F32, pow_kernel<float, SLUICE_SLEEF_F(pow, u10)>);
  set(t, Op::Pow, DType::F64, pow_kernel<double, SLUICE_SLEEF_D(pow, u10)>);
  set(t, Op::Atan2, DType::F32, vector_binary<float, SLUICE_SLEEF_F(atan2, u10)>);
  set(t, Op::Atan2, DType::F64, vector_binary<double, SLUICE_SLEEF_D(atan2, u10)>);
  set(t, Op::Remainder, DType::F32, binary_kernel<float, float, Fmod>);
  set(t, Op::Remainder, DType::F64, binary_kernel<double, double, Fmod>);
  set(t, Op::Sqrt, DType::F32, unary_kernel<float, float, Sqrt>);
  set(t, Op::Sqrt, DType::F64, unary_kernel<double, double, Sqrt>);
  set(t, Op::Rsqrt, DType::F32, unary_kernel<float, float, Rsqrt>);
  set(t, Op::Rsqrt, DType::F64, unary_kernel<double, double, Rsqrt>);
  set(t, Op::Sigmoid, DType::F64, sigmoid_f64);
  set(t, Op::ErfInv, DType::F32, erf_inv<float>);
  set(t, Op::ErfInv, DType::F64, erf_inv<double>);
}

}  // namespace sluice::cpu::SLUICE_ISA
