// Reverse-mode rules of elementwise ops and conversions. Their operands
// already have the result's shape and compute dtype (the builders made
// broadcasts and conversions explicit nodes, which have rules of their own),
// so a cotangent needs neither reducing nor converting here. The formulas,
// and their choices at ties and zeros, are JAX's (jax/_src/lax/lax.py).
#include <numbers>

#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }
Expr result(const NodePtr& n) { return Expr(n); }
// A scalar of e's dtype: keeps every rule in the dtype it differentiates.
Expr scalar(double v, const Expr& e) { return constant(v, e.dtype()); }
Expr zero(const Expr& e) { return scalar(0.0, e); }

}  // namespace

std::vector<Expr> grad_none(const NodePtr&, const Expr&) { return {}; }

// ---- unary

std::vector<Expr> grad_negate(const NodePtr&, const Expr& ct) { return {-ct}; }

std::vector<Expr> grad_abs(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n), y = result(n);
  if (!is_complex(x.dtype())) return {ct * sign(x)};
  // d|z| = real(conj(z) dz) / |z|, transposed: ct conj(z) / |z| (|z| = 0: 1).
  Expr safe = as_type(select(y == 0.0, scalar(1.0, y), y), x.dtype());
  return {as_type(ct, x.dtype()) * conjugate(x) / safe};
}

std::vector<Expr> grad_exp(const NodePtr& n, const Expr& ct) { return {ct * result(n)}; }
std::vector<Expr> grad_expm1(const NodePtr& n, const Expr& ct) { return {ct * (result(n) + 1.0)}; }
std::vector<Expr> grad_log(const NodePtr& n, const Expr& ct) { return {ct / operand(n)}; }
std::vector<Expr> grad_log1p(const NodePtr& n, const Expr& ct) { return {ct / (operand(n) + 1.0)}; }
std::vector<Expr> grad_sqrt(const NodePtr& n, const Expr& ct) { return {ct * 0.5 / result(n)}; }
std::vector<Expr> grad_rsqrt(const NodePtr& n, const Expr& ct) {
  return {ct * -0.5 * result(n) / operand(n)};
}
std::vector<Expr> grad_cbrt(const NodePtr& n, const Expr& ct) {
  Expr y = result(n);
  return {ct / (3.0 * y * y)};
}
std::vector<Expr> grad_sin(const NodePtr& n, const Expr& ct) { return {ct * cos(operand(n))}; }
std::vector<Expr> grad_cos(const NodePtr& n, const Expr& ct) { return {-ct * sin(operand(n))}; }
std::vector<Expr> grad_tan(const NodePtr& n, const Expr& ct) {
  Expr y = result(n);
  return {ct * (1.0 + y * y)};
}
std::vector<Expr> grad_asin(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct * rsqrt(1.0 - x * x)};
}
std::vector<Expr> grad_acos(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {-ct * rsqrt(1.0 - x * x)};
}
std::vector<Expr> grad_atan(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct / (1.0 + x * x)};
}
std::vector<Expr> grad_sinh(const NodePtr& n, const Expr& ct) { return {ct * cosh(operand(n))}; }
std::vector<Expr> grad_cosh(const NodePtr& n, const Expr& ct) { return {ct * sinh(operand(n))}; }
std::vector<Expr> grad_tanh(const NodePtr& n, const Expr& ct) {
  Expr y = result(n);
  return {ct * (1.0 - y * y)};
}
std::vector<Expr> grad_asinh(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct * rsqrt(x * x + 1.0)};
}
std::vector<Expr> grad_acosh(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct * rsqrt((x - 1.0) * (x + 1.0))};
}
std::vector<Expr> grad_atanh(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct / ((1.0 - x) * (1.0 + x))};
}
std::vector<Expr> grad_sigmoid(const NodePtr& n, const Expr& ct) {
  Expr y = result(n);
  return {ct * y * (1.0 - y)};
}
std::vector<Expr> grad_erf(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct * (2.0 / std::sqrt(std::numbers::pi)) * exp(-(x * x))};
}
std::vector<Expr> grad_erfc(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n);
  return {ct * (-2.0 / std::sqrt(std::numbers::pi)) * exp(-(x * x))};
}
std::vector<Expr> grad_erf_inv(const NodePtr& n, const Expr& ct) {
  Expr y = result(n);
  return {ct * (std::sqrt(std::numbers::pi) / 2.0) * exp(y * y)};
}

