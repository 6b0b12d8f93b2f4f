// The op catalogue in Python: every op of ops/op_list.def that a user
// writes, as a function of the same name with Nx's options as keyword
// arguments (axes=, keep_axes=, axis=, ...). The elementwise ops come from
// the catalogue itself (ops_elementwise.cpp); the rest are bound here, one
// line of options each. sluice.catalogue() lists the catalogue's names, so
// a test can check that none is missing.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/op.h>
#include <sluice/ops/ops.h>

#include "bindings.h"

namespace sluice::python {
namespace {

template <typename Enum>
Enum choice(const std::string& value, const char* where, const char* what,
            std::initializer_list<std::pair<const char*, Enum>> choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += names.empty() ? std::string("\"") + name + "\"" : std::string(", \"") + name + "\"";
  }
  throw ValueError(error_message(where, what, "one of " + names, "\"" + value + "\""));
}

Expr constant_of(nb::handle value, nb::handle dtype) {
  Tensor t = tensor_of(value, "sluice.constant");
  Literal literal{t.spec(), {}};
  literal.bytes.resize(static_cast<size_t>(t.spec().bytes()));
  t.copy_to_host(literal.bytes.data());
  Expr e = constant(literal);
  return dtype.is_none() ? e : as_type(e, dtype_of_object(dtype, "sluice.constant"));
}

}  // namespace

Axes axes_of(nb::handle h) {
  if (h.is_none()) return {};
  if (PyLong_Check(h.ptr())) return {nb::cast<int64_t>(h)};
  return nb::cast<Axes>(h);
}

std::vector<Expr> exprs_of(nb::handle h, const char* where) {
  std::vector<Expr> out;
  for (nb::handle item : nb::iter(h)) out.push_back(expr_of(item, where));
  return out;
}

std::vector<PadDim> padding_of(nb::handle h, const char* where) {
  std::vector<PadDim> out;
  if (h.is_none()) return out;
  for (nb::handle item : nb::iter(h)) {
    const std::vector<int64_t> v = nb::cast<std::vector<int64_t>>(item);
    if (v.size() != 2 && v.size() != 3)
      throw ValueError(error_message(where, "padding", "(low, high) or (low, high, interior) per axis",
                                     std::to_string(v.size()) + " numbers"));
    out.push_back({v[0], v[1], v.size() == 3 ? v[2] : 0});
  }
  return out;
}

ReduceOptions reduce_options(nb::handle axes, bool keep_axes) {
  return {.axes = axes_of(axes), .keep_axes = keep_axes};
}

Expr expr_of(nb::handle h, const char* where) {
  if (nb::isinstance<Expr>(h)) return nb::cast<Expr>(h);
  if (PyBool_Check(h.ptr())) return constant(h.is(Py_True) ? 1.0 : 0.0, DType::Pred);
  if (PyLong_Check(h.ptr())) return weak_scalar(nb::cast<int64_t>(h));
  if (PyFloat_Check(h.ptr())) return weak_scalar(nb::cast<double>(h));
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h))
    for (nb::handle item : nb::iter(h))
      if (nb::isinstance<Expr>(item))
        throw TypeError(error_message(where, "operand", "an Expr, a number or an array",
                                      "a " + nb::cast<std::string>(nb::handle(h.type()).attr("__name__")) +
                                          " holding Exprs (stack or concatenate them)"));
  try {
    return constant_of(h, nb::none());
  } catch (const Error&) {
    throw TypeError(error_message(where, "operand", "an Expr, a number or an array",
                                  nb::cast<std::string>(nb::repr(nb::handle(h.type())))));
  }
}

