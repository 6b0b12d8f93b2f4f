// Complex transcendental kernels, shared by every ISA's table: scalar
// std::complex code (glibc's cexp, clog, csqrt, ...) that vector registers
// would not speed up. Complex add/multiply/divide and the comparisons are
// plain loops in elementwise_isa.cpp.

#include <cmath>
#include <complex>

#include "devices/cpu/kernels/isa.h"

namespace sluice::cpu {
namespace {

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
// e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2).
struct Expm1 {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
    F x = z.real(), y = z.imag(), s = std::sin(y / 2);
    return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
  }
};
// log(1 + z) without cancelling near 0: |1 + z|^2 = 1 + (2x + x^2 + y^2).
struct Log1p {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
    F x = z.real(), y = z.imag();
    return {F(0.5) * std::log1p(x * (2 + x) + y * y), std::atan2(y, 1 + x)};
  }
};
struct Abs {
  template <typename F> F operator()(std::complex<F> z) const { return std::abs(z); }
};
// z / |z|, and 0 for 0.
struct Sign {
  template <typename F> std::complex<F> operator()(std::complex<F> z) const {
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
