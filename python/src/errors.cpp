// sluice's exceptions in Python: sluice.Error and one subclass per C++
// subclass (base/error.h), each also a subclass of the builtin a Python
// user would reach for (ShapeError and ValueError are ValueErrors,
// TypeError is a TypeError, the rest RuntimeErrors), so that both
// `except sluice.ShapeError` and `except ValueError` catch a bad shape.

#include <exception>

#include <sluice/base/error.h>

#include "bindings.h"

namespace sluice::python {
namespace {

struct PythonErrors {
  PyObject* error = nullptr;
  PyObject* shape = nullptr;
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* device = nullptr;
  PyObject* stream = nullptr;
  PyObject* wire = nullptr;
  PyObject* checkpoint = nullptr;
  PyObject* config = nullptr;
  PyObject* internal = nullptr;
  PyObject* pipeline = nullptr;
};
PythonErrors errors;

PyObject* add(nb::module_& m, const char* name, PyObject* builtin, const char* doc) {
  nb::object bases = errors.error ? nb::make_tuple(nb::handle(errors.error), nb::handle(builtin))
                                  : nb::make_tuple(nb::handle(builtin));
  const std::string qualified = std::string("sluice.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;  // the module keeps it
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const ShapeError& e) { PyErr_SetString(errors.shape, e.what()); } catch (const TypeError& e) {
    PyErr_SetString(errors.type, e.what());
  } catch (const ValueError& e) { PyErr_SetString(errors.value, e.what()); } catch (const DeviceError& e) {
    PyErr_SetString(errors.device, e.what());
  } catch (const StreamError& e) { PyErr_SetString(errors.stream, e.what()); } catch (const WireError& e) {
    PyErr_SetString(errors.wire, e.what());
  } catch (const CheckpointError& e) {
    PyErr_SetString(errors.checkpoint, e.what());
  } catch (const ConfigError& e) {
    PyErr_SetString(errors.config, e.what());
  } catch (const InternalError& e) {
    PyErr_SetString(errors.internal, e.what());
  } catch (const PipelineError& e) { PyErr_SetString(errors.pipeline, e.what()); } catch (const Error& e) {
    PyErr_SetString(errors.error, e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  errors.error = add(m, "Error", PyExc_Exception, "Every error sluice raises: what, where, expected, found.");
  errors.shape = add(m, "ShapeError", PyExc_ValueError, "Dims, ranks, axes.");
  errors.type = add(m, "TypeError", PyExc_TypeError, "Dtypes.");
  errors.value =
      add(m, "ValueError", PyExc_ValueError, "An argument's value: empty, out of range, miscounted.");
  errors.device = add(m, "DeviceError", PyExc_RuntimeError, "Clients, buffers, backends, kernels.");
  errors.stream = add(m, "StreamError", PyExc_RuntimeError, "send / recv / done.");
  errors.wire = add(m, "WireError", PyExc_RuntimeError, "Frames on the wire.");
  errors.checkpoint = add(m, "CheckpointError", PyExc_RuntimeError, "Checkpoint stores, restores.");
  errors.config = add(m, "ConfigError", PyExc_RuntimeError, "Environment variables, settings.");
  errors.internal =
      add(m, "InternalError", PyExc_RuntimeError, "A broken invariant of sluice itself: a bug.");
  errors.pipeline = add(m, "PipelineError", PyExc_RuntimeError, "Stages and edges.");
  nb::register_exception_translator(translate);
}

}  // namespace sluice::python