void bind_ops(nb::module_& m) {
  bind_elementwise_ops(m);
  m.def(
      "catalogue",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i < kOpCount; ++i) names.emplace_back(op_name(static_cast<Op>(i)));
        return names;
      },
      "The name of every op of the catalogue (ops/op_list.def), in its order.");

  // ---- creation
  m.def("constant", &constant_of, nb::arg("value"), nb::arg("dtype") = nb::none(),
        "A constant of value's elements (anything numpy reads), as dtype when given.");
  m.def(
      "iota",
      [](std::vector<int64_t> shape, nb::handle dtype, std::optional<int64_t> axis) {
        return iota(Spec{dtype_of_object(dtype, "iota"), Shape(std::move(shape))}, axis);
      },
      nb::arg("shape"), nb::arg("dtype") = DType::S64, nb::arg("axis") = nb::none());
  m.def(
      "eye",
      [](std::vector<int64_t> shape, nb::handle dtype) {
        return eye(Spec{dtype_of_object(dtype, "eye"), Shape(std::move(shape))});
      },
      nb::arg("shape"), nb::arg("dtype") = DType::F32);

  // ---- selection and conversion
  m.def(
      "select",
      [](nb::handle p, nb::handle t, nb::handle f) {
        return select(expr_of(p, "select"), expr_of(t, "select"), expr_of(f, "select"));
      },
      nb::arg("pred"), nb::arg("on_true"), nb::arg("on_false"));
  m.def(
      "clip",
      [](nb::handle x, nb::handle lo, nb::handle hi) {
        return clip(expr_of(x, "clip"), expr_of(lo, "clip"), expr_of(hi, "clip"));
      },
      nb::arg("x"), nb::arg("min"), nb::arg("max"));
  m.def(
      "as_type", [](const Expr& x, nb::handle t) { return as_type(x, dtype_of_object(t, "as_type")); },
      nb::arg("x"), nb::arg("dtype"));
  m.def(
      "bitcast", [](const Expr& x, nb::handle t) { return bitcast(x, dtype_of_object(t, "bitcast")); },
      nb::arg("x"), nb::arg("dtype"));

  // ---- shape
  m.def(
      "reshape", [](const Expr& x, std::vector<int64_t> s) { return reshape(x, Shape(std::move(s))); },
      nb::arg("x"), nb::arg("shape"));
  m.def(
      "squeeze", [](const Expr& x, nb::handle axes) { return squeeze(x, axes_of(axes)); }, nb::arg("x"),
      nb::arg("axes") = nb::none());
  m.def(
      "broadcast",
      [](const Expr& x, std::vector<int64_t> s, nb::handle axes) {
        return broadcast(x, Shape(std::move(s)), axes_of(axes));
      },
      nb::arg("x"), nb::arg("shape"), nb::arg("axes") = nb::none());
  m.def(
      "transpose", [](const Expr& x, nb::handle axes) { return transpose(x, axes_of(axes)); }, nb::arg("x"),
      nb::arg("axes") = nb::none());
  m.def(
      "pad",
      [](const Expr& x, nb::handle value, nb::handle config) {
        return pad(x, expr_of(value, "pad"), padding_of(config, "pad"));
      },
      nb::arg("x"), nb::arg("value"), nb::arg("config"));
  m.def(
      "reverse", [](const Expr& x, nb::handle axes) { return reverse(x, axes_of(axes)); }, nb::arg("x"),
      nb::arg("axes") = nb::none());
  m.def(
      "slice",
      [](const Expr& x, nb::handle starts, std::vector<int64_t> lengths, std::vector<int64_t> strides) {
        bool dynamic = false;
        for (nb::handle s : nb::iter(starts)) dynamic |= !PyLong_Check(s.ptr());
        if (dynamic) return slice(x, exprs_of(starts, "slice"), lengths, strides);
        return slice(x, nb::cast<std::vector<int64_t>>(starts), lengths, strides);
      },
      nb::arg("x"), nb::arg("starts"), nb::arg("lengths"), nb::arg("strides") = std::vector<int64_t>{},
      "Static starts (integers) or dynamic ones (integer scalar Exprs, clamped so the slice fits).");
  m.def(
      "put_slice",
      [](const Expr& x, nb::handle starts, nb::handle update) {
        bool dynamic = false;
        for (nb::handle s : nb::iter(starts)) dynamic |= !PyLong_Check(s.ptr());
        if (dynamic) return put_slice(x, exprs_of(starts, "put_slice"), expr_of(update, "put_slice"));
        return put_slice(x, nb::cast<std::vector<int64_t>>(starts), expr_of(update, "put_slice"));
      },
      nb::arg("x"), nb::arg("starts"), nb::arg("update"));
  m.def(
      "concatenate",
      [](nb::handle xs, int64_t axis) { return concatenate(exprs_of(xs, "concatenate"), axis); },
      nb::arg("xs"), nb::arg("axis") = 0);
  m.def(
      "stack", [](nb::handle xs, int64_t axis) { return stack(exprs_of(xs, "stack"), axis); }, nb::arg("xs"),
      nb::arg("axis") = 0);

  // ---- reductions
