// The CUDA prelude's semantics, checked on the host: prelude.cuh is C++ the
// host compiler accepts too, so every elementwise op and conversion the CUDA
// backend claims is run here through the very functions the generated
// kernels call (loaded, computed, rounded and stored as the generator writes
// them: kernel_source.cpp) and compared with the host backend on values that
// probe the edges: zeros of both signs, infinities, NaN, integer extremes,
// division by zero, shifts past the width. What a GPU adds (its libm) is
// left to the conformance suite on a GPU; what the formulas mean is settled
// here, where no GPU is.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <concepts>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/cuda/cuda_capabilities.h>
#include <sluice/devices/cuda/kernels/prelude.cuh>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/ops/ops.h>

namespace sluice::cuda {
namespace {

// Storage and compute types of each dtype in the prelude, as the generator
// names them (kernel_source.cpp: storage_type, compute_type).
template <DType D> struct Types;
#define SLUICE_TYPES(D, S, C)    \
  template <> struct Types<DType::D> { \
    using Storage = S;           \
    using Compute = C;           \
  };
SLUICE_TYPES(Pred, sl::u8, sl::u8)
SLUICE_TYPES(S8, sl::i8, sl::i8)
SLUICE_TYPES(S16, sl::i16, sl::i16)
SLUICE_TYPES(S32, sl::i32, sl::i32)
SLUICE_TYPES(S64, sl::i64, sl::i64)
SLUICE_TYPES(U8, sl::u8, sl::u8)
SLUICE_TYPES(U16, sl::u16, sl::u16)
SLUICE_TYPES(U32, sl::u32, sl::u32)
SLUICE_TYPES(U64, sl::u64, sl::u64)
SLUICE_TYPES(F16, sl::u16, float)
SLUICE_TYPES(BF16, sl::u16, float)
SLUICE_TYPES(F32, float, float)
SLUICE_TYPES(F64, double, double)
SLUICE_TYPES(C64, sl::c64, sl::c64)
SLUICE_TYPES(C128, sl::c128, sl::c128)
#undef SLUICE_TYPES

template <DType D>
typename Types<D>::Compute load(const std::vector<uint8_t>& bytes, size_t i) {
  typename Types<D>::Storage s;
  std::memcpy(&s, bytes.data() + i * sizeof s, sizeof s);
  if constexpr (D == DType::F16) return sl::f16_to_f32(s);
  else if constexpr (D == DType::BF16) return sl::bf16_to_f32(s);
  else return s;
}

template <DType D>
void store(typename Types<D>::Compute c, std::vector<uint8_t>& bytes, size_t i) {
  typename Types<D>::Storage s;
  if constexpr (D == DType::F16) s = sl::f32_to_f16(c);
  else if constexpr (D == DType::BF16) s = sl::f32_to_bf16(c);
  else s = c;
  std::memcpy(bytes.data() + i * sizeof s, &s, sizeof s);
}

// The rounding of a result that is not exact, to f16/bf16 precision.
template <DType D>
typename Types<D>::Compute rounded(typename Types<D>::Compute c) {
  if constexpr (D == DType::F16) return sl::round_f16(c);
  else if constexpr (D == DType::BF16) return sl::round_bf16(c);
  else return c;
}

// Stores r, an op's result in its compute type, as an element of `out`
// (rounded first where the op is not exact and out is f16/bf16); false when
// r's type is not out's compute type. Only f32's compute type is shared by
// dtypes that store it differently (f16, bf16).
template <typename R>
bool store_result(R r, DType out, bool round, std::vector<uint8_t>& bytes, size_t i) {
  if constexpr (std::is_same_v<R, float>) {
    switch (out) {
      case DType::F16: store<DType::F16>(round ? rounded<DType::F16>(r) : r, bytes, i); return true;
      case DType::BF16: store<DType::BF16>(round ? rounded<DType::BF16>(r) : r, bytes, i); return true;
      case DType::F32: store<DType::F32>(r, bytes, i); return true;
      default: return false;
    }
  } else {
    if (static_cast<size_t>(dtype_size(out)) != sizeof(R) || (is_complex(out) != sl::traits<R>::is_cx) ||
        (is_float(out) != sl::traits<R>::is_float))
      return false;
    std::memcpy(bytes.data() + i * sizeof(R), &r, sizeof(R));
    return true;
  }
}

// Values that probe the edges, as f64 (real part) and imaginary parts;
// converted to each dtype by the host backend (saturating for integers).
const std::vector<double> kReal = {0.0,  -0.0, 1.0,   -1.0, 0.5,   -2.5, 3.75, 1e-3, 100.0,    -1e4,
                                   2.0,  7.0,  -8.0,  64.0, 0.1,   1e30, -1e30, 33.0, INFINITY, -INFINITY,
                                   NAN,  3.0,  -3.0,  0.75, 12.0,  -0.25};
const std::vector<double> kImag = {0.0,  1.0, -0.5, 2.0,  0.0,   -3.0, 0.25, 1.0, -1.0,    4.0,
                                   0.0,  -2.0, 1.5, 0.0,  0.3,   0.0,  0.0,  -1.0, 0.0,    1.0,
                                   0.0,  0.5, 0.0, -0.75, 2.0,   1.0};

Tensor values(DType t, size_t rotate) {
  std::vector<double> re = kReal, im = kImag;
  std::rotate(re.begin(), re.begin() + static_cast<std::ptrdiff_t>(rotate), re.end());
  std::rotate(im.begin(), im.begin() + static_cast<std::ptrdiff_t>(rotate), im.end());
  const auto n = static_cast<int64_t>(re.size());
  Function f = trace({f64({n}), f64({n})}, [&](Expr a, Expr b) {
    if (!is_complex(t)) return as_type(a, t);
    const Expr i = constant(std::vector<std::complex<double>>{{0, 1}}, Shape{});
    return as_type(as_type(a, DType::C128) + as_type(b, DType::C128) * i, t);
  });
  return compile(f).run({tensor(re, Shape{n}), tensor(im, Shape{n})})[0];
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> b(static_cast<size_t>(t.spec().bytes()));
  if (!b.empty()) std::memcpy(b.data(), t.host_data(), b.size());
  return b;
}

// How far apart a result may be from the host's: libm against SLEEF for
// transcendental functions, one rounding apart for f16 and bf16.
double tolerance(DType t) {
  switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F32:
    case DType::C64: return 1e-5;
    default: return 1e-11;
  }
}

bool close(double got, double want, double scale, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, scale);
}

