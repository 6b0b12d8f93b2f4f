// Dtypes and specs in Python: sluice.DType (Nx's names: f32, s64, pred,
// ...), and sluice.Spec, a dtype and a shape. A dtype is also accepted as
// its name, numpy's name ("float32"), or a numpy dtype or scalar type.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <string>
#include <string_view>

#include <sluice/base/error.h>
#include <sluice/ops/dtype.h>
#include <sluice/ops/shape.h>

#include "bindings.h"

namespace sluice::python {
namespace {

// numpy's name of each dtype, in DType's order (ml_dtypes names bfloat16).
constexpr std::array<std::string_view, kDTypeCount> kNumpyNames = {
    "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
    "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};

DType dtype_of_name(std::string_view name, const char* where) {
  for (size_t i = 0; i < kNumpyNames.size(); ++i)
    if (kNumpyNames[i] == name) return static_cast<DType>(i);
  return dtype_from_name(name, where);
}

}  // namespace

DType dtype_of_object(nb::handle h, const char* where) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  if (nb::isinstance<nb::str>(h)) return dtype_of_name(nb::cast<std::string>(h), where);
  // A numpy dtype, or what numpy makes one of (np.float32, "f4").
  nb::object numpy = nb::module_::import_("numpy");
  nb::object dtype;
  try {
    dtype = numpy.attr("dtype")(h);
  } catch (const nb::python_error&) {
    throw TypeError(error_message(where, "dtype", "a sluice.DType, its name or a numpy dtype",
                                  nb::cast<std::string>(nb::repr(h))));
  }
  return dtype_of_name(nb::cast<std::string>(dtype.attr("name")), where);
}

std::string_view numpy_dtype_name(DType t) { return kNumpyNames[static_cast<size_t>(t)]; }

void bind_specs(nb::module_& m) {
  nb::enum_<DType> dtype(m, "DType", "A tensor's element type, by Nx's names.");
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    const std::string name(dtype_name(t));
    dtype.value(name.c_str(), t);
    m.attr(name.c_str()) = t;  // sluice.f32 as jnp.float32
  }
  dtype.def_prop_ro("name", [](DType t) { return std::string(dtype_name(t)); })
      .def_prop_ro("numpy_name", [](DType t) { return std::string(numpy_dtype_name(t)); })
      .def_prop_ro("bits", [](DType t) { return dtype_bits(t); })
      .def("__str__", [](DType t) { return std::string(dtype_name(t)); });
  m.def(
      "dtype", [](nb::handle h) { return dtype_of_object(h, "sluice.dtype"); }, nb::arg("dtype"),
      "The DType named by a DType, its name, numpy's name, or a numpy dtype.");
  m.def("promote_types", &promote, nb::arg("a"), nb::arg("b"),
        "The dtype a binary op of a and b computes in.");

  nb::class_<Spec>(m, "Spec", "A tensor's dtype and shape: what a function is traced and compiled for.")
      .def(
          "__init__",
          [](Spec* self, std::vector<int64_t> shape, nb::handle dtype) {
            new (self) Spec{dtype_of_object(dtype, "Spec"), Shape(std::move(shape))};
          },
          nb::arg("shape"), nb::arg("dtype") = DType::F32)
      .def_prop_ro("dtype", [](const Spec& s) { return s.dtype; })
      .def_prop_ro("shape",
                   [](const Spec& s) { return nb::tuple(nb::cast(std::vector<int64_t>(s.shape.dims()))); })
      .def("__eq__", [](const Spec& a, const Spec& b) { return a == b; })
      .def("__hash__",
           [](const Spec& s) {
             return nb::hash(nb::make_tuple(static_cast<int>(s.dtype),
                                            nb::tuple(nb::cast(std::vector<int64_t>(s.shape.dims())))));
           })
      .def("__repr__", [](const Spec& s) { return "Spec(" + s.str() + ")"; });
}

}  // namespace sluice::python
