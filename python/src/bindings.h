#pragma once
// The parts of sluice._sluice, each bound by its own file, and the
// conversions they share. module.cpp calls the bind_* functions in order.

#include <nanobind/nanobind.h>

#include <sluice/devices/backend.h>
#include <sluice/devices/tags.h>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <sluice/ops/expr.h>
#include <sluice/ops/function.h>
#include <sluice/ops/ops.h>
#include <sluice/stream/stream.h>

namespace sluice::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);  // errors.cpp: the sluice.Error hierarchy
void bind_specs(nb::module_& m);   // specs.cpp: DType, Spec
void bind_tensor(nb::module_& m);  // tensor.cpp: Tensor, numpy, DLPack
void bind_expr(nb::module_& m);    // expr.cpp: Expr and its operators
void bind_ops(nb::module_& m);     // ops.cpp, ops_elementwise.cpp: the op catalogue
void bind_jit(nb::module_& m);     // jit.cpp: jit, grad, value_and_grad
void bind_loops(nb::module_& m);   // loops.cpp: scan, while_loop, fori_loop, reduce's fn
void bind_nn(nb::module_& m);      // nn.cpp: nn helpers, optimizers, random
void bind_stream(nb::module_& m);  // stream.cpp: Stream, to_batched
void bind_tags(nb::module_& m);    // tags.cpp: Chunk
void bind_pipeline(nb::module_& m);  // pipeline.cpp: Pipeline, placements

void bind_elementwise_ops(nb::module_& m);  // ops_elementwise.cpp, from op_list.def

// A dtype from what Python names one by: a DType, its name ("f32",
// "float32"), a numpy dtype or scalar type. TypeError otherwise.
DType dtype_of_object(nb::handle h, const char* where);

// Nx's axes= argument: None for every axis (an empty list), an integer for
// that axis, else a sequence of them; and reduce's options of axes= and keep_axes=.
std::vector<int64_t> axes_of(nb::handle h);
ReduceOptions reduce_options(nb::handle axes, bool keep_axes);

// Padding as (low, high) or (low, high, interior) per axis (ValueError otherwise).
std::vector<PadDim> padding_of(nb::handle h, const char* where);

// An Expr from a traced value or a constant: an Expr as it is, a Python
// int or float as a weak scalar (as C++'s `x + 1`), a bool as a pred, a
// Tensor or anything numpy can read as a constant of its values.
Expr expr_of(nb::handle h, const char* where);

// Each item of a sequence, as expr_of makes it.
std::vector<Expr> exprs_of(nb::handle h, const char* where);

// A host Tensor from a Tensor as it is, or from anything numpy reads: its
// memory shared when numpy's layout allows (contiguous, of a dtype sluice
// has), a copy otherwise.
Tensor tensor_of(nb::handle h, const char* where);

// numpy's name of a dtype ("float32"; ml_dtypes' "bfloat16").
std::string_view numpy_dtype_name(DType t);

// The Function of a Python callable traced over parameters of `specs`: it
// returns an Expr or tuples (lists) of them, nested; *structure (when asked
// for) is that nesting with each Expr replaced by its output's index.
Function trace_python(nb::handle fn, const std::vector<Spec>& specs, nb::object* structure);
// The same for a Python callable called on Exprs already made (a trace
// under way): its results, flattened.
Tuple call_python(nb::handle fn, const std::vector<Expr>& args, nb::object* structure);

// A tensor or a tuple (list) of them, as tensor_of reads each; *tuple
// (when asked for) says whether h was a tuple.
Tensors tensors_of(nb::handle h, const char* where, bool* tuple = nullptr);

// The GIL for a callback from a thread of sluice's (a pipeline's worker
// calling a sink). Python makes such a thread a thread state each time it
// takes the GIL and frees it each time it lets go (PyGILState), which cost
// a sink about 6 us a message here; this keeps the thread's state for the
// thread's life, then takes the GIL as nb::gil_scoped_acquire does.
class CallbackGil {
 private:
  struct KeepThreadState {
    KeepThreadState();
  } kept_;  // before gil_: the state is kept, then used
  nb::gil_scoped_acquire gil_;
};

