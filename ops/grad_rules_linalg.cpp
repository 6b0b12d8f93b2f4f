// Reverse-mode rules of the linear algebra ops: JAX's jvp rules
// (jax/_src/lax/linalg.py) transposed, with JAX's convention for complex
// numbers (linear maps transposed without conjugation; conjugation is its
// own transpose). Matrices are the last two axes, batched over the rest.
// The rules of cholesky and eigh assume a Hermitian perturbation of a (as
// JAX's): differentiate through a symmetrised input, as the tests do. qr's
// rule needs m >= n (complete mode: a square a), as JAX's.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/results.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }
Expr zeros(const Spec& spec) { return broadcast(constant(0.0, spec.dtype), spec.shape); }

Axes batch_axes(int rank) {
  Axes axes(static_cast<size_t>(rank - 2));
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  return axes;
}

// a b over the last two axes.
Expr matmul(const Expr& a, const Expr& b) {
  const int r = a.rank();
  return dot(a, {r - 1}, batch_axes(r), b, {r - 2}, batch_axes(r));
}

// The last two axes swapped.
Expr mT(const Expr& x) {
  Axes axes = batch_axes(x.rank());
  axes.push_back(x.rank() - 1);
  axes.push_back(x.rank() - 2);
  return transpose(x, axes);
}

Expr conj(const Expr& x) { return is_complex(x.dtype()) ? conjugate(x) : x; }

// x where column - row <= k (tril(x, k)), or >= k (triu(x, k)); zero elsewhere.
Expr band(const Expr& x, int64_t k, bool lower) {
  const Spec index{DType::S64, x.shape()};
  const Expr offset = iota(index, x.rank() - 1) - iota(index, x.rank() - 2);
  return select(lower ? offset <= k : offset >= k, x, 0.0);
}
Expr tril(const Expr& x, int64_t k = 0) { return band(x, k, true); }

// v (of shape [..., n]) on the diagonal of an [..., n, n] matrix of dtype t.
Expr diagonal_matrix(const Expr& v, DType t) {
  std::vector<int64_t> dims = v.shape().dims();
  dims.push_back(dims.back());
  const Shape shape(dims);
  Axes axes = batch_axes(static_cast<int>(dims.size()));
  axes.push_back(static_cast<int64_t>(dims.size()) - 1);
  return eye({t, shape}) * broadcast(as_type(v, t), shape, axes);
}

// A vector b of a solve as the matrix it stands for: a column [..., n, 1]
// on the left of a solve, a row [..., 1, n] on the right.
Expr as_matrix(const Expr& v, bool column) {
  std::vector<int64_t> dims = v.shape().dims();
  dims.insert(column ? dims.end() : dims.end() - 1, 1);
  return reshape(v, Shape(dims));
}

Expr or_zeros(const Expr& ct, const Spec& spec) { return ct ? ct : zeros(spec); }

// The results of a node with several, as Exprs (CSE merges them with the
// result nodes the builder made).
Tuple results(const NodePtr& n) {
  Tuple r;
  const std::vector<Spec> specs = result_specs(*n);
  for (size_t i = 0; i < specs.size(); ++i)
    r.push_back(detail::result_of(n, static_cast<int64_t>(i), specs[i]));
  return r;
}

}  // namespace

// L = cholesky(A): dL = L Φ(L⁻¹ S L⁻ᴴ), S = (dA + dAᴴ) / 2, Φ the lower
// triangle with its diagonal halved. Transposed: Ā = (G + Gᴴ) / 2 with
// G = L⁻ᵀ Φ(Lᵀ C) conj(L)⁻¹.
std::vector<Expr> grad_cholesky(const NodePtr& n, const Expr& ct) {
  const Expr l(n);
  const Expr p = matmul(mT(l), ct);
  const Expr phi = tril(p) - 0.5 * (p * eye(p.spec()));
  const Expr t = triangular_solve(l, phi, {.transform_a = TriangularTransform::Transpose});
  const Expr g = triangular_solve(conj(l), t, {.left_side = false});
  return {0.5 * (g + conj(mT(g)))};
}

// x = op(a)⁻¹ b (or b op(a)⁻¹): b's cotangent solves with op(a)ᵀ; a's is
// -b̄ xᵀ (or -xᵀ b̄) taken back through op and kept to the triangle read.
std::vector<Expr> grad_triangular_solve(const NodePtr& n, const Expr& ct) {
  const LinAlgAttrs& o = n->attrs.linalg;
  const Expr a = operand(n);
  const bool vector = n->spec.shape.rank() == a.rank() - 1;
  const Expr c = vector ? as_matrix(ct, o.left_side) : ct;
  const Expr x = vector ? as_matrix(Expr(n), o.left_side) : Expr(n);
  // op(a)ᵀ: aᵀ, a, or conj(a) for op(a) = a, aᵀ, aᴴ.
  const bool conjugate_transpose = o.transform == TriangularTransform::ConjugateTranspose;
  const TriangularTransform back =
      o.transform == TriangularTransform::None ? TriangularTransform::Transpose : TriangularTransform::None;
  const Expr g = triangular_solve(conjugate_transpose ? conj(a) : a, c,
                                  {.left_side = o.left_side, .lower = o.lower, .transform_a = back});
  const Expr op_bar = -(o.left_side ? matmul(g, mT(x)) : matmul(mT(x), g));
  Expr a_bar = op_bar;
  if (o.transform == TriangularTransform::Transpose) a_bar = mT(op_bar);
  if (conjugate_transpose) a_bar = conj(mT(op_bar));
  return {band(a_bar, 0, o.lower), vector ? reshape(g, n->spec.shape) : g};
}

