// sluice.Tensor: a computed (or pending) tensor on a device. Host tensors
// and numpy share memory both ways where the layout allows: np.asarray(t)
// is a read-only view of t's memory (a tensor is immutable; np.array(t)
// copies), and sluice.asarray(a) wraps a's memory without a copy when a is
// C-contiguous and of a dtype sluice has. The buffer protocol and DLPack
// (__dlpack__, sluice.from_dlpack) give the same views to other libraries;
// a CUDA tensor's DLPack names its device memory. Reading a pending tensor
// waits for it, with the GIL released.

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/devices/backend.h>
#include <sluice/ops/dtype.h>

#include "bindings.h"

namespace sluice::python {
namespace {

namespace dl = nb::dlpack;

dl::dtype dlpack_dtype(DType t) {
  const auto bits = static_cast<uint8_t>(dtype_bits(t));
  switch (dtype_kind(t)) {
    case DTypeKind::Pred: return {static_cast<uint8_t>(dl::dtype_code::Bool), 8, 1};
    case DTypeKind::Signed: return {static_cast<uint8_t>(dl::dtype_code::Int), bits, 1};
    case DTypeKind::Unsigned: return {static_cast<uint8_t>(dl::dtype_code::UInt), bits, 1};
    case DTypeKind::Complex: return {static_cast<uint8_t>(dl::dtype_code::Complex), bits, 1};
    case DTypeKind::Float:
      return {static_cast<uint8_t>(t == DType::BF16 ? dl::dtype_code::Bfloat : dl::dtype_code::Float), bits,
              1};
  }
  throw InternalError("dlpack_dtype: a dtype of no kind");
}

std::optional<DType> dtype_of_dlpack(dl::dtype d) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    const dl::dtype e = dlpack_dtype(t);
    if (e.code == d.code && e.bits == d.bits && d.lanes == 1) return t;
  }
  return std::nullopt;
}

void wait_without_gil(const Tensor& t) {
  if (t.is_ready()) return;
  nb::gil_scoped_release released;
  t.wait();
}

// A view of t's memory (host, or a GPU's for DLPack) that keeps t alive:
// nanobind's array object, which speaks both the buffer protocol and DLPack.
using View = nb::ndarray<nb::ro>;
View view_of(const Tensor& t, const char* where) {
  if (!t) throw ValueError(error_message(where, "tensor", "a tensor", "an empty one"));
  wait_without_gil(t);
  const Device device = t.device();
  int device_type = nb::device::cpu::value;
  const void* data = nullptr;
  if (device.host_memory()) {
    data = t.host_data();
  } else if (device.platform() == "cuda") {
    device_type = nb::device::cuda::value;
    data = t.buffer()->data;
  } else {
    throw DeviceError(error_message(where, "", "a tensor in host or CUDA memory",
                                    "one on " + device.str() + " (use to_host())"));
  }
  std::vector<size_t> shape(t.shape().dims().begin(), t.shape().dims().end());
  nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return View(data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(t.dtype()), device_type,
              device.host_memory() ? 0 : device.id());
}

using Imported = nb::ndarray<nb::ro, nb::device::cpu>;

// A tensor wrapping a C-contiguous array's memory (an empty one for other
// strides), read-only to sluice: no run ever donates it, so the user's
// array is never written.
Tensor tensor_of_array(const Imported& a, nb::handle owner, const char* where) {
  const std::optional<DType> dtype = dtype_of_dlpack(a.dtype());
  if (!dtype)
    throw TypeError(error_message(
        where, "array dtype", "one of sluice's dtypes",
        "DLPack code " + std::to_string(a.dtype().code) + ", " + std::to_string(a.dtype().bits) + " bits"));
  std::vector<int64_t> dims(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) dims[i] = static_cast<int64_t>(a.shape(i));
  const Spec spec{*dtype, Shape(std::move(dims))};
  // C-contiguous: strides (in elements) as a row-major array's, or any for an axis of size 1.
  bool contiguous = true;
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) contiguous = false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  if (!contiguous) return {};
  auto keep = std::make_shared<PythonRef>(nb::borrow(owner));
  Tensor t = wrap_host(spec, const_cast<void*>(a.data()), std::move(keep));
  t.buffer()->read_only = true;
  return t;
}

}  // namespace

nb::object numpy_view(const Tensor& t, const char* where) {
  return nb::cast(nb::ndarray<nb::numpy, nb::ro>(view_of(t, where)));
}

