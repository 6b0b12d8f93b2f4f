// jit, grad and value_and_grad: a Python function traced over Exprs into a
// sluice Function, once per signature (each argument's dtype and shape),
// compiled for a device and run, as jax.jit does. One object serves both
// uses JAX's transformed functions have: called with tensors (or anything
// numpy reads) it runs compiled; called inside another traced function with
// Exprs, it inlines its Function there (sluice::call), so jitted functions
// and gradients compose.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/autodiff.h>
#include <sluice/ops/function.h>

#include "bindings.h"

namespace sluice::python {
namespace {

// The result of a traced function, rebuilt from its leaves as it was nested.
nb::object rebuild(nb::handle structure, const std::vector<nb::object>& leaves) {
  if (PyLong_CheckExact(structure.ptr())) return leaves.at(nb::cast<size_t>(structure));
  nb::list out;
  for (nb::handle child : nb::iter(structure)) out.append(rebuild(child, leaves));
  return nb::tuple(out);
}

// What a traced function is made into from the Python function's trace
// (jit: itself; grad: its gradient).
using Transform = std::function<Function(Function)>;

class Jitted {
 public:
  Jitted(nb::callable fn, Transform transform, std::string name, Device device)
      : fn_(std::move(fn)), transform_(std::move(transform)), name_(std::move(name)), device_(device) {}

  nb::object call(nb::args args) {
    const size_t n = args.size();
    bool traced = false;
    for (nb::handle a : args) traced |= nb::isinstance<Expr>(a);
    if (traced) {
      std::vector<Expr> exprs;
      for (nb::handle a : args) exprs.push_back(expr_of(a, name_.c_str()));
      std::vector<Spec> specs;
      for (const Expr& e : exprs) specs.push_back(e.spec());
      const Entry& entry = lookup(specs);
      const Tuple out = sluice::call(entry.function, exprs);
      std::vector<nb::object> leaves;
      for (const Expr& e : out) leaves.push_back(nb::cast(e));
      return rebuild(entry.structure, leaves);
    }
    std::vector<Tensor> tensors;
    tensors.reserve(n);
    for (nb::handle a : args) {
      Tensor* t = nullptr;
      if (nb::try_cast<Tensor*>(a, t, false) && t)
        tensors.push_back(*t);
      else
        tensors.push_back(tensor_of(a, name_.c_str()));
    }
    Entry* entry = last_;
    if (!entry || !matches(*entry, tensors)) {
      std::vector<Spec> specs;
      for (const Tensor& t : tensors) specs.push_back(t.spec());
      entry = &lookup(specs);
    }
    if (!entry->executable_ready) {
      entry->executable = compile(entry->function, device_);
      entry->executable_ready = true;
    }
    last_ = entry;
    std::vector<Tensor> outputs;
    {
      nb::gil_scoped_release released;
      outputs = entry->executable.run(tensors);
    }
    if (entry->single) return nb::cast(std::move(outputs[0]));
    std::vector<nb::object> leaves;
    for (Tensor& t : outputs) leaves.push_back(nb::cast(std::move(t)));
    return rebuild(entry->structure, leaves);
  }

  // A stream of this function (stream.cpp), traced at its first send.
  PythonStream* stream(nb::handle acc_init, size_t max_pending, bool discard_outputs) {
    StreamTracer tracer = [transform = transform_](nb::handle fn, const std::vector<Spec>& specs) {
      return transform(trace_python(fn, specs, nullptr));
    };
    return new PythonStream(fn_, std::move(tracer), acc_init, device_,
                            {.max_pending = max_pending, .discard_outputs = discard_outputs});
  }

  // The Function for these argument specs (traced and transformed once).
  const Function& function(const std::vector<Spec>& specs) { return lookup(specs).function; }
  size_t signatures() const { return entries_.size(); }
  void visit_python(const std::function<void(PyObject*)>& visit) const { visit(fn_.ptr()); }
  void clear_python() { fn_.reset(); }

 private:
  struct Entry {
    std::vector<Spec> specs;
    Function function;
    nb::object structure;  // of the Python function's result (flatten_result)
    bool single = false;   // a result of one Expr, not in a tuple
    bool executable_ready = false;
    Executable executable;
  };

  static void count_leaves(nb::handle structure, size_t& n) {
    if (PyLong_CheckExact(structure.ptr())) {
      ++n;
      return;
    }
    for (nb::handle child : nb::iter(structure)) count_leaves(child, n);
  }

  static bool matches(const Entry& e, const std::vector<Tensor>& tensors) {
    if (e.specs.size() != tensors.size()) return false;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (e.specs[i] != tensors[i].spec()) return false;
    return true;
  }

  Entry& lookup(const std::vector<Spec>& specs) {
    for (Entry& e : entries_)
      if (e.specs == specs) return e;
    Entry e;
    e.specs = specs;
    e.function = transform_(trace_python(fn_, specs, &e.structure));
    // A transform (grad) may change the outputs: then they come as a flat tuple.
    const size_t n = e.function.outputs().size();
    size_t leaves = 0;
    count_leaves(e.structure, leaves);
    if (leaves != n) {
      nb::list flat;
      for (size_t i = 0; i < n; ++i) flat.append(nb::int_(i));
      e.structure = n == 1 ? nb::object(nb::int_(0)) : nb::object(nb::tuple(flat));
    }
    e.single = PyLong_CheckExact(e.structure.ptr());
    entries_.push_back(std::move(e));
    last_ = nullptr;  // entries_ may have moved
    return entries_.back();
  }

