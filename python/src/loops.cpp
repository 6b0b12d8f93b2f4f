// Loops and reductions with a Python body: scan, while_loop and fori_loop
// with JAX's signatures, reduce and window_reduce with Nx's. A body is
// traced once, over Exprs, into the loop node. A carry, an x and a y are
// each an Expr or a tuple of them, and keep that form through the loop.

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/ops.h>

#include "bindings.h"

namespace sluice::python {
namespace {

// A loop value's Exprs, and whether it was a tuple.
struct Flat {
  Tuple exprs;
  bool tuple = false;
};

Flat flatten(nb::handle h, const char* where) {
  Flat f;
  if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
    f.tuple = true;
    for (nb::handle item : nb::iter(h)) f.exprs.push_back(expr_of(item, where));
  } else if (!h.is_none()) {
    f.exprs.push_back(expr_of(h, where));
  } else {
    f.tuple = true;  // None: no values
  }
  return f;
}

nb::object unflatten(const Tuple& exprs, size_t begin, size_t end, bool tuple) {
  if (!tuple) return nb::cast(exprs.at(begin));
  nb::list out;
  for (size_t i = begin; i < end; ++i) out.append(nb::cast(exprs[i]));
  return nb::tuple(out);
}

// (carry, y) from f(carry, x), flattened as detail::scan wants: the carry's
// Exprs then the ys'.
nb::tuple scan(nb::callable f, nb::handle init, nb::handle xs, std::optional<int64_t> length, bool reverse) {
  const Flat carry = flatten(init, "scan init");
  const Flat x = flatten(xs, "scan xs");
  bool y_tuple = true;
  size_t y_count = 0;
  detail::ScanBody body = [&](const Tuple& c, const Tuple& xi) {
    nb::object r = f(unflatten(c, 0, c.size(), carry.tuple),
                     x.exprs.empty() ? nb::none() : unflatten(xi, 0, xi.size(), x.tuple));
    if (!nb::isinstance<nb::tuple>(r) || nb::len(r) != 2)
      throw TypeError(
          error_message("scan", "f's result", "a (carry, y) pair", nb::cast<std::string>(nb::repr(r))));
    const Flat new_carry = flatten(r[0], "scan f's carry");
    const Flat y = flatten(r[1], "scan f's y");
    y_tuple = y.tuple;
    y_count = y.exprs.size();
    Tuple out = new_carry.exprs;
    out.insert(out.end(), y.exprs.begin(), y.exprs.end());
    return out;
  };
  const Tuple r = detail::scan(body, carry.exprs, x.exprs, length, {.reverse = reverse});
  const size_t n = carry.exprs.size();
  nb::object ys = y_count == 0 && y_tuple ? nb::none() : unflatten(r, n, n + y_count, y_tuple);
  return nb::make_tuple(unflatten(r, 0, n, carry.tuple), ys);
}

nb::object while_loop(nb::callable cond, nb::callable body, nb::handle init) {
  const Flat carry = flatten(init, "while_loop init");
  const auto as_python = [&](const Tuple& c) { return unflatten(c, 0, c.size(), carry.tuple); };
  detail::CarryFn c = [&](const Tuple& v) { return Tuple{expr_of(cond(as_python(v)), "while_loop cond")}; };
  detail::CarryFn b = [&](const Tuple& v) { return flatten(body(as_python(v)), "while_loop body").exprs; };
  const Tuple r = detail::while_loop(c, b, carry.exprs);
  return unflatten(r, 0, r.size(), carry.tuple);
}

nb::object fori_loop(int64_t lower, int64_t upper, nb::callable body, nb::handle init) {
  const Flat carry = flatten(init, "fori_loop init");
  detail::ForiBody b = [&](const Expr& i, const Tuple& v) {
    return flatten(body(i, unflatten(v, 0, v.size(), carry.tuple)), "fori_loop body").exprs;
  };
  const Tuple r = detail::fori_loop(lower, upper, b, carry.exprs);
  return unflatten(r, 0, r.size(), carry.tuple);
}

ReduceFn reduce_fn(nb::callable fn, const char* where) {
  return [fn, where](Expr acc, Expr element) { return expr_of(fn(acc, element), where); };
}

}  // namespace

void bind_loops(nb::module_& m) {
  m.def("scan", &scan, nb::arg("f"), nb::arg("init"), nb::arg("xs") = nb::none(),
        nb::arg("length") = nb::none(), nb::arg("reverse") = false,
        "lax.scan: f(carry, x) -> (carry, y) over the rows of xs (or `length` steps without xs); returns "
        "(final carry, ys stacked).");
  m.def("while_loop", &while_loop, nb::arg("cond"), nb::arg("body"), nb::arg("init"),
        "lax.while_loop: body(carry) while cond(carry), a pred scalar.");
  m.def("fori_loop", &fori_loop, nb::arg("lower"), nb::arg("upper"), nb::arg("body"), nb::arg("init"),
        "lax.fori_loop: body(i, carry) for i in [lower, upper).");
  m.def(
      "reduce",
      [](const Expr& x, nb::handle init, nb::callable fn, nb::handle axes, bool keep_axes) {
        return reduce(x, expr_of(init, "reduce"), reduce_fn(fn, "reduce"), reduce_options(axes, keep_axes));
      },
      nb::arg("x"), nb::arg("init"), nb::arg("fn"), nb::arg("axes") = nb::none(),
      nb::arg("keep_axes") = false,
      "Nx's reduce: fn(acc, element), associative and commutative, folds each output's elements from init.");
  m.def(
      "window_reduce",
      [](const Expr& x, nb::handle init, nb::callable fn, std::vector<int64_t> window,
         std::vector<int64_t> strides, nb::handle padding, std::vector<int64_t> window_dilations) {
        return window_reduce(x, expr_of(init, "window_reduce"), reduce_fn(fn, "window_reduce"), window,
                             {.strides = std::move(strides),
                              .padding = padding_of(padding, "window_reduce"),
                              .window_dilations = std::move(window_dilations)});
      },
      nb::arg("x"), nb::arg("init"), nb::arg("fn"), nb::arg("window"),
      nb::arg("strides") = std::vector<int64_t>{}, nb::arg("padding") = nb::none(),
      nb::arg("window_dilations") = std::vector<int64_t>{},
      "Nx's window_reduce: fn over each window of x, from init.");
  m.def(
      "block",
      [](const std::string& name, nb::callable fallback, nb::args args) {
        std::vector<Expr> exprs;
        std::vector<Spec> specs;
        for (nb::handle a : args) {
          exprs.push_back(expr_of(a, "block"));
          specs.push_back(exprs.back().spec());
        }
        const Tuple r = block(name, trace_python(fallback, specs, nullptr), exprs);
        return r.size() == 1 ? nb::cast(r[0]) : nb::object(nb::tuple(nb::cast(r)));
      },
      nb::arg("name"), nb::arg("fallback"), nb::arg("args"),
      "A named op with a traced fallback (Nx's block): a backend's native kernel for the name, or fallback.");
}

}  // namespace sluice::python
