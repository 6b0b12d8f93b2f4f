// Complex transcendental kernels, shared by every ISA's table: scalar
// std::complex code (glibc's cexp, clog, csqrt, ...) that vector registers
// would not speed up. Complex add/multiply/divide and the comparisons are
// plain loops in elementwise_isa.cpp.

#include <cmath>
#include <complex>
#include <limits>

#include <sluice/devices/cpu/kernels/isa.h>

namespace sluice::cpu {
namespace {

// Thresholds of the scaled formulas: above log(max), e^x overflows; above
// sqrt(max) / 2, squares (and x (2 + x)) may.
template <typename F>
inline const F kLogMax = std::log(std::numeric_limits<F>::max());
template <typename F>
inline const F kSqrtMax = std::sqrt(std::numeric_limits<F>::max()) / 2;

template <typename O, typename A, typename F>
void cx_unary(void* out, const void* a, const void*, const void*, int64_t n) {
  O* o = static_cast<O*>(out);
  const A* x = static_cast<const A*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = F{}(x[i]);
}

template <typename C, typename F>
void cx_binary(void* out, const void* a, const void* b, const void*, int64_t n) {
  C* o = static_cast<C*>(out);
  const C* x = static_cast<const C*>(a);
  const C* y = static_cast<const C*>(b);
  for (int64_t i = 0; i < n; ++i) o[i] = F{}(x[i], y[i]);
}

#define SLUICE_CX_FN(Name, expr)                                         \
  struct Name {                                                          \
    template <typename F> std::complex<F> operator()(std::complex<F> z) const { return expr; } \
  };
SLUICE_CX_FN(Exp, std::exp(z))
SLUICE_CX_FN(Log, std::log(z))
SLUICE_CX_FN(Sqrt, std::sqrt(z))
SLUICE_CX_FN(Rsqrt, F(1) / std::sqrt(z))
SLUICE_CX_FN(Sin, std::sin(z))
SLUICE_CX_FN(Cos, std::cos(z))
SLUICE_CX_FN(Tan, std::tan(z))
SLUICE_CX_FN(Asin, std::asin(z))
SLUICE_CX_FN(Acos, std::acos(z))
SLUICE_CX_FN(Atan, std::atan(z))
SLUICE_CX_FN(Sinh, std::sinh(z))
SLUICE_CX_FN(Cosh, std::cosh(z))
SLUICE_CX_FN(Tanh, std::tanh(z))
SLUICE_CX_FN(Asinh, std::asinh(z))
SLUICE_CX_FN(Acosh, std::acosh(z))
SLUICE_CX_FN(Atanh, std::atanh(z))
SLUICE_CX_FN(Sigmoid, F(1) / (F(1) + std::exp(-z)))
#undef SLUICE_CX_FN

// exp(z) - 1 without cancelling near 0:
// e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2). Where e^x overflows but
// e^x sin y (or e^x cos y) may not, e^x is applied as (e^(x/2) t) e^(x/2),
// as C99's scaled cexp does; a real z keeps imaginary part y (not inf * 0).
struct Expm1 {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
    F x = z.real(), y = z.imag();
    if (y == 0) return {std::expm1(x), y};
    if (x > kLogMax<F>) {
      F h = std::exp(x / 2);
      return {h * std::cos(y) * h - 1, h * std::sin(y) * h};
    }
    F s = std::sin(y / 2);
    return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
  }
};
// log(1 + z) without cancelling near 0: |1 + z|^2 = 1 + (2x + x^2 + y^2).
// Far from 0 (where that sum could overflow) there is nothing to cancel:
// log |1 + z| by hypot, which scales.
struct Log1p {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
    F x = z.real(), y = z.imag();
    if (std::fabs(x) > kSqrtMax<F> || std::fabs(y) > kSqrtMax<F>) {
      return {std::log(std::hypot(1 + x, y)), std::atan2(y, 1 + x)};
    }
    return {F(0.5) * std::log1p(x * (2 + x) + y * y), std::atan2(y, 1 + x)};
  }
};
struct Abs {
  template <typename F> F operator()(std::complex<F> z) const { return std::abs(z); }
};
// z / |z|, and 0 for 0. Subnormal parts are scaled up (exactly, by a power
// of 2) first: |z| rounded to a subnormal has too few bits to divide by.
struct Sign {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
    if (std::fabs(z.real()) < std::numeric_limits<F>::min() && std::fabs(z.imag()) < std::numeric_limits<F>::min()) {
      constexpr int kScale = std::numeric_limits<F>::digits;
      z = {std::ldexp(z.real(), kScale), std::ldexp(z.imag(), kScale)};
    }
    F r = std::abs(z);
    return r == 0 ? std::complex<F>(0) : z / r;
  }
};
// As numpy: z^0 is 1, 0^w is 0 for Re(w) > 0; otherwise exp(w log z).
struct Pow {
  template <typename F> std::complex<F> operator()(std::complex<F> z, std::complex<F> w) const {
    if (w == std::complex<F>(0)) return 1;
    if (z == std::complex<F>(0) && w.real() > 0) return 0;
    return std::pow(z, w);
  }
};

template <typename F>
void fill(KernelTable& t, DType d) {
  using C = std::complex<F>;
  auto set = [&](Op op, Kernel k) { t.op[static_cast<int>(op)][static_cast<int>(d)] = k; };
  set(Op::Exp, cx_unary<C, C, Exp>);
  set(Op::Expm1, cx_unary<C, C, Expm1>);
  set(Op::Log, cx_unary<C, C, Log>);
  set(Op::Log1p, cx_unary<C, C, Log1p>);
  set(Op::Sqrt, cx_unary<C, C, Sqrt>);
  set(Op::Rsqrt, cx_unary<C, C, Rsqrt>);
  set(Op::Sin, cx_unary<C, C, Sin>);
  set(Op::Cos, cx_unary<C, C, Cos>);
  set(Op::Tan, cx_unary<C, C, Tan>);
  set(Op::Asin, cx_unary<C, C, Asin>);
  set(Op::Acos, cx_unary<C, C, Acos>);
  set(Op::Atan, cx_unary<C, C, Atan>);
  set(Op::Sinh, cx_unary<C, C, Sinh>);
  set(Op::Cosh, cx_unary<C, C, Cosh>);
  set(Op::Tanh, cx_unary<C, C, Tanh>);
  set(Op::Asinh, cx_unary<C, C, Asinh>);
  set(Op::Acosh, cx_unary<C, C, Acosh>);
  set(Op::Atanh, cx_unary<C, C, Atanh>);
  set(Op::Sigmoid, cx_unary<C, C, Sigmoid>);
  set(Op::Abs, cx_unary<F, C, Abs>);
  set(Op::Sign, cx_unary<C, C, Sign>);
  set(Op::Pow, cx_binary<C, Pow>);
}

}  // namespace

void fill_complex_kernels(KernelTable& t) {
  fill<float>(t, DType::C64);
  fill<double>(t, DType::C128);
}

}  // namespace sluice::cpu