// Element i of a result, as (re, im) doubles.
std::pair<double, double> element(DType t, const std::vector<uint8_t>& bytes, size_t i) {
  return visit_dtype(t, [&]<typename T>() -> std::pair<double, double> {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, half>) return {f16_to_float(v.bits), 0};
    else if constexpr (std::is_same_v<T, bfloat16>) return {bf16_to_float(v.bits), 0};
    else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) return {v.real(), v.imag()};
    else return {static_cast<double>(v), 0};
  });
}

// Compares the prelude's result with the host's, element by element;
// integers and pred exactly, floats within tolerance(t).
void expect_same(const std::string& what, DType t, const std::vector<uint8_t>& got, const Tensor& want) {
  const std::vector<uint8_t> expected = bytes_of(want);
  ASSERT_EQ(got.size(), expected.size()) << what;
  const bool exact = !is_inexact(t);
  int failures = 0;
  for (size_t i = 0; i < static_cast<size_t>(want.size()) && failures < 3; ++i) {
    auto [g_re, g_im] = element(t, got, i);
    auto [w_re, w_im] = element(t, expected, i);
    const double scale = std::fabs(w_re) + std::fabs(w_im);
    const bool ok = exact ? (std::memcmp(got.data() + i * dtype_size(t), expected.data() + i * dtype_size(t),
                                         static_cast<size_t>(dtype_size(t))) == 0)
                          : close(g_re, w_re, scale, tolerance(t)) && close(g_im, w_im, scale, tolerance(t));
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ", element " << i << ": the prelude gives (" << g_re << ", " << g_im
                    << "), the host backend (" << w_re << ", " << w_im << ")";
    }
  }
}

// What the prelude computes for one op on every element: x (and y) in, the
// result's bytes out. False when the function's result is not the result
// dtype's compute type (the generator would not have called it so).
using Bytes = std::vector<uint8_t>;
using Elementwise = bool (*)(const Bytes& x, const Bytes& y, size_t n, DType out, bool round, Bytes& got);

// The element loop, one small instance per op and dtype; the rest of a
// check is one function for all (check_op), so that this file compiles in
// seconds rather than minutes.
template <DType D, typename Fn>
bool elementwise(Fn fn, const Bytes& x, const Bytes& y, size_t n, DType out, bool round, Bytes& got) {
  using C = typename Types<D>::Compute;
  for (size_t i = 0; i < n; ++i) {
    bool stored = false;
    if constexpr (requires { fn(C{}, C{}); })
      stored = store_result(fn(load<D>(x, i), load<D>(y, i)), out, round, got, i);
    else
      stored = store_result(fn(load<D>(x, i)), out, round, got, i);
    if (!stored) return false;
  }
  return true;
}

Expr build(Op op, const std::vector<Expr>& p) {
  switch (op) {
#define SLUICE_OP(e, n, arity, family, rule, props, grad)
#define SLUICE_UNARY_OP(e, n, rule, props, grad) \
  case Op::e: return sluice::n(p[0]);
#define SLUICE_BINARY_OP(e, n, rule, props, grad) \
  case Op::e: return sluice::n(p[0], p[1]);
#include <sluice/ops/op_list.def>
    default: break;
  }
  throw InternalError("no builder");
}