#define SLUICE_PY_REDUCTION(fn)                                                                         \
  m.def(                                                                                                \
      #fn, [](const Expr& x, nb::handle axes, bool keep) { return fn(x, reduce_options(axes, keep)); }, \
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keep_axes") = false);
  SLUICE_PY_REDUCTION(sum)
  SLUICE_PY_REDUCTION(product)
  SLUICE_PY_REDUCTION(reduce_max)
  SLUICE_PY_REDUCTION(reduce_min)
  SLUICE_PY_REDUCTION(all)
  SLUICE_PY_REDUCTION(any)
#undef SLUICE_PY_REDUCTION
  for (const char* name : {"argmax", "argmin"}) {
    const bool is_max = name[3] == 'm' && name[4] == 'a';
    m.def(
        name,
        [is_max](const Expr& x, std::optional<int64_t> axis, bool keep_axis, const std::string& tie_break) {
          const ArgOptions o{
              .axis = axis,
              .keep_axis = keep_axis,
              .tie_break = choice<TieBreak>(tie_break, is_max ? "argmax" : "argmin", "tie_break",
                                            {{"low", TieBreak::Low}, {"high", TieBreak::High}})};
          return is_max ? argmax(x, o) : argmin(x, o);
        },
        nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keep_axis") = false,
        nb::arg("tie_break") = "low");
  }

  // ---- dot
  m.def(
      "dot", [](nb::handle a, nb::handle b) { return dot(expr_of(a, "dot"), expr_of(b, "dot")); },
      nb::arg("a"), nb::arg("b"),
      "Matrix/vector product on the last axis of a and the first (or second to last) of b.");
  m.def(
      "dot",
      [](const Expr& a, Axes ca, Axes ba, const Expr& b, Axes cb, Axes bb) {
        return dot(a, ca, ba, b, cb, bb);
      },
      nb::arg("a"), nb::arg("contract_a"), nb::arg("batch_a"), nb::arg("b"), nb::arg("contract_b"),
      nb::arg("batch_b"), "Nx's dot/6: result axes are batch, then a's free, then b's free.");

  // ---- windows and scans
#define SLUICE_PY_WINDOW(fn)                                                                             \
  m.def(                                                                                                 \
      #fn,                                                                                               \
      [](const Expr& x, std::vector<int64_t> window, std::vector<int64_t> strides, nb::handle padding) { \
        return fn(x, window, {.strides = std::move(strides), .padding = padding_of(padding, #fn)});      \
      },                                                                                                 \
      nb::arg("x"), nb::arg("window"), nb::arg("strides") = std::vector<int64_t>{},                      \
      nb::arg("padding") = nb::none());
  SLUICE_PY_WINDOW(window_sum)
  SLUICE_PY_WINDOW(window_max)
  SLUICE_PY_WINDOW(window_min)
  SLUICE_PY_WINDOW(window_product)
#undef SLUICE_PY_WINDOW
#define SLUICE_PY_WINDOW_SCATTER(fn)                                                     \
  m.def(                                                                                 \
      #fn,                                                                               \
      [](const Expr& x, nb::handle source, nb::handle init, std::vector<int64_t> window, \
         std::vector<int64_t> strides, nb::handle padding) {                             \
        return fn(x, expr_of(source, #fn), expr_of(init, #fn), window,                   \
                  {.strides = std::move(strides), .padding = padding_of(padding, #fn)}); \
      },                                                                                 \
      nb::arg("x"), nb::arg("source"), nb::arg("init"), nb::arg("window"),               \
      nb::arg("strides") = std::vector<int64_t>{}, nb::arg("padding") = nb::none());
  SLUICE_PY_WINDOW_SCATTER(window_scatter_max)
  SLUICE_PY_WINDOW_SCATTER(window_scatter_min)
#undef SLUICE_PY_WINDOW_SCATTER
#define SLUICE_PY_CUMULATIVE(fn)                                                                           \
  m.def(                                                                                                   \
      #fn,                                                                                                 \
      [](const Expr& x, int64_t axis, bool reverse) { return fn(x, {.axis = axis, .reverse = reverse}); }, \
      nb::arg("x"), nb::arg("axis") = 0, nb::arg("reverse") = false);
  SLUICE_PY_CUMULATIVE(cumulative_sum)
  SLUICE_PY_CUMULATIVE(cumulative_product)
  SLUICE_PY_CUMULATIVE(cumulative_max)
  SLUICE_PY_CUMULATIVE(cumulative_min)
#undef SLUICE_PY_CUMULATIVE

  // ---- Fourier transforms
  m.def(
      "fft", [](const Expr& x, std::optional<int64_t> n) { return fft(x, n); }, nb::arg("x"),
      nb::arg("length") = nb::none());
  m.def(
      "ifft", [](const Expr& x, std::optional<int64_t> n) { return ifft(x, n); }, nb::arg("x"),
      nb::arg("length") = nb::none());

  // ---- indexing
  m.def(
      "take", [](const Expr& x, nb::handle i, int64_t axis) { return take(x, expr_of(i, "take"), axis); },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0);
  m.def(
      "take_along_axis",
      [](const Expr& x, nb::handle i, int64_t axis) {
        return take_along_axis(x, expr_of(i, "take_along_axis"), axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis"));
  m.def(
      "gather", [](const Expr& x, nb::handle i) { return gather(x, expr_of(i, "gather")); }, nb::arg("x"),
      nb::arg("indices"));
  m.def(
      "indexed_add",
      [](const Expr& x, nb::handle i, nb::handle u) {
        return indexed_add(x, expr_of(i, "indexed_add"), expr_of(u, "indexed_add"));
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("updates"));
  m.def(
      "indexed_put",
      [](const Expr& x, nb::handle i, nb::handle u) {
        return indexed_put(x, expr_of(i, "indexed_put"), expr_of(u, "indexed_put"));
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("updates"));

  // ---- sorting
  for (const char* name : {"sort", "argsort"}) {
    const bool values = name[0] == 's';
    m.def(
        name,
        [values](const Expr& x, int64_t axis, const std::string& direction, bool stable, nb::handle type) {
          const SortOptions o{.axis = axis,
                              .direction = choice<SortDirection>(
                                  direction, values ? "sort" : "argsort", "direction",
                                  {{"asc", SortDirection::Ascending}, {"desc", SortDirection::Descending}}),
                              .stable = stable,
                              .index_dtype = dtype_of_object(type, values ? "sort" : "argsort")};
          return values ? sort(x, o) : argsort(x, o);
        },
        nb::arg("x"), nb::arg("axis") = 0, nb::arg("direction") = "asc", nb::arg("stable") = true,
        nb::arg("type") = DType::S64);
  }
  m.def(
      "top_k",
      [](const Expr& x, int64_t k) {
        const TopK r = top_k(x, k);
        return nb::make_tuple(r.values, r.indices);
      },
      nb::arg("x"), nb::arg("k"), "The k largest along the last axis, largest first, and their indices.");

  // ---- convolution
  m.def(
      "conv",
      [](const Expr& input, const Expr& kernel, std::vector<int64_t> strides, nb::handle padding,
         std::vector<int64_t> input_dilation, std::vector<int64_t> kernel_dilation,
         int64_t feature_group_size, int64_t batch_group_size) {
        ConvOptions o{.strides = std::move(strides),
                      .input_dilation = std::move(input_dilation),
                      .kernel_dilation = std::move(kernel_dilation),
                      .feature_group_size = feature_group_size,
                      .batch_group_size = batch_group_size};
        if (nb::isinstance<nb::str>(padding)) {
          o.padding = choice<ConvPadding>(nb::cast<std::string>(padding), "conv", "padding",
                                          {{"valid", ConvPadding::Valid}, {"same", ConvPadding::Same}});
        } else {
          o.padding = ConvPadding::Explicit;
          o.padding_config = padding_of(padding, "conv");
        }
        return conv(input, kernel, o);
      },
      nb::arg("input"), nb::arg("kernel"), nb::arg("strides") = std::vector<int64_t>{},
      nb::arg("padding") = "valid", nb::arg("input_dilation") = std::vector<int64_t>{},
      nb::arg("kernel_dilation") = std::vector<int64_t>{}, nb::arg("feature_group_size") = 1,
      nb::arg("batch_group_size") = 1,
      "Nx.conv: padding \"valid\", \"same\" or (low, high) per spatial axis.");

  // ---- linear algebra
  m.def(
      "cholesky", [](const Expr& a) { return cholesky(a); }, nb::arg("a"));
  m.def(
      "solve", [](const Expr& a, nb::handle b) { return solve(a, expr_of(b, "solve")); }, nb::arg("a"),
      nb::arg("b"));
  m.def(
      "triangular_solve",
      [](const Expr& a, nb::handle b, bool left_side, bool lower, const std::string& t) {
        return triangular_solve(a, expr_of(b, "triangular_solve"),
                                {.left_side = left_side,
                                 .lower = lower,
                                 .transform_a = choice<TriangularTransform>(
                                     t, "triangular_solve", "transform_a",
                                     {{"none", TriangularTransform::None},
                                      {"transpose", TriangularTransform::Transpose},
                                      {"conjugate", TriangularTransform::ConjugateTranspose}})});
      },
      nb::arg("a"), nb::arg("b"), nb::arg("left_side") = true, nb::arg("lower") = true,
      nb::arg("transform_a") = "none");
  m.def(
      "qr",
      [](const Expr& a, const std::string& mode) {
        const Qr r =
            qr(a, {.mode = choice<QrMode>(mode, "qr", "mode",
                                          {{"reduced", QrMode::Reduced}, {"complete", QrMode::Complete}})});
        return nb::make_tuple(r.q, r.r);
      },
      nb::arg("a"), nb::arg("mode") = "reduced");
  m.def(
      "lu",
      [](const Expr& a) {
        const Lu r = lu(a);
        return nb::make_tuple(r.p, r.l, r.u);
      },
      nb::arg("a"), "p, l, u with a = p l u.");
  m.def(
      "eigh",
      [](const Expr& a) {
        const Eigh r = eigh(a);
        return nb::make_tuple(r.eigenvalues, r.eigenvectors);
      },
      nb::arg("a"), "Eigenvalues (ascending) and eigenvectors (columns) of a Hermitian a.");
}

}  // namespace sluice::python