namespace {

// One PyGILState count a thread holds for its life, so that its thread
// state stays; given back when the thread ends, while Python still runs.
struct KeptThreadState {
  PyThreadState* state = nullptr;
  void keep() {
    if (state || PyGILState_GetThisThreadState() != nullptr) return;  // kept, or Python's own thread
    PyGILState_Ensure();          // makes this thread's state: the count never released...
    state = PyEval_SaveThread();  // ...while the GIL is let go at once
  }
  ~KeptThreadState() {
    if (!state || !Py_IsInitialized()) return;
    PyEval_RestoreThread(state);
    PyGILState_Release(PyGILState_UNLOCKED);  // the last count: frees the state, lets the GIL go
  }
};
thread_local KeptThreadState kept_thread_state;

}  // namespace

CallbackGil::KeepThreadState::KeepThreadState() { kept_thread_state.keep(); }

PythonRef::~PythonRef() {
  if (PyGILState_Check()) {
    object.reset();  // this thread holds the GIL (Python's own thread, finalizing included)
  } else if (Py_IsInitialized()) {
    CallbackGil gil;
    object.reset();
  } else {
    object.release();  // another thread, with the interpreter gone: nothing left to free it
  }
}

Tensors tensors_of(nb::handle h, const char* where, bool* tuple) {
  Tensors out;
  const bool several = nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h);
  if (several)
    for (nb::handle item : nb::iter(h)) out.push_back(tensor_of(item, where));
  else
    out.push_back(tensor_of(h, where));
  if (tuple) *tuple = several;
  return out;
}

Tensor tensor_of(nb::handle h, const char* where) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  // An array already (numpy's, or anything with the buffer protocol or
  // DLPack) of a layout sluice takes as it is: wrapped, no copy, no numpy call.
  Imported imported;
  if (nb::try_cast(h, imported, false))
    if (Tensor t = tensor_of_array(imported, h, where)) return t;
  // Anything else numpy reads (lists, scalars, other strides), as numpy reads it.
  nb::object numpy = nb::module_::import_("numpy");
  nb::object array = numpy.attr("ascontiguousarray")(h);
  if (!nb::try_cast(array, imported, false))
    throw TypeError(error_message(where, "", "an array of one of sluice's dtypes",
                                  nb::cast<std::string>(nb::str(array.attr("dtype")))));
  Tensor t = tensor_of_array(imported, array, where);
  if (!t)
    throw InternalError(error_message(where, "", "a contiguous array after ascontiguousarray", "strides"));
  return t;
}

nb::object tensors_to_python(const std::vector<Tensor>& tensors, bool as_tuple) {
  if (!as_tuple && tensors.size() == 1) return nb::cast(tensors[0]);
  nb::list out;
  for (const Tensor& t : tensors) out.append(nb::cast(t));
  return nb::tuple(out);
}