// op(x[, y]) of dtype d on the host backend, and through the prelude: 1
// when checked, 0 when the backend does not claim the op for d or its type
// rule refuses d.
int check_op(DType d, Op op, const char* name, int arity, Elementwise prelude) {
  if (!cuda_capabilities().supports(op, d)) return 0;
  const Tensor x = values(d, 0), y = values(d, 5);
  std::vector<Spec> specs(static_cast<size_t>(arity), x.spec());
  Function f;
  try {
    f = trace(specs, [&](const std::vector<Expr>& p) { return build(op, p); });
  } catch (const TypeError&) {
    return 0;  // not an op of this dtype
  } catch (const ShapeError&) {
    return 0;
  }
  const Node& node = *f.outputs().front().node();
  // The builder made something else of it, or converted the operands first
  // (divide of integers is of f32): that op is checked in its own dtype.
  if (node.op != op || node.operands[0]->spec.dtype != d) return 0;
  const DType out = node.spec.dtype;
  const Tensor want = arity == 1 ? compile(f).run({x})[0] : compile(f).run({x, y})[0];
  Bytes got(static_cast<size_t>(want.spec().bytes()));
  const std::string what = std::string(name) + " of " + std::string(dtype_name(d));
  if (!prelude(bytes_of(x), bytes_of(y), static_cast<size_t>(x.size()), out, !op_has(op, kExact), got)) {
    ADD_FAILURE() << what << ": the prelude's sl::" << name << " does not return " << dtype_name(out)
                  << "'s compute type";
    return 0;
  }
  expect_same(what, out, got, want);
  return 1;
}

template <DType D>
int check_ops() {
  using C = typename Types<D>::Compute;
  int checked = 0;
#define SLUICE_OP(e, n, arity, family, rule, props, grad)
#define SLUICE_UNARY_OP(e, n, rule, props, grad)                                                               \
  if constexpr (Op::e != Op::BitwiseNot && requires(C a) { sl::n(a); })                                       \
    checked += check_op(D, Op::e, #n, 1,                                                                      \
                        [](const Bytes& x, const Bytes& y, size_t count, DType out, bool round, Bytes& got) { \
                          return elementwise<D>([](auto a) { return sl::n(a); }, x, y, count, out, round, got); \
                        });
#define SLUICE_BINARY_OP(e, n, rule, props, grad)                                                                 \
  if constexpr (requires(C a, C b) { sl::n(a, b); })                                                             \
    checked += check_op(D, Op::e, #n, 2,                                                                         \
                        [](const Bytes& x, const Bytes& y, size_t count, DType out, bool round, Bytes& got) {    \
                          return elementwise<D>([](auto a, auto b) { return sl::n(a, b); }, x, y, count, out, round, \
                                                got);                                                            \
                        });
#include <sluice/ops/op_list.def>
  // bitwise_not of pred flips its one bit (the generator's special case).
  if constexpr (D == DType::Pred)
    checked += check_op(D, Op::BitwiseNot, "bitwise_not", 1,
                        [](const Bytes& x, const Bytes& y, size_t count, DType out, bool round, Bytes& got) {
                          return elementwise<D>([](auto a) { return sl::bitwise_not_pred(a); }, x, y, count, out, round,
                                                got);
                        });
  else if constexpr (requires(C a) { sl::bitwise_not(a); })
    checked += check_op(D, Op::BitwiseNot, "bitwise_not", 1,
                        [](const Bytes& x, const Bytes& y, size_t count, DType out, bool round, Bytes& got) {
                          return elementwise<D>([](auto a) { return sl::bitwise_not(a); }, x, y, count, out, round,
                                                got);
                        });
  return checked;
}

// ---- conversions: as_type and bitcast from each dtype to each, as the
// generator writes them (kernel_source.cpp, op_expression).
using Conversion = void (*)(const Bytes& x, size_t n, Bytes& got);

template <DType D, DType O>
void as_type_elements(const Bytes& x, size_t n, Bytes& got) {
  using R = typename Types<O>::Compute;
  for (size_t i = 0; i < n; ++i) {
    R r;
    if constexpr (O == DType::Pred) r = sl::to_pred(load<D>(x, i));
    else if constexpr (O == DType::F16 || O == DType::BF16) r = rounded<O>(sl::narrow_from(load<D>(x, i)));
    else r = sl::as_type<R>(load<D>(x, i));
    store<O>(r, got, i);
  }
}