// A Python object that C++ keeps (a numpy array under a tensor, a
// pipeline's callback): freed on whatever thread lets it go, so it takes
// the GIL then (and leaks it once the interpreter is gone).
struct PythonRef {
  explicit PythonRef(nb::object o) : object(std::move(o)) {}
  ~PythonRef();
  PythonRef(const PythonRef&) = delete;
  PythonRef& operator=(const PythonRef&) = delete;
  nb::object object;
};

// A read-only numpy array viewing a tensor's memory (waited for, without
// the GIL), which keeps the tensor alive.
nb::object numpy_view(const Tensor& t, const char* where);

// Python's collector sees the Python objects a C++ object of a bound class
// keeps (a function, a callback, which may refer back to the object through
// a module's globals), so that it can break such cycles: the type slots for
// nb::class_<T>(..., nb::type_slots(collected_slots<T>())), given
//   void T::visit_python(const std::function<void(PyObject*)>&) const;
//   void T::clear_python();   // lets them go: the object is garbage
template <typename T>
PyType_Slot* collected_slots() {
  static PyType_Slot slots[] = {
      {Py_tp_traverse, reinterpret_cast<void*>(+[](PyObject* self, visitproc visit, void* arg) -> int {
         Py_VISIT(Py_TYPE(self));
         if (!nb::inst_ready(self)) return 0;
         int failed = 0;
         nb::inst_ptr<T>(self)->visit_python([&](PyObject* o) {
           if (o && !failed) failed = visit(o, arg);
         });
         return failed;
       })},
      {Py_tp_clear, reinterpret_cast<void*>(+[](PyObject* self) -> int {
         nb::inst_ptr<T>(self)->clear_python();
         return 0;
       })},
      {0, nullptr}};
  return slots;
}

// Tuples of results: one result as itself, several as a Python tuple.
nb::object tensors_to_python(const std::vector<Tensor>& tensors, bool as_tuple);

// Tags (devices/tags.h) as Python holds them, as sluice.wire's Message.tags
// does: {(key, offset): value}, offset -1 for the whole chunk (a plain key
// also means the whole chunk); values int, float, str or an array.
// tags.cpp; ValueError or TypeError naming `where` and the key.
Tags tags_of(nb::handle dict, const char* where);
nb::dict tags_to_python(const Tags& tags);
// A source's item: a sluice.Chunk (its tensors and tags), or what
// tensors_of reads (no tags).
Chunk chunk_of(nb::handle item, const char* where);

// Traces (and transforms: jit, grad) a Python function for a stream's
// specs, the chunk's then the accumulator's.
using StreamTracer = std::function<Function(nb::handle fn, const std::vector<Spec>& specs)>;

// A Python stream (stream.cpp): the C++ Stream made at the first send.
class PythonStream {
 public:
  PythonStream(nb::object fn, StreamTracer trace, nb::handle acc_init, Device device, StreamOptions options);
  ~PythonStream();
  PythonStream(const PythonStream&) = delete;
  PythonStream& operator=(const PythonStream&) = delete;
  void send(nb::handle chunk);
  nb::object recv();
  nb::object done();
  Stream* stream() { return stream_ ? &*stream_ : nullptr; }
  void visit_python(const std::function<void(PyObject*)>& visit) const { visit(fn_.ptr()); }
  void clear_python() { fn_.reset(); }

 private:
  Stream& open(const char* where);
  nb::object fn_;  // the Python function, which Python's collector sees (collected_slots)
  StreamTracer trace_;
  Device device_;
  StreamOptions options_;
  Tensors acc_init_;
  bool acc_tuple_ = false;
  std::vector<Spec> input_spec_;
  bool outputs_tuple_ = false;
  std::optional<Stream> stream_;
};

}  // namespace sluice::python
