// Streams from Python: s = f.stream(acc) over a jitted f(chunk..., acc...)
// -> (outputs..., new acc...), then s.send(chunk) / s.recv() / s.done(), as
// the C++ Stream (stream/stream.h). The function is traced and compiled at
// the first send, for that chunk's specs. Every wait happens with the GIL
// released, so other Python threads run while a chunk computes.
// to_batched(t, n) cuts a tensor into batches of n rows, lazily.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/stream/stream.h>
#include <sluice/stream/to_batched.h>

#include "bindings.h"

namespace sluice::python {
PythonStream::PythonStream(nb::object fn, StreamTracer trace, nb::handle acc_init, Device device,
                           StreamOptions options)
    : fn_(std::move(fn)), trace_(std::move(trace)), device_(device), options_(options) {
  acc_init_ = tensors_of(acc_init, "stream acc", &acc_tuple_);
}

PythonStream::~PythonStream() {
  // Pending chunks end without the GIL: a chunk's inputs may be numpy
  // arrays whose release, on a worker, takes it.
  nb::gil_scoped_release released;
  stream_.reset();
}

void PythonStream::send(nb::handle chunk) {
  const Tensors chunk_tensors = tensors_of(chunk, "Stream.send");
  if (!stream_) {
    std::vector<Spec> specs;
    for (const Tensor& t : chunk_tensors) specs.push_back(t.spec());
    input_spec_ = specs;
    for (const Tensor& t : acc_init_) specs.push_back(t.spec());
    const Function f = trace_(fn_, specs);
    const size_t outputs = f.outputs().size();
    if (outputs < acc_init_.size())
      throw ValueError(error_message(
          "Stream", "the function's results",
          "its outputs then the new accumulator's " + std::to_string(acc_init_.size()) + " tensors",
          std::to_string(outputs) + " results"));
    outputs_tuple_ = outputs - acc_init_.size() != 1;
    nb::gil_scoped_release released;
    stream_.emplace(f, input_spec_, acc_init_, device_, options_);
  }
  nb::gil_scoped_release released;
  stream_->send(chunk_tensors);
}

nb::object PythonStream::recv() {
  Tensors out;
  {
    nb::gil_scoped_release released;
    out = open("Stream.recv").recv();
  }
  return tensors_to_python(out, outputs_tuple_);
}

nb::object PythonStream::done() {
  if (!stream_) return tensors_to_python(acc_init_, acc_tuple_);  // nothing sent: the accumulator as it began
  Tensors acc;
  {
    nb::gil_scoped_release released;
    acc = stream_->done();
  }
  return tensors_to_python(acc, acc_tuple_);
}

Stream& PythonStream::open(const char* where) {
  if (!stream_) throw StreamError(error_message(where, "", "a chunk sent first", "nothing sent"));
  return *stream_;
}

void bind_stream(nb::module_& m) {
  nb::class_<PythonStream>(m, "Stream", nb::type_slots(collected_slots<PythonStream>()),
                           "A compiled function run chunk by chunk with an accumulator: send / recv / done.")
      .def("send", &PythonStream::send, nb::arg("chunk"),
           "Enqueues a chunk (a tensor, or a tuple of them) and returns without waiting for it; blocks while "
           "max_pending outputs wait unreceived.")
      .def("recv", &PythonStream::recv, "The outputs of the oldest unreceived chunk, waiting for them.")
      .def("done", &PythonStream::done, "Waits for every chunk sent; returns the final accumulator.")
      .def_prop_ro("sent", [](PythonStream& s) { return s.stream() ? s.stream()->sent() : 0; })
      .def_prop_ro("received", [](PythonStream& s) { return s.stream() ? s.stream()->received() : 0; });

  nb::class_<Batches>(m, "Batches", "Batches of a tensor's rows, made as they are read.")
      .def("__len__", &Batches::size)
      .def_prop_ro("batch_size", &Batches::batch_size)
      .def("__getitem__", [](const Batches& b, int64_t i) {
        if (i < 0) i += b.size();
        if (i < 0 || i >= b.size()) throw nb::index_error("batch index out of range");
        return b[i];
      });
  m.def(
      "to_batched",
      [](nb::handle tensor, int64_t batch_size, const std::string& leftover) {
        Leftover l = Leftover::Repeat;
        if (leftover == "discard")
          l = Leftover::Discard;
        else if (leftover != "repeat")
          throw ValueError(
              error_message("to_batched", "leftover", "\"repeat\" or \"discard\"", "\"" + leftover + "\""));
        return to_batched(tensor_of(tensor, "to_batched"), batch_size, l);
      },
      nb::arg("tensor"), nb::arg("batch_size"), nb::arg("leftover") = "repeat",
      "Batches of batch_size rows along axis 0; a last partial batch wraps around (repeat) or goes "
      "(discard).");
}

}  // namespace sluice::python
