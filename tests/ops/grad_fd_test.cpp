// Every differentiable op's gradient against central finite differences in
// f64 at random points, driven from the catalogue: an op whose entry names a
// gradient rule and that no case below exercises fails
// GradCatalogue.EveryDifferentiableOpHasAFiniteDifferenceCase, and a case
// whose traced function lacks an op it claims to cover fails too.
//
// Each case differentiates L(params) = sum(w * f(params)) (for a complex f:
// sum(w * real f + w' * imag f)) with fixed random weights w, so that every
// element of f's cotangent differs. An element passes when
// |analytic - numeric| <= tol * (1 + |numeric|); numeric is
// (L(x + h) - L(x - h)) / 2h with h = 1e-6 unless the case says otherwise,
// whose error in f64 is about 1e-10 for smooth functions of values near 1:
// tol 1e-6 leaves room without letting a wrong rule through.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <unordered_set>

#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/graph_walk.h>
#include "tests/ops/host_run.h"

namespace sluice {
namespace {

using testing::HostFunction;
using testing::Values;

struct Domain {
  double lo = -1, hi = 1;
};

struct FdCase {
  std::string name;
  std::vector<Op> covers;       // ops whose rules the case exercises
  std::vector<Shape> params;    // all f64
  std::vector<Domain> domains;  // per parameter; default [-1, 1]
  std::function<Expr(const std::vector<Expr>&)> f;
  double tol = 1e-6;
  double step = 1e-6;
};

void PrintTo(const FdCase& c, std::ostream* os) { *os << c.name; }

Expr i_unit() { return constant(Literal::scalar(DType::C128, complex128(0.0, 1.0))); }
Expr complex_of(const Expr& re, const Expr& im) {
  return as_type(re, DType::C128) + as_type(im, DType::C128) * i_unit();
}
Expr s64(int64_t v) { return constant(static_cast<double>(v), DType::S64); }

using P = const std::vector<Expr>&;

FdCase unary(Op op, Expr (*fn)(Expr), Domain d = {}) {
  return {std::string(op_name(op)), {op}, {Shape({2, 3})}, {d}, [fn](P p) { return fn(p[0]); }};
}
FdCase binary(Op op, Expr (*fn)(Expr, Expr), Domain a = {}, Domain b = {}) {
  return {std::string(op_name(op)), {op}, {Shape({2, 3}), Shape({2, 3})}, {a, b}, [fn](P p) {
            return fn(p[0], p[1]);
          }};
}

// ---- linear algebra: matrices kept well conditioned (a diagonal added),
// symmetric (Hermitian) inputs made inside the function, as JAX's tests do;
// eigenvectors and qr's factors enter the loss through |v|^2, which their
// signs (phases) do not change.
Expr plus_diagonal(const Expr& a, double d) { return a + eye(a.spec()) * d; }
// a aᴴ over the last two axes (a batch axis 0 when rank 3).
Expr gram(const Expr& a) {
  const int r = a.rank();
  const Axes batch = r == 3 ? Axes{0} : Axes{};
  return dot(a, {r - 1}, batch, is_complex(a.dtype()) ? conjugate(a) : a, {r - 1}, batch);
}
Expr symmetric(const Expr& a) { return a + transpose(is_complex(a.dtype()) ? conjugate(a) : a); }
Expr squared_modulus(const Expr& v) { return is_complex(v.dtype()) ? real(v * conjugate(v)) : v * v; }
Expr flat(const Expr& e) { return reshape(e, Shape{e.spec().size()}); }

std::vector<FdCase> linalg_cases() {
  const TriangularTransform transpose_a = TriangularTransform::Transpose,
                            adjoint = TriangularTransform::ConjugateTranspose;
  return {
      {"cholesky",
       {Op::Cholesky},
       {Shape({2, 3, 3})},
       {},
       [](P p) { return cholesky(plus_diagonal(gram(p[0]), 3)); }},
      {"cholesky_complex",
       {Op::Cholesky, Op::Conjugate},
       {Shape({3, 3}), Shape({3, 3})},
       {},
       [](P p) { return cholesky(plus_diagonal(gram(complex_of(p[0], p[1])), 3)); }},
      {"triangular_solve_left_lower",
       {Op::TriangularSolve},
       {Shape({3, 3}), Shape({3, 2})},
       {},
       [](P p) { return triangular_solve(plus_diagonal(p[0], 3), p[1]); }},
      {"triangular_solve_right_upper_transposed",
       {Op::TriangularSolve},
       {Shape({2, 3, 3}), Shape({2, 4, 3})},
       {},
       [&](P p) {
         return triangular_solve(plus_diagonal(p[0], 3), p[1],
                                 {.left_side = false, .lower = false, .transform_a = transpose_a});
       }},
      {"triangular_solve_vector_adjoint_complex",
       {Op::TriangularSolve},
       {Shape({3, 3}), Shape({3, 3}), Shape({3})},
       {},
       [&](P p) {
         return triangular_solve(plus_diagonal(complex_of(p[0], p[1]), 3), p[2] * p[2],
                                 {.lower = false, .transform_a = adjoint});
       }},
      {"triangular_solve_right_vector",
       {Op::TriangularSolve},
       {Shape({3, 3}), Shape({3})},
       {},
       [](P p) { return triangular_solve(plus_diagonal(p[0], 3), p[1], {.left_side = false}); }},
      {"solve",
       {Op::Solve},
       {Shape({2, 3, 3}), Shape({2, 3})},
       {},
       [](P p) { return solve(plus_diagonal(p[0], 3), p[1]); }},
      {"solve_matrix_complex",
       {Op::Solve},
       {Shape({3, 3}), Shape({3, 3}), Shape({3, 2})},
       {},
       [](P p) { return solve(plus_diagonal(complex_of(p[0], p[1]), 3), p[2]); }},
      {"qr",
       {Op::Qr, Op::Result},
       {Shape({2, 4, 3})},
       {},
       [](P p) {
         const Qr f = qr(p[0]);
         return concatenate({flat(squared_modulus(f.q)), flat(squared_modulus(f.r))});
       }},
      {"qr_complete_square",
       {Op::Qr, Op::Result},
       {Shape({3, 3})},
       {},
       [](P p) {
         const Qr f = qr(p[0], {.mode = QrMode::Complete});
         return flat(squared_modulus(f.q)) * 2.0 + flat(squared_modulus(f.r));
       }},
      {"qr_complex",
       {Op::Qr, Op::Result},
       {Shape({3, 2}), Shape({3, 2})},
       {},
       [](P p) {
         const Qr f = qr(complex_of(p[0], p[1]));
         return concatenate({flat(squared_modulus(f.q)), flat(squared_modulus(f.r))});
       }},
      {"qr_r_only",
       {Op::Qr, Op::Result},
       {Shape({3, 3})},
       {},
       [](P p) { return squared_modulus(qr(p[0]).r); }},
      // Pivots stay where they are for small steps from a random point.
      {"lu",
       {Op::Lu, Op::Result},
       {Shape({2, 4, 4})},
       {},
       [](P p) {
         const Lu f = lu(p[0]);
         return concatenate({flat(f.l), flat(f.u)});
       }},
      {"lu_u_only_complex",
       {Op::Lu, Op::Result},
       {Shape({3, 3}), Shape({3, 3})},
       {},
       [](P p) { return lu(complex_of(p[0], p[1])).u; }},
      {"eigh",
       {Op::Eigh, Op::Result},
       {Shape({2, 3, 3})},
       {},
       [](P p) {
         const Eigh e = eigh(p[0] + transpose(p[0], {0, 2, 1}));
         return concatenate({flat(e.eigenvalues), flat(squared_modulus(e.eigenvectors))});
       }},
      {"eigh_complex",
       {Op::Eigh, Op::Result},
       {Shape({3, 3}), Shape({3, 3})},
       {},
       [](P p) {
         const Eigh e = eigh(symmetric(complex_of(p[0], p[1])));
         return concatenate({e.eigenvalues, flat(squared_modulus(e.eigenvectors))});
       }},
      // A block's gradient is its fallback's (softmax along the last axis is one).
      {"block_softmax", {Op::Block}, {Shape({3, 5})}, {}, [](P p) { return softmax(p[0]); }},
      // reduce and window_reduce with a function of one's own: the built-in
      // ones are the built-in reductions; any other goes through its ops
      // (for reduce, slices folded pairwise, an odd one carried by
      // concatenate; for window_reduce, one slice per window offset).
      {"reduce_logaddexp",
       {Op::Concatenate},
       {Shape({3, 51})},
       {},
       [](P p) {
         return reduce(p[0], -INFINITY, [](Expr a, Expr e) { return max(a, e) + log1p(exp(-abs(a - e))); },
                       {.axes = {1}});
       }},
      {"reduce_product_is_product",
       {Op::Product},
       {Shape({3, 4})},
       {},
       [](P p) { return reduce(p[0], 1.0, [](Expr a, Expr e) { return a * e; }, {.axes = {0}}); }},
      {"window_reduce_hypot",
       {Op::Slice, Op::Pad},
       {Shape({4, 7})},
       {},
       [](P p) {
         return window_reduce(p[0], 0.5, [](Expr a, Expr e) { return sqrt(a * a + e * e); }, {2, 3},
                              {.strides = {1, 2}, .padding = {{1, 0}, {0, 1}}, .window_dilations = {2, 1}});
       }},
      // The vectors themselves: their signs (phases) are fixed by the
      // components they hold, so they are a function of a, and its gradient
      // is the fixing's too.
      {"eigh_vectors",
       {Op::Eigh, Op::Result},
       {Shape({2, 3, 3})},
       {},
       [](P p) {
         return flat(eigh(p[0] + transpose(p[0], {0, 2, 1})).eigenvectors);
       }},
      {"eigh_vectors_complex",
       {Op::Eigh, Op::Result},
       {Shape({3, 3}), Shape({3, 3})},
       {},
       [](P p) { return flat(eigh(symmetric(complex_of(p[0], p[1]))).eigenvectors); }},
      {"eigh_values_only",
       {Op::Eigh, Op::Result},
       {Shape({4, 4})},
       {},
       [](P p) { return eigh(symmetric(p[0])).eigenvalues; }},
  };
}

std::vector<FdCase> cases() {
  const Domain positive{0.5, 2}, unit{-0.8, 0.8};
  std::vector<FdCase> c = {
      unary(Op::Negate, negate),
      unary(Op::Abs, abs),
      unary(Op::Exp, exp),
      unary(Op::Expm1, expm1),
      unary(Op::Log, log, positive),
      unary(Op::Log1p, log1p, {-0.5, 1}),
      unary(Op::Sqrt, sqrt, positive),
      unary(Op::Rsqrt, rsqrt, positive),
      unary(Op::Cbrt, cbrt, positive),
      unary(Op::Sin, sin),
      unary(Op::Cos, cos),
      unary(Op::Tan, tan),
      unary(Op::Asin, asin, unit),
      unary(Op::Acos, acos, unit),
      unary(Op::Atan, atan),
      unary(Op::Sinh, sinh),
      unary(Op::Cosh, cosh),
      unary(Op::Tanh, tanh),
      unary(Op::Asinh, asinh),
      unary(Op::Acosh, acosh, {1.5, 3}),
      unary(Op::Atanh, atanh, unit),
      unary(Op::Sigmoid, sigmoid, {-3, 3}),
      unary(Op::Erf, erf),
      unary(Op::Erfc, erfc),
      unary(Op::ErfInv, erf_inv, unit),
      binary(Op::Add, add),
      binary(Op::Subtract, subtract),
      binary(Op::Multiply, multiply),
      binary(Op::Divide, divide, {}, positive),
      binary(Op::Pow, pow, positive, {-1, 2}),
      // Away from the jumps at integer a / b.
      binary(Op::Remainder, remainder, {0.1, 0.9}, {1.1, 1.3}),
      binary(Op::Atan2, atan2),
      binary(Op::Min, min),
      binary(Op::Max, max),
      // complex numbers: z = a + ib from two real parameters
      {"complex_abs",
       {Op::Abs, Op::AsType},
       {Shape({4}), Shape({4})},
       {},
       [](P p) { return abs(complex_of(p[0], p[1])); }},
      {"real_imag",
       {Op::Real, Op::Imag, Op::Multiply},
       {Shape({4}), Shape({4})},
       {},
       [](P p) {
         Expr z = complex_of(p[0], p[1]);
         return real(z * z) * imag(z * z * z);
       }},
      {"conjugate",
       {Op::Conjugate},
       {Shape({4}), Shape({4})},
       {},
       [](P p) {
         Expr z = complex_of(p[0], p[1]);
         return conjugate(z * z) * (z + 2.0);
       }},
      {"complex_exp",
       {Op::Exp, Op::Divide},
       {Shape({4}), Shape({4})},
       {},
       [](P p) {
         Expr z = complex_of(p[0], p[1]);
         return exp(z) / (z + 3.0);
       }},
      // ternary and conversions
      {"select",
       {Op::Select},
       {Shape({2, 3}), Shape({2, 3})},
       {},
       [](P p) {
         Expr mask = iota(s32({2, 3}), std::nullopt) % 2 == 0;
         return select(mask, p[0] * p[1], sin(p[1]));
       }},
      {"clip",
       {Op::Clip},
       {Shape({12}), Shape({12}), Shape({12})},
       {{-2, 2}, {-1, -0.2}, {0.2, 1}},
       [](P p) { return clip(p[0], p[1], p[2]); }},
      // f64 -> f32 -> f64 rounds to f32: a larger step, a looser tolerance.
      {"as_type",
       {Op::AsType},
       {Shape({2, 3})},
       {},
       [](P p) { return as_type(as_type(p[0], DType::F32), DType::F64) * p[0]; },
       1e-3,
       1e-2},
      // shape
      {"reshape",
       {Op::Reshape},
       {Shape({2, 3})},
       {},
       [](P p) {
         return reshape(p[0], Shape({3, 2})) * 2.0;
       }},
      {"broadcast",
       {Op::Broadcast},
       {Shape({3}), Shape({2, 1})},
       {},
       [](P p) {
         // p[1]'s axis 1 stretches from 1; both gain axes
         return broadcast(p[1], Shape({2, 3, 4}), {0, 1}) * broadcast(p[0], Shape({2, 3, 4}), {1});
       }},
      {"transpose",
       {Op::Transpose},
       {Shape({2, 3, 4})},
       {},
       [](P p) {
         return transpose(p[0], {2, 0, 1}) * iota(f64({4, 2, 3}), std::nullopt);
       }},
      {"pad",
       {Op::Pad},
       {Shape({3, 4}), Shape({})},
       {},
       [](P p) {
         return pad(p[0] * p[0], p[1], {{.low = 1, .high = -1, .interior = 1}, {.low = -1, .high = 2}});
       }},
      {"reverse", {Op::Reverse}, {Shape({3, 4})}, {}, [](P p) { return reverse(p[0], {1}) * p[0]; }},
      {"slice",
       {Op::Slice},
       {Shape({5, 6})},
       {},
       [](P p) {
         return slice(p[0], {1, 0}, {4, 5}, {2, 3});
       }},
      // starts past the end are clamped so the slice fits, in the rule as in the op
      {"dynamic_slice",
       {Op::Slice},
       {Shape({5, 6})},
       {},
       [](P p) {
         return slice(p[0] * p[0], std::vector<Expr>{s64(1), s64(9)}, {3, 4}, {1, 2});
       }},
      {"put_slice",
       {Op::PutSlice},
       {Shape({4, 5}), Shape({2, 3})},
       {},
       [](P p) {
         return put_slice(p[0], {1, 3}, p[1] * p[1]);
       }},
      {"dynamic_put_slice",
       {Op::PutSlice},
       {Shape({4, 5}), Shape({2, 3})},
       {},
       [](P p) {
         return put_slice(p[0] * 3.0, std::vector<Expr>{s64(7), s64(1)}, sin(p[1]));
       }},
      {"concatenate",
       {Op::Concatenate},
       {Shape({2, 3}), Shape({2, 1})},
       {},
       [](P p) {
         return concatenate({p[0], p[1] * p[1], p[0]}, 1);
       }},
      // reductions
      {"sum",
       {Op::Sum},
       {Shape({2, 3, 4})},
       {},
       [](P p) {
         return sum(p[0] * p[0], {.axes = {0, 2}});
       }},
      {"sum_keep_axes",
       {Op::Sum},
       {Shape({2, 3, 4})},
       {},
       [](P p) { return sin(sum(p[0], {.axes = {1}, .keep_axes = true})) * p[0]; }},
      {"product",
       {Op::Product},
       {Shape({3, 4})},
       {positive},
       [](P p) { return product(p[0], {.axes = {1}}); }},
      {"reduce_max",
       {Op::ReduceMax},
       {Shape({3, 4})},
       {},
       [](P p) { return reduce_max(p[0], {.axes = {0}}); }},
      {"reduce_min",
       {Op::ReduceMin},
       {Shape({3, 4})},
       {},
       [](P p) {
         return reduce_min(p[0], {.axes = {0, 1}, .keep_axes = true}) * p[0];
       }},
      // contractions
      {"dot", {Op::Dot}, {Shape({2, 3}), Shape({3, 4})}, {}, [](P p) { return dot(p[0], p[1]); }},
      {"dot_batched",
       {Op::Dot},
       {Shape({3, 2, 4}), Shape({2, 5, 4})},
       {},
       [](P p) {
         // batch axis 1 of a with 0 of b, contracting a's 2 with b's 2
         return dot(p[0], {2}, {1}, p[1], {2}, {0});
       }},
      {"dot_leading",
       {Op::Dot},
       {Shape({4, 3, 2}), Shape({2, 4, 5})},
       {},
       [](P p) {
         return dot(p[0], {2, 0}, {}, p[1], {0, 1}, {});
       }},
      // windows and scans
      {"window_sum",
       {Op::WindowSum},
       {Shape({5, 6})},
       {},
       [](P p) {
         return window_sum(p[0], {2, 3}, {.strides = {2, 1}, .padding = {{1, 0}, {0, 2}}});
       }},
      {"window_max",
       {Op::WindowMax},
       {Shape({5, 6})},
       {},
       [](P p) {
         return window_max(p[0], {2, 2}, {.strides = {1, 2}, .padding = {{0, 1}, {1, 0}}});
       }},
      {"window_min",
       {Op::WindowMin},
       {Shape({6, 5})},
       {},
       [](P p) {
         return window_min(p[0], {3, 2}, {.strides = {2, 1}});
       }},
      {"window_product",
       {Op::WindowProduct},
       {Shape({4, 5})},
       {},
       [](P p) {
         return window_product(p[0], {2, 3}, {.strides = {1, 2}, .padding = {{1, 0}, {0, 1}}});
       }},
      // Overlapping windows pick some elements twice; x passes none.
      {"window_scatter_max",
       {Op::WindowScatterMax},
       {Shape({5, 6}), Shape({4, 3}), Shape({})},
       {},
       [](P p) {
         return window_scatter_max(p[0], sin(p[1]), p[2] * p[2], {2, 3},
                                   {.strides = {1, 2}, .padding = {{0, 0}, {1, 1}}});
       }},
      {"window_scatter_min",
       {Op::WindowScatterMin},
       {Shape({5, 6}), Shape({2, 5}), Shape({})},
       {},
       [](P p) {
         return window_scatter_min(p[0], p[1] * p[1], p[2], {3, 3}, {.strides = {2, 1}, .padding = {{0, 0}, {0, 1}}});
       }},
      {"cumulative_product",
       {Op::CumulativeProduct},
       {Shape({3, 4})},
       {},
       [](P p) {
         return cumulative_product(p[0], {.axis = 1}) + cumulative_product(p[0] * p[0], {.axis = 0, .reverse = true});
       }},
      {"cumulative_max",
       {Op::CumulativeMax, Op::CumulativeMin},
       {Shape({4, 5})},
       {},
       [](P p) {
         return cumulative_max(p[0], {.axis = 1}) * cumulative_min(sin(p[0]), {.axis = 0, .reverse = true});
       }},
      {"cumulative_sum",
       {Op::CumulativeSum},
       {Shape({3, 4})},
       {},
       [](P p) {
         return cumulative_sum(p[0] * p[0], {.axis = 1}) + cumulative_sum(p[0], {.axis = 0, .reverse = true});
       }},
      // Fourier transforms: of a real signal (as_type to complex), with a
      // length that pads, and of a complex one
      {"fft", {Op::Fft, Op::AsType}, {Shape({2, 8})}, {}, [](P p) { return fft(p[0] * p[0]); }},
      {"fft_length", {Op::Fft, Op::Pad}, {Shape({6})}, {}, [](P p) { return fft(p[0], 8); }},
      {"ifft",
       {Op::Ifft},
       {Shape({8}), Shape({8})},
       {},
       [](P p) { return ifft(complex_of(p[0], p[1] * p[0])); }},
      // ---- indexing: duplicate and out-of-range (clamped) indices
      {"gather",
       {Op::Gather},
       {Shape({4, 3})},
       {},
       [](P p) { return gather(p[0] * p[0], constant(std::vector<int64_t>{2, 0, 2, 7}, Shape({4, 1}))); }},
      {"take_inner_axis",
       {Op::Gather, Op::Transpose},
       {Shape({3, 4})},
       {},
       [](P p) { return take(sin(p[0]), constant(std::vector<int64_t>{1, 3, 3, -2}, Shape({2, 2})), 1); }},
      {"take_along_axis",
       {Op::Gather},
       {Shape({3, 4})},
       {},
       [](P p) {
         return take_along_axis(p[0] * p[0], constant(std::vector<int64_t>{3, 0, 1, 1, 2, 9}, Shape({3, 2})), 1);
       }},
      {"indexed_add",
       {Op::IndexedAdd},
       {Shape({5}), Shape({4})},
       {},
       [](P p) {
         return indexed_add(p[0] * p[0], constant(std::vector<int64_t>{1, 3, 1, 9}, Shape({4, 1})), sin(p[1]) * p[1]);
       }},
      // Of the updates written to place 1, only the last one reaches the result.
      {"indexed_put",
       {Op::IndexedPut},
       {Shape({5, 2}), Shape({3, 2})},
       {},
       [](P p) {
         return indexed_put(p[0] * p[0], constant(std::vector<int64_t>{1, 3, 1}, Shape({3, 1})), sin(p[1]));
       }},
      // ---- sorting: random values have no ties
      {"sort",
       {Op::Sort},
       {Shape({3, 5})},
       {},
       [](P p) {
         return sort(p[0] * p[0] * p[0], {.axis = 1}) +
                sort(p[0], {.axis = 0, .direction = SortDirection::Descending}) * p[0];
       }},
      {"top_k", {Op::Gather, Op::Argsort}, {Shape({2, 6})}, {}, [](P p) { return top_k(sin(p[0]), 3).values; }},
      // ---- convolution: each option moves the transposed convolutions' padding and dilations
      {"conv_1d_stride_same",
       {Op::Conv},
       {Shape({2, 3, 7}), Shape({4, 3, 3})},
       {},
       [](P p) { return conv(p[0], p[1], {.strides = {2}, .padding = ConvPadding::Same}); }},
      {"conv_2d_padding_dilations",
       {Op::Conv},
       {Shape({2, 2, 5, 4}), Shape({3, 2, 2, 3})},
       {},
       [](P p) {
         return conv(p[0], p[1],
                     {.strides = {2, 1},
                      .padding = ConvPadding::Explicit,
                      .padding_config = {{.low = 1, .high = 2, .interior = 0}, {.low = 2, .high = -1, .interior = 0}},
                      .input_dilation = {2, 1},
                      .kernel_dilation = {1, 2}});
       }},
      {"conv_feature_groups",
       {Op::Conv},
       {Shape({2, 4, 4, 4}), Shape({6, 2, 2, 2})},
       {},
       [](P p) {
         return conv(sin(p[0]), p[1],
                     {.strides = {1, 2},
                      .padding = ConvPadding::Explicit,
                      .padding_config = {{.low = 1, .high = 0, .interior = 0}, {.low = 0, .high = 1, .interior = 0}},
                      .kernel_dilation = {2, 1},
                      .feature_group_size = 2});
       }},
      {"conv_batch_groups",
       {Op::Conv},
       {Shape({4, 2, 4, 5}), Shape({4, 2, 2, 2})},
       {},
       [](P p) { return conv(p[0], p[1], {.strides = {2, 1}, .input_dilation = {1, 2}, .batch_group_size = 2}); }},
      {"conv_3d_same",
       {Op::Conv},
       {Shape({1, 2, 3, 4, 3}), Shape({2, 2, 2, 2, 2})},
       {},
       [](P p) { return conv(p[0], p[1] * p[1], {.padding = ConvPadding::Same}); }},
      {"conv_no_spatial_axes", {Op::Conv}, {Shape({3, 4}), Shape({5, 4})}, {}, [](P p) { return conv(p[0], p[1]); }},
      // Loops: a scan's carry, ys, xs and captured values; in reverse; with
      // no xs; a fori_loop (a scan underneath) whose body reads its index.
      {"scan",
       {Op::ScanLoop, Op::Result},
       {Shape({3}), Shape({4, 3}), Shape({3})},
       {},
       [](P p) {
         Tuple r = scan([&](Expr carry, Expr x) { return tuple(tanh(carry * p[2] + x), carry * x); }, p[0], p[1]);
         return concatenate({r[0], reshape(r[1], Shape{12})});
       }},
      {"scan_reverse",
       {Op::ScanLoop, Op::Result},
       {Shape({2}), Shape({5, 2})},
       {},
       [](P p) {
         Tuple r = scan([](Expr carry, Expr x) { return tuple(sin(carry) + x * carry, carry * carry); }, p[0], p[1], {.reverse = true});
         return concatenate({r[0], reshape(r[1], Shape{10})});
       }},
      {"scan_without_xs",
       {Op::ScanLoop, Op::Result},
       {Shape({3}), Shape({3})},
       {},
       [](P p) { return scan([&](Expr carry) { return carry * p[1] + 0.5; }, p[0], 3)[0]; }},
      {"fori_loop",
       {Op::ScanLoop, Op::Result},
       {Shape({2, 2})},
       {},
       [](P p) {
         return fori_loop(0, 4, [&](Expr i, Expr carry) { return cos(carry) * p[0] + as_type(i, DType::F64); }, p[0]);
       }},
  };
  for (FdCase& l : linalg_cases()) c.push_back(std::move(l));
  return c;
}

const Node* find_op(const Function& f, Op op) {
  for (const NodePtr& n : passes::topological_order(f.outputs()))
    if (n->op == op) return n.get();
  return nullptr;
}

// L = sum(w * f) (complex f: w * real + w' * imag), weights fixed by a seed.
Function loss_of(const FdCase& c) {
  std::vector<Spec> specs;
  for (const Shape& s : c.params) specs.push_back({DType::F64, s});
  return trace(specs, [&](const std::vector<Expr>& p) {
    Expr out = c.f(p);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    auto weights = [&] {
      std::vector<double> w(static_cast<size_t>(out.spec().size()));
      for (double& v : w) v = u(rng);
      return constant(w, out.shape());
    };
    if (is_complex(out.dtype())) return sum(real(out) * weights() + imag(out) * weights());
    return sum(out * weights());
  });
}

// Each case on every platform this machine has: value and gradient both
// computed there (on a GPU too), in f64.
class GradFiniteDifferences : public ::testing::TestWithParam<std::tuple<FdCase, std::string>> {};

TEST_P(GradFiniteDifferences, MatchCentralDifferences) {
  const FdCase& c = std::get<0>(GetParam());
  const Device device = client(std::get<1>(GetParam())).default_device();
  const Function loss = loss_of(c);
  for (Op op : c.covers)
    ASSERT_NE(find_op(loss, op), nullptr)
        << c.name << " claims to cover " << op_name(op) << ", but its graph lacks it:\n"
        << loss.str();
  std::vector<int> wrt;
  for (size_t i = 0; i < c.params.size(); ++i) wrt.push_back(static_cast<int>(i));
  HostFunction value(loss, device), gradient(grad(loss, wrt), device);

  std::mt19937_64 rng(42);
  std::vector<Values> x;
  for (size_t i = 0; i < c.params.size(); ++i) {
    const Domain d = i < c.domains.size() ? c.domains[i] : Domain{};
    std::uniform_real_distribution<double> u(d.lo, d.hi);
    Values v(static_cast<size_t>(c.params[i].size()));
    for (double& e : v) e = u(rng);
    x.push_back(std::move(v));
  }
  const std::vector<Values> analytic = gradient(x);
  ASSERT_EQ(analytic.size(), c.params.size());
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = 0; j < x[i].size(); ++j) {
      std::vector<Values> up = x, down = x;
      up[i][j] += c.step;
      down[i][j] -= c.step;
      const double numeric = (value(up)[0][0] - value(down)[0][0]) / (2 * c.step);
      EXPECT_NEAR(analytic[i][j], numeric, c.tol * (1 + std::abs(numeric)))
          << c.name << ": d L / d param " << i << "[" << j << "] at " << x[i][j];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, GradFiniteDifferences,
                         ::testing::Combine(::testing::ValuesIn(cases()), ::testing::ValuesIn(platforms())),
                         [](const auto& p) {
                           return std::get<0>(p.param).name + "_" + std::get<1>(p.param);
                         });

TEST(GradCatalogue, EveryDifferentiableOpHasAFiniteDifferenceCase) {
  std::unordered_set<Op> covered;
  for (const FdCase& c : cases()) covered.insert(c.covers.begin(), c.covers.end());
  for (int i = 0; i < kOpCount; ++i) {
    const auto op = static_cast<Op>(i);
    if (!is_differentiable(op)) continue;
    if (op == Op::WhileLoop) continue;  // its rule refuses (grad_test.cpp checks the TypeError)
    EXPECT_TRUE(covered.contains(op))
        << "op " << op_name(op) << " has a gradient rule but no finite-difference case in grad_fd_test.cpp";
  }
}

}  // namespace
}  // namespace sluice
