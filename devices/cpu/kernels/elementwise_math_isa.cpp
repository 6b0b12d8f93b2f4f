// Float math kernels of one ISA (compiled once per ISA, see simd_vec.h):
// SLEEF's vector functions for the transcendental set, plain loops for
// sqrt/rsqrt, and the composites SLEEF lacks (sigmoid, erf_inv). Every f32
// function stays within 4 ulp of the correctly rounded result
// (tests/devices/math_accuracy_test.cpp measures it).

#include <limits>

#include "devices/cpu/kernels/simd_vec.h"

namespace sluice::cpu::SLUICE_ISA {
namespace {

template <typename T, typename F>
void sleef_unary(void* out, const void* a, const void*, const void*, int64_t n) {
  vmap<T, F>(static_cast<T*>(out), static_cast<const T*>(a), n);
}
template <typename T, typename F>
void sleef_binary(void* out, const void* a, const void* b, const void*, int64_t n) {
  vmap<T, F>(static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b), n);
}

struct Sqrt {
  float operator()(float a) const { return __builtin_sqrtf(a); }
  double operator()(double a) const { return __builtin_sqrt(a); }
};
struct Rsqrt {
  template <typename T> T operator()(T a) const { return T(1) / Sqrt{}(a); }
};

template <typename T>
using SleefExp = std::conditional_t<std::is_same_v<T, float>, SLUICE_SLEEF_F(exp, u10), SLUICE_SLEEF_D(exp, u10)>;

// Composites work through a stack block, so that each SLEEF call and each
// plain loop between them runs over a whole vectorizable array.
inline constexpr int64_t kBlock = 256;

// sigmoid(x) = 1 / (1 + e^-x), evaluated with e = e^-|x| <= 1 so that
// nothing overflows: 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0.
template <typename T>
void sigmoid(void* out, const void* a, const void*, const void*, int64_t n) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  alignas(64) T e[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    for (int64_t i = 0; i < m; ++i) e[i] = -__builtin_copysign(x[i0 + i], T(1));
    vmap<T, SleefExp<T>>(e, e, m);
    for (int64_t i = 0; i < m; ++i) {
      T s = T(1) / (T(1) + e[i]);
      o[i0 + i] = x[i0 + i] >= 0 ? s : e[i] * s;
    }
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
void erf_inv_block(double* y, const double* x, int64_t m) {
  alignas(64) double a[kBlock], w[kBlock], erf_y[kBlock], erfc_y[kBlock], d[kBlock];
  for (int64_t i = 0; i < m; ++i) {
    a[i] = __builtin_fabs(x[i]);
    w[i] = (1.0 - a[i]) * (1.0 + a[i]);
  }
  vmap<double, SLUICE_SLEEF_D(log, u10)>(w, w, m);
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
    y[i] = p * a[i];
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

// One X per SLEEF function: op, SLEEF name, f32 accuracy, f64 accuracy.
// u35 (3.5 ulp) only where it is much faster and still within 4 ulp.
#define SLUICE_SLEEF_UNARY(X)                                                          \
  X(Exp, exp, u10, u10) X(Expm1, expm1, u10, u10) X(Log, log, u10, u10)                \
  X(Log1p, log1p, u10, u10) X(Cbrt, cbrt, u10, u10) X(Sin, sin, u10, u10)              \
  X(Cos, cos, u10, u10) X(Tan, tan, u10, u10) X(Asin, asin, u10, u10)                  \
  X(Acos, acos, u10, u10) X(Atan, atan, u10, u10) X(Sinh, sinh, u10, u10)              \
  X(Cosh, cosh, u10, u10) X(Tanh, tanh, u35, u10) X(Asinh, asinh, u10, u10)            \
  X(Acosh, acosh, u10, u10) X(Atanh, atanh, u10, u10) X(Erf, erf, u10, u10)            \
  X(Erfc, erfc, u15, u15)

}  // namespace

void fill_math_kernels(KernelTable& t) {
#define SLUICE_SET_SLEEF(op, fn, uf, ud)                                    \
  set(t, Op::op, DType::F32, sleef_unary<float, SLUICE_SLEEF_F(fn, uf)>); \
  set(t, Op::op, DType::F64, sleef_unary<double, SLUICE_SLEEF_D(fn, ud)>);
  SLUICE_SLEEF_UNARY(SLUICE_SET_SLEEF)
#undef SLUICE_SET_SLEEF
  set(t, Op::Pow, DType::F32, sleef_binary<float, SLUICE_SLEEF_F(pow, u10)>);
  set(t, Op::Pow, DType::F64, sleef_binary<double, SLUICE_SLEEF_D(pow, u10)>);
  set(t, Op::Atan2, DType::F32, sleef_binary<float, SLUICE_SLEEF_F(atan2, u10)>);
  set(t, Op::Atan2, DType::F64, sleef_binary<double, SLUICE_SLEEF_D(atan2, u10)>);
  // C's fmod: exact, with the dividend's sign.
  set(t, Op::Remainder, DType::F32, sleef_binary<float, SLUICE_SLEEF_F(fmod, )>);
  set(t, Op::Remainder, DType::F64, sleef_binary<double, SLUICE_SLEEF_D(fmod, )>);
  set(t, Op::Sqrt, DType::F32, unary_kernel<float, float, Sqrt>);
  set(t, Op::Sqrt, DType::F64, unary_kernel<double, double, Sqrt>);
  set(t, Op::Rsqrt, DType::F32, unary_kernel<float, float, Rsqrt>);
  set(t, Op::Rsqrt, DType::F64, unary_kernel<double, double, Rsqrt>);
  set(t, Op::Sigmoid, DType::F32, sigmoid<float>);
  set(t, Op::Sigmoid, DType::F64, sigmoid<double>);
  set(t, Op::ErfInv, DType::F32, erf_inv<float>);
  set(t, Op::ErfInv, DType::F64, erf_inv<double>);
}

}  // namespace sluice::cpu::SLUICE_ISA