// real, imag and conjugate are linear: their rules are their transposes.
std::vector<Expr> grad_real(const NodePtr& n, const Expr& ct) { return {as_type(ct, operand(n).dtype())}; }
std::vector<Expr> grad_imag(const NodePtr& n, const Expr& ct) {
  const DType t = operand(n).dtype();
  return {as_type(ct, t) * constant(Literal::scalar(t, complex128(0.0, -1.0)))};
}
std::vector<Expr> grad_conjugate(const NodePtr&, const Expr& ct) { return {conjugate(ct)}; }

// ---- binary

std::vector<Expr> grad_add(const NodePtr&, const Expr& ct) { return {ct, ct}; }
std::vector<Expr> grad_subtract(const NodePtr&, const Expr& ct) { return {ct, -ct}; }
std::vector<Expr> grad_multiply(const NodePtr& n, const Expr& ct) {
  return {ct * operand(n, 1), ct * operand(n, 0)};
}
std::vector<Expr> grad_divide(const NodePtr& n, const Expr& ct) {
  Expr a = operand(n, 0), b = operand(n, 1);
  return {ct / b, -ct * a / (b * b)};
}

// x^0 has no slope in x (also at x = 0, where b x^(b-1) would be 0 * inf),
// and log x is taken as 0 at x = 0 (where x^b's slope in b is 0 or inf).
std::vector<Expr> grad_pow(const NodePtr& n, const Expr& ct) {
  Expr a = operand(n, 0), b = operand(n, 1), y = result(n);
  Expr b_zero = b == 0.0;
  Expr da = select(b_zero, zero(b), b * pow(a, select(b_zero, scalar(1.0, b), b - 1.0)));
  Expr db = log(select(a == 0.0, scalar(1.0, a), a)) * y;
  return {ct * da, ct * db};
}

// a - b trunc(a / b): the slope in b is -trunc(a / b).
std::vector<Expr> grad_remainder(const NodePtr& n, const Expr& ct) {
  Expr q = operand(n, 0) / operand(n, 1);
  return {ct, -ct * sign(q) * floor(abs(q))};
}

std::vector<Expr> grad_atan2(const NodePtr& n, const Expr& ct) {
  Expr a = operand(n, 0), b = operand(n, 1);
  Expr d = a * a + b * b;
  return {ct * b / d, -ct * a / d};
}

// Where both operands equal the result each gets half (JAX's _balanced_eq).
std::vector<Expr> grad_min_max(const NodePtr& n, const Expr& ct) {
  Expr a = operand(n, 0), b = operand(n, 1), y = result(n);
  auto share = [&](const Expr& mine, const Expr& other) {
    return select(mine == y, select(other == y, scalar(0.5, y), scalar(1.0, y)), zero(y));
  };
  return {ct * share(a, b), ct * share(b, a)};
}

// ---- ternary and conversions

std::vector<Expr> grad_select(const NodePtr& n, const Expr& ct) {
  Expr p = operand(n, 0);
  return {Expr(), select(p, ct, zero(ct)), select(p, zero(ct), ct)};
}

// clip(x, lo, hi): x's gradient where lo < x < hi strictly, lo's where it
// lifts x (and is below hi), hi's where it lowers x (JAX's clamp).
std::vector<Expr> grad_clip(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n, 0), lo = operand(n, 1), hi = operand(n, 2);
  return {select(logical_and(x > lo, x < hi), ct, zero(ct)),
          select(logical_and(lo > x, lo < hi), ct, zero(ct)), select(hi < x, ct, zero(ct))};
}

// Between inexact types: the transpose converts back (complex to real keeps
// the real part, real to complex adds a zero imaginary part, as JAX).
std::vector<Expr> grad_as_type(const NodePtr& n, const Expr& ct) { return {as_type(ct, operand(n).dtype())}; }

}  // namespace sluice::grad_rules