// x = a⁻¹ b: b̄ = a⁻ᵀ x̄, ā = -b̄ xᵀ.
std::vector<Expr> grad_solve(const NodePtr& n, const Expr& ct) {
  const Expr a = operand(n);
  const bool vector = n->spec.shape.rank() == a.rank() - 1;
  const Expr b_bar = solve(mT(a), ct);
  const Expr g = vector ? as_matrix(b_bar, true) : b_bar;
  const Expr x = vector ? as_matrix(Expr(n), true) : Expr(n);
  return {-matmul(g, mT(x)), b_bar};
}

// JAX's qr_jvp_rule, for m >= n: with Y = dA R⁻¹, Z = Qᴴ Y,
// D = tril(Z, -1) - tril(Z, -1)ᴴ + I (Z - re Z):  dQ = Q (D - Z) + Y,
// dR = (Z - D) R. Transposed step by step, from dR and dQ back to dA.
std::vector<Expr> grad_qr(const NodePtr& n, const std::vector<Expr>& cts) {
  const Tuple factors = results(n);
  const Expr &q = factors[0], &r = factors[1];
  const Shape& a = n->operands[0]->spec.shape;
  const int64_t m = a[a.rank() - 2], cols = a[a.rank() - 1];
  if (m < cols || q.shape()[q.rank() - 1] != cols)
    infer::shape_error("grad", infer::cat("qr of ", n->operands[0]->spec),
                       "a matrix with at least as many rows as columns (complete mode: square)", a.str());
  const Expr q_bar = or_zeros(cts[0], q.spec()), r_bar = or_zeros(cts[1], r.spec());
  const Expr qt_q_bar = matmul(mT(q), q_bar);
  const Expr z0 = matmul(r_bar, mT(r)) - qt_q_bar;  // Z's cotangent through dR and dQ
  const Expr d_bar = -z0;                           // D's
  Expr z_bar = z0 + tril(d_bar - conj(mT(d_bar)), -1);
  if (is_complex(q.dtype()))
    z_bar = z_bar + eye(d_bar.spec()) * (d_bar - as_type(real(d_bar), d_bar.dtype()));
  const Expr y_bar = q_bar + matmul(conj(q), z_bar);
  return {triangular_solve(
      r, y_bar, {.left_side = false, .lower = false, .transform_a = TriangularTransform::Transpose})};
}

// JAX's lu_jvp_rule, for a square a = P L U: with M = L⁻¹ Pᵀ dA U⁻¹,
// dL = L tril(M, -1) and dU = triu(M) U (p, piecewise constant, has none).
// Transposed: Ā = P L⁻ᵀ (tril(Lᵀ L̄, -1) + triu(Ū Uᵀ)) U⁻ᵀ.
std::vector<Expr> grad_lu(const NodePtr& n, const std::vector<Expr>& cts) {
  const Tuple plu = results(n);
  const Expr &p = plu[0], &l = plu[1], &u = plu[2];
  Expr m_bar = zeros(l.spec());
  if (cts[1]) m_bar = m_bar + tril(matmul(mT(l), cts[1]), -1);
  if (cts[2]) m_bar = m_bar + band(matmul(cts[2], mT(u)), 0, false);
  const Expr x_bar =
      triangular_solve(u, triangular_solve(l, m_bar, {.transform_a = TriangularTransform::Transpose}),
                       {.left_side = false, .lower = false, .transform_a = TriangularTransform::Transpose});
  return {matmul(as_type(p, l.dtype()), x_bar)};
}

// JAX's eigh_jvp_rule: with K = Vᴴ dA V and F_ij = 1 / (w_j - w_i) off the
// diagonal (0 on it), dV = V (F ∘ K) and dw = re diag(K). Transposed:
// Ā = conj(V) (F ∘ (Vᵀ V̄) + diag(w̄)) Vᵀ.
std::vector<Expr> grad_eigh(const NodePtr& n, const std::vector<Expr>& cts) {
  const Tuple wv = results(n);
  const Expr &w = wv[0], &v = wv[1];
  const Shape& s = v.shape();
  const int r = v.rank();
  Axes rows = batch_axes(r), cols = batch_axes(r);
  rows.push_back(r - 2);
  cols.push_back(r - 1);
  const Expr id = eye({w.dtype(), s});
  const Expr f = 1.0 / (id + broadcast(w, s, cols) - broadcast(w, s, rows)) - id;
  Expr k = cts[1] ? f * matmul(mT(v), cts[1]) : zeros(v.spec());
  if (cts[0]) k = k + diagonal_matrix(cts[0], v.dtype());
  return {matmul(matmul(conj(v), k), mT(v))};
}

}  // namespace sluice::grad_rules