void bind_tensor(nb::module_& m) {
  static PyType_Slot slots[] = {
      {Py_bf_getbuffer, reinterpret_cast<void*>(+[](PyObject* self, Py_buffer* view, int flags) -> int {
         try {
           nb::object v = numpy_view(nb::cast<Tensor>(nb::handle(self)), "buffer");
           return PyObject_GetBuffer(v.ptr(), view, flags);
         } catch (nb::python_error& e) { e.restore(); } catch (const std::exception& e) {
           PyErr_SetString(PyExc_BufferError, e.what());
         }
         view->obj = nullptr;
         return -1;
       })},
      {0, nullptr}};
  nb::class_<Tensor>(m, "Tensor", nb::type_slots(slots),
                     "A tensor on a device, computed or pending. np.asarray(t) views a host tensor's memory.")
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro(
          "shape",
          [](const Tensor& t) { return nb::tuple(nb::cast(std::vector<int64_t>(t.shape().dims()))); })
      .def_prop_ro("ndim", &Tensor::rank)
      .def_prop_ro("size", &Tensor::size)
      .def_prop_ro("spec", &Tensor::spec)
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); })
      .def("is_ready", &Tensor::is_ready, "Whether the tensor is computed.")
      .def(
          "wait", [](const Tensor& t) { wait_without_gil(t); }, "Waits until the tensor is computed.")
      .def(
          "to_host",
          [](const Tensor& t) {
            nb::gil_scoped_release released;
            return t.to_host();
          },
          "A copy in host memory (the tensor itself when it is there).")
      .def(
          "numpy", [](const Tensor& t) { return numpy_view(t, "Tensor.numpy"); },
          "A read-only numpy view of a host tensor's memory.")
      .def(
          "__array__",
          [](const Tensor& t, nb::handle dtype, nb::handle copy) {
            nb::object a = numpy_view(t, "Tensor.__array__");
            if (!dtype.is_none())
              a = a.attr("astype")(dtype);
            else if (!copy.is_none() && nb::cast<bool>(copy))
              a = a.attr("copy")();
            return a;
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def(
          "__dlpack__",
          [](const Tensor& t, nb::kwargs) {
            // A DLPack capsule (unversioned, which every consumer takes); a
            // stream to synchronise with is moot: the tensor is waited for.
            return nb::cast(view_of(t, "Tensor.__dlpack__"));
          },
          nb::arg("kwargs"))
      .def("__dlpack_device__",
           [](const Tensor& t) {
             const Device d = t.device();
             return d.host_memory() ? nb::make_tuple(int{nb::device::cpu::value}, 0)
                                    : nb::make_tuple(int{nb::device::cuda::value}, d.id());
           })
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0)
               throw TypeError(error_message("len", "", "a tensor of rank 1 or more", "a scalar"));
             return t.shape().dim(0);
           })
      .def("__getitem__",
           [](const Tensor& t, nb::handle key) -> nb::object {
             // The common read of one element of a vector, without a numpy array.
             if (t.rank() == 1 && PyLong_CheckExact(key.ptr()) && t.dtype() == DType::F32) {
               int64_t i = nb::cast<int64_t>(key);
               const int64_t n = t.shape().dim(0);
               if (i < 0) i += n;
               if (i < 0 || i >= n)
                 throw nb::index_error(("index " + std::to_string(nb::cast<int64_t>(key)) +
                                        " is out of bounds for " + std::to_string(n) + " elements")
                                           .c_str());
               wait_without_gil(t);
               return nb::float_(static_cast<const float*>(t.host_data())[i]);
             }
             return numpy_view(t, "Tensor.__getitem__")[key];
           })
      .def("item", [](const Tensor& t) { return numpy_view(t, "Tensor.item").attr("item")(); })
      .def("tolist", [](const Tensor& t) { return numpy_view(t, "Tensor.tolist").attr("tolist")(); })
      .def("__float__", [](const Tensor& t) { return nb::float_(numpy_view(t, "float").attr("item")()); })
      .def("__int__", [](const Tensor& t) { return nb::int_(numpy_view(t, "int").attr("item")()); })
      .def("__bool__", [](const Tensor& t) { return nb::cast<bool>(numpy_view(t, "bool").attr("item")()); })
      .def("__str__",
           [](const Tensor& t) {
             wait_without_gil(t);
             return t.str();
           })
      .def("__repr__", [](const Tensor& t) {
        wait_without_gil(t);
        return "sluice.Tensor(" + t.str() + ")";
      });

  m.def(
      "asarray",
      [](nb::handle a, nb::handle dtype) {
        if (dtype.is_none()) return tensor_of(a, "sluice.asarray");
        nb::object numpy = nb::module_::import_("numpy");
        const DType t = dtype_of_object(dtype, "sluice.asarray");
        return tensor_of(numpy.attr("asarray")(a, std::string(numpy_dtype_name(t))), "sluice.asarray");
      },
      nb::arg("a"), nb::arg("dtype") = nb::none(),
      "A host Tensor of `a` (a Tensor, numpy array, DLPack or buffer object, list or number), sharing "
      "its memory when it is C-contiguous and of the dtype asked for.");
  m.def(
      "from_dlpack",
      [](nb::handle a) {
        Imported imported;
        if (!nb::try_cast(a, imported, false))
          throw TypeError(error_message("sluice.from_dlpack", "", "an object with __dlpack__ in host memory",
                                        nb::cast<std::string>(nb::repr(nb::handle(a.type())))));
        const Tensor t = tensor_of_array(imported, a, "sluice.from_dlpack");
        if (!t) throw ValueError(error_message("sluice.from_dlpack", "", "a C-contiguous array", "strides"));
        return t;
      },
      nb::arg("a"), "A host Tensor sharing the memory of a DLPack producer (read-only to sluice).");
  m.def(
      "zeros",
      [](std::vector<int64_t> shape, nb::handle dtype) {
        return zeros(Spec{dtype_of_object(dtype, "sluice.zeros"), Shape(std::move(shape))});
      },
      nb::arg("shape"), nb::arg("dtype") = DType::F32);
  m.def(
      "ones",
      [](std::vector<int64_t> shape, nb::handle dtype) {
        return ones(Spec{dtype_of_object(dtype, "sluice.ones"), Shape(std::move(shape))});
      },
      nb::arg("shape"), nb::arg("dtype") = DType::F32);
}

}  // namespace sluice::python
