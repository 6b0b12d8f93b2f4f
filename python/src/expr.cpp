// sluice.Expr: a symbolic tensor inside a function being traced, with
// Python's operators (as C++'s: arithmetic, comparisons, bitwise, @ as dot),
// .shape, .dtype, .T, and indexing with integers, slices (positive steps)
// and an Ellipsis, which become slice, reverse-free and squeeze ops.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/ops.h>

#include "bindings.h"

namespace sluice::python {
namespace {

// x[key]: each integer picks one index of its axis (the axis then goes),
// each slice a strided range, an Ellipsis the axes it stands for.
Expr index(const Expr& x, nb::handle key) {
  std::vector<nb::handle> items;
  if (nb::isinstance<nb::tuple>(key)) {
    for (nb::handle item : nb::borrow<nb::tuple>(key)) items.push_back(item);
  } else {
    items.push_back(key);
  }
  size_t ellipses = 0;
  for (nb::handle item : items) ellipses += item.is(Py_Ellipsis);
  if (ellipses > 1)
    throw ShapeError(error_message("Expr[]", "key", "at most one Ellipsis", std::to_string(ellipses)));
  const int rank = x.rank();
  if (static_cast<int>(items.size() - ellipses) > rank)
    throw ShapeError(error_message("Expr[]", "key",
                                   "at most " + std::to_string(rank) + " indices for " + x.spec().str(),
                                   std::to_string(items.size() - ellipses)));
  std::vector<int64_t> starts(rank, 0), lengths(x.shape().dims()), strides(rank, 1);
  std::vector<int64_t> squeezed;
  int axis = 0;
  for (nb::handle item : items) {
    if (item.is(Py_Ellipsis)) {
      axis += rank - static_cast<int>(items.size() - 1);
      continue;
    }
    const int64_t dim = x.shape().dim(axis);
    if (PyLong_Check(item.ptr())) {
      int64_t i = nb::cast<int64_t>(item);
      if (i < -dim || i >= dim)
        throw ShapeError(error_message("Expr[]", "index of axis " + std::to_string(axis),
                                       "in [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")",
                                       std::to_string(i)));
      starts[axis] = i < 0 ? i + dim : i;
      lengths[axis] = 1;
      squeezed.push_back(axis);
    } else if (PySlice_Check(item.ptr())) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
      if (step <= 0)
        throw ValueError(error_message("Expr[]", "slice step of axis " + std::to_string(axis),
                                       "a positive step", std::to_string(step)));
      const Py_ssize_t n = PySlice_AdjustIndices(dim, &start, &stop, step);
      starts[axis] = start;
      lengths[axis] = n == 0 ? 0 : (n - 1) * step + 1;  // slice's lengths span the input, strides included
      strides[axis] = step;
    } else {
      throw TypeError(error_message("Expr[]", "key", "integers, slices and an Ellipsis",
                                    nb::cast<std::string>(nb::repr(item))));
    }
    ++axis;
  }
  Expr out = slice(x, starts, lengths, strides);
  return squeezed.empty() ? out : squeeze(out, squeezed);
}

// Binary operators: e OP other and other OP e (reflected), other an Expr,
// a number or a constant.
template <Expr (*F)(Expr, Expr)>
void binary(nb::class_<Expr>& c, const char* name, const char* reflected) {
  c.def(name, [](const Expr& a, nb::handle b) { return F(a, expr_of(b, "Expr operator")); });
  if (reflected)
    c.def(reflected, [](const Expr& a, nb::handle b) { return F(expr_of(b, "Expr operator"), a); });
}

Expr matmul(Expr a, Expr b) { return dot(a, b); }

}  // namespace

void bind_expr(nb::module_& m) {
  nb::class_<Expr> c(
      m, "Expr", "A symbolic tensor inside a traced function: ops build graphs of them, jit compiles them.");
  c.def_prop_ro("dtype", &Expr::dtype)
      .def_prop_ro("shape",
                   [](const Expr& e) { return nb::tuple(nb::cast(std::vector<int64_t>(e.shape().dims()))); })
      .def_prop_ro("ndim", &Expr::rank)
      .def_prop_ro("size", [](const Expr& e) { return e.shape().size(); })
      .def_prop_ro("spec", &Expr::spec)
      .def_prop_ro(
          "T", [](const Expr& e) { return transpose(e); }, "The axes reversed.")
      .def(
          "astype",
          [](const Expr& e, nb::handle dtype) { return as_type(e, dtype_of_object(dtype, "astype")); },
          nb::arg("dtype"))
      .def(
          "reshape",
          [](const Expr& e, std::vector<int64_t> shape) { return reshape(e, Shape(std::move(shape))); },
          nb::arg("shape"))
      .def(
          "sum",
          [](const Expr& e, std::vector<int64_t> axes, bool keep_axes) {
            return sum(e, {.axes = std::move(axes), .keep_axes = keep_axes});
          },
          nb::arg("axes") = std::vector<int64_t>{}, nb::arg("keep_axes") = false)
      .def("__getitem__", &index)
      .def("__neg__", [](const Expr& e) { return negate(e); })
      .def("__pos__", [](const Expr& e) { return e; })
      .def("__abs__", [](const Expr& e) { return abs(e); })
      .def("__invert__", [](const Expr& e) { return bitwise_not(e); })
      .def("__len__",
           [](const Expr& e) {
             if (e.rank() == 0)
               throw TypeError(error_message("len", "", "an Expr of rank 1 or more", "a scalar"));
             return e.shape().dim(0);
           })
      .def("__bool__",
           [](const Expr&) -> bool {
             throw TypeError(error_message(
                 "bool(Expr)", "", "a value known when tracing",
                 "a traced Expr, whose value comes only when the compiled function runs (use select, "
                 "while_loop or Python values for control flow)"));
           })
      .def("__repr__", [](const Expr& e) { return "sluice.Expr(" + e.spec().str() + ")"; });
  binary<add>(c, "__add__", "__radd__");
  binary<subtract>(c, "__sub__", "__rsub__");
  binary<multiply>(c, "__mul__", "__rmul__");
  binary<divide>(c, "__truediv__", "__rtruediv__");
  binary<quotient>(c, "__floordiv__", "__rfloordiv__");
  binary<remainder>(c, "__mod__", "__rmod__");
  binary<pow>(c, "__pow__", "__rpow__");
  binary<matmul>(c, "__matmul__", "__rmatmul__");
  binary<bitwise_and>(c, "__and__", "__rand__");
  binary<bitwise_or>(c, "__or__", "__ror__");
  binary<bitwise_xor>(c, "__xor__", "__rxor__");
  binary<left_shift>(c, "__lshift__", "__rlshift__");
  binary<right_shift>(c, "__rshift__", "__rrshift__");
  binary<less>(c, "__lt__", nullptr);
  binary<less_equal>(c, "__le__", nullptr);
  binary<greater>(c, "__gt__", nullptr);
  binary<greater_equal>(c, "__ge__", nullptr);
  binary<equal>(c, "__eq__", nullptr);
  binary<not_equal>(c, "__ne__", nullptr);
  // An Expr compares by value into a pred Expr, so it hashes by identity.
  c.def("__hash__", [](const Expr& e) { return reinterpret_cast<intptr_t>(e.node().get()); });
}

}  // namespace sluice::python