template <DType D, DType O>
void bitcast_elements(const Bytes& x, size_t n, Bytes& got) {
  using S = typename Types<O>::Storage;
  for (size_t i = 0; i < n; ++i) {
    typename Types<D>::Storage bits;
    std::memcpy(&bits, x.data() + i * sizeof bits, sizeof bits);
    const S cast = sl::bitcast<S>(bits);
    typename Types<O>::Compute r;
    if constexpr (O == DType::Pred) r = sl::to_pred(cast);
    else if constexpr (O == DType::F16) r = sl::f16_to_f32(cast);
    else if constexpr (O == DType::BF16) r = sl::bf16_to_f32(cast);
    else r = cast;
    store<O>(r, got, i);
  }
}

// A conversion's host result against the prelude's; 1 when checked.
int check_conversion(DType from, DType to, bool bitcast_op, Conversion prelude) {
  const Tensor x = values(from, 0);
  Function f;
  try {
    f = trace({x.spec()}, [&](Expr e) { return bitcast_op ? bitcast(e, to) : as_type(e, to); });
  } catch (const TypeError&) {
    return 0;  // pred has no bits to cast
  }
  Bytes got(static_cast<size_t>(x.size() * dtype_size(to)));
  prelude(bytes_of(x), static_cast<size_t>(x.size()), got);
  expect_same(std::string(bitcast_op ? "bitcast " : "as_type ") + std::string(dtype_name(from)) + " -> " +
                  std::string(dtype_name(to)),
              to, got, compile(f).run({x})[0]);
  return 1;
}

template <DType D, int... O>
int check_conversions(std::integer_sequence<int, O...>) {
  int checked = (check_conversion(D, DType(O), false, as_type_elements<D, DType(O)>) + ...);
  auto bitcast_one = [&]<int T>() {
    if constexpr (sizeof(typename Types<DType(T)>::Storage) == sizeof(typename Types<D>::Storage))
      return check_conversion(D, DType(T), true, bitcast_elements<D, DType(T)>);
    else
      return 0;
  };
  return checked + (bitcast_one.template operator()<O>() + ...);
}

// select and clip, of each dtype the backend claims them for.
template <DType D>
int check_select_and_clip() {
  int checked = 0;
  const Tensor x = values(D, 0), y = values(D, 5), p = values(DType::Pred, 3);
  const Bytes xb = bytes_of(x), yb = bytes_of(y), pb = bytes_of(p);
  if (cuda_capabilities().supports(Op::Select, D)) {
    const Function f = trace({p.spec(), x.spec(), y.spec()}, [](Expr c, Expr a, Expr b) { return select(c, a, b); });
    Bytes got(xb.size());
    for (size_t i = 0; i < static_cast<size_t>(x.size()); ++i)
      store<D>(sl::select(load<DType::Pred>(pb, i), load<D>(xb, i), load<D>(yb, i)), got, i);
    expect_same("select of " + std::string(dtype_name(D)), D, got, compile(f).run({p, x, y})[0]);
    ++checked;
  }
  using C = typename Types<D>::Compute;
  if constexpr (requires(C a) { sl::clip(a, a, a); }) {
    const Function f = trace({x.spec(), y.spec()}, [](Expr a, Expr b) { return clip(a, b, b + 1); });
    const Bytes hb = bytes_of(compile(trace({y.spec()}, [](Expr b) { return b + 1; })).run({y})[0]);
    Bytes got(xb.size());
    for (size_t i = 0; i < static_cast<size_t>(x.size()); ++i)
      store<D>(sl::clip(load<D>(xb, i), load<D>(yb, i), load<D>(hb, i)), got, i);
    expect_same("clip of " + std::string(dtype_name(D)), D, got, compile(f).run({x, y})[0]);
    ++checked;
  }
  return checked;
}

template <DType D>
int check_dtype() {
  return check_ops<D>() + check_conversions<D>(std::make_integer_sequence<int, kDTypeCount>{}) +
         check_select_and_clip<D>();
}

TEST(CudaPrelude, EveryElementwiseOpMatchesTheHostBackend) {
  int checked = 0;
  checked += check_dtype<DType::Pred>();
  checked += check_dtype<DType::S8>();
  checked += check_dtype<DType::S16>();
  checked += check_dtype<DType::S32>();
  checked += check_dtype<DType::S64>();
  checked += check_dtype<DType::U8>();
  checked += check_dtype<DType::U16>();
  checked += check_dtype<DType::U32>();
  checked += check_dtype<DType::U64>();
  checked += check_dtype<DType::F16>();
  checked += check_dtype<DType::BF16>();
  checked += check_dtype<DType::F32>();
  checked += check_dtype<DType::F64>();
  checked += check_dtype<DType::C64>();
  checked += check_dtype<DType::C128>();
  std::cout << "[ prelude  ] " << checked << " ops and conversions by dtype match the host backend\n";
  EXPECT_GT(checked, 700);
}

}  // namespace
}  // namespace sluice::cuda