  nb::object fn_;  // seen by Python's collector (collected_slots): fn may refer to this object
  Transform transform_;
  std::string name_;
  Device device_;
  std::vector<Entry> entries_;
  Entry* last_ = nullptr;  // the signature called last: most calls repeat it
};

std::string name_of(nb::handle fn) {
  return nb::hasattr(fn, "__name__") ? nb::cast<std::string>(fn.attr("__name__")) : std::string("function");
}

Device device_of(nb::handle device) {
  if (device.is_none()) return default_device();
  return client(nb::cast<std::string>(device)).default_device();
}

std::vector<int> argnums_of(nb::handle h) {
  if (PyLong_Check(h.ptr())) return {nb::cast<int>(h)};
  return nb::cast<std::vector<int>>(h);
}

}  // namespace

namespace {

// The Exprs of a traced function's result, nested tuples and lists walked
// depth first; the structure to rebuild from them: each leaf its index.
nb::object flatten_result(nb::handle r, std::vector<Expr>& outputs) {
  if (nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r)) {
    nb::list children;
    for (nb::handle item : nb::iter(r)) children.append(flatten_result(item, outputs));
    return nb::tuple(children);
  }
  outputs.push_back(expr_of(r, "traced function's result"));
  return nb::int_(outputs.size() - 1);
}

}  // namespace

Tuple call_python(nb::handle fn, const std::vector<Expr>& args, nb::object* structure) {
  nb::list python_args;
  for (const Expr& e : args) python_args.append(nb::cast(e));
  nb::object result = fn(*nb::tuple(python_args));
  Tuple outputs;
  nb::object s = flatten_result(result, outputs);
  if (structure) *structure = std::move(s);
  return outputs;
}

Function trace_python(nb::handle fn, const std::vector<Spec>& specs, nb::object* structure) {
  std::vector<Expr> params;
  for (size_t i = 0; i < specs.size(); ++i) params.push_back(parameter(static_cast<int64_t>(i), specs[i]));
  return Function(specs, call_python(fn, params, structure));
}

void bind_jit(nb::module_& m) {
  nb::class_<Function>(m, "Function", "A traced computation: parameters' specs to output Exprs.")
      .def_prop_ro("inputs", &Function::inputs)
      .def_prop_ro("outputs", &Function::output_specs)
      .def("__str__", &Function::str);

  nb::class_<Jitted>(m, "Jitted", nb::type_slots(collected_slots<Jitted>()),
                     "A function traced and compiled per signature; see sluice.jit.")
      .def("__call__", &Jitted::call)
      .def(
          "trace",
          [](Jitted& j, nb::args specs) {
            std::vector<Spec> s;
            for (nb::handle h : specs)
              s.push_back(nb::isinstance<Spec>(h) ? nb::cast<Spec>(h) : tensor_of(h, "trace").spec());
            return j.function(s);
          },
          "The Function traced for these specs (or arrays of them), to read: str(f.trace(...)).")
      .def("stream", &Jitted::stream, nb::arg("acc"), nb::arg("max_pending") = 64,
           nb::arg("discard_outputs") = false, nb::rv_policy::take_ownership,
           "A Stream of this function over chunks: f(chunk..., acc...) returns (outputs..., new acc...).")
      .def_prop_ro("signatures", &Jitted::signatures, "How many signatures have been traced.");

  m.def(
      "jit",
      [](nb::callable fn, nb::handle device) {
        return Jitted(
            fn, [](Function f) { return f; }, name_of(fn), device_of(device));
      },
      nb::arg("fn"), nb::arg("device") = nb::none(),
      "fn traced on its first call per signature (each argument's dtype and shape) and compiled for the "
      "device (default: sluice's default device), as jax.jit. fn takes Exprs and returns an Expr or a "
      "tuple of them.");
  m.def(
      "grad",
      [](nb::callable fn, nb::handle argnums, nb::handle device) {
        std::vector<int> wrt = argnums_of(argnums);
        return Jitted(
            fn, [wrt](Function f) { return grad(f, wrt); }, "grad(" + name_of(fn) + ")", device_of(device));
      },
      nb::arg("fn"), nb::arg("argnums") = 0, nb::arg("device") = nb::none(),
      "The gradient of fn's first output (a real scalar) with respect to the arguments argnums names.");
  m.def(
      "value_and_grad",
      [](nb::callable fn, nb::handle argnums, nb::handle device) {
        std::vector<int> wrt = argnums_of(argnums);
        return Jitted(
            fn, [wrt](Function f) { return value_and_grad(f, wrt); }, "value_and_grad(" + name_of(fn) + ")",
            device_of(device));
      },
      nb::arg("fn"), nb::arg("argnums") = 0, nb::arg("device") = nb::none(),
      "fn's outputs, then the gradients grad computes.");
}

}  // namespace sluice::python
