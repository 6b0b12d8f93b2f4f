// Pipelines from Python: sources of numpy data (a sequence, replayable, or
// an iterator), stages compiled from Python functions, sinks that call
// Python with read-only numpy views, placement across processes (`mpirun
// -np 3 python app.py` runs one partitioned program, as the C++ demo does),
// checkpoints, metrics and the run log, all pipeline/pipeline.h's. Python
// runs only where the user's code is: a source's next item, a sink's
// callback, a stage's trace at start; the GIL is taken there alone, and
// the run itself waits without it.

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/io/npy.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/placement.h>
#include <sluice/pipeline/zmq_nodes.h>
#include <sluice/stream/to_batched.h>

#include "bindings.h"

namespace sluice::python {
namespace {

// The text of the Python exception being handled, as a PipelineError of
// `where`: the run fails with it (ErrorPolicy::Stop) or counts it (Skip).
[[noreturn]] void python_failed(nb::python_error& e, const std::string& where) {
  const std::string type = nb::cast<std::string>(e.type().attr("__name__"));
  throw PipelineError(where + ": Python raised " + type + ": " + nb::cast<std::string>(nb::str(e.value())));
}

// A pipeline and the Python objects its nodes keep (callbacks, data), which
// Python's collector sees through it (collected_slots): a callback that
// refers to the pipeline (a global of the module that made both) makes a
// cycle it must be able to break.
struct PythonPipeline {
  explicit PythonPipeline(PipelineOptions options) : pipeline(std::move(options)) {}
  std::shared_ptr<PythonRef> keep(nb::object o) {
    refs.push_back(std::make_shared<PythonRef>(std::move(o)));
    return refs.back();
  }
  void visit_python(const std::function<void(PyObject*)>& visit) const {
    for (const auto& ref : refs) visit(ref->object.ptr());
  }
  void clear_python() {
    pipeline.cancel();
    for (const auto& ref : refs) ref->object.reset();
  }
  Pipeline pipeline;
  std::vector<std::shared_ptr<PythonRef>> refs;
};

std::chrono::nanoseconds seconds_ns(double s) { return std::chrono::nanoseconds(std::llround(s * 1e9)); }

// A list or tuple (its items made tensors now, sharing the arrays'
// memory, so that no message needs the GIL), a sequence (len and []:
// message i is data[i], read as it is needed), or any iterable (its items
// in order). The first two replay after a restore; an iterator made afresh
// replays by reading past what the checkpoint holds. Each item is an array
// or a tuple of them; the first one gives the source's specs.
std::shared_ptr<Source> python_source(PythonPipeline& p, const std::string& name, nb::handle data) {
  const std::string where = "source " + name;
  if (nb::isinstance<nb::list>(data) || nb::isinstance<nb::tuple>(data)) {
    auto messages = std::make_shared<std::vector<Chunk>>();
    for (nb::handle item : nb::iter(data)) messages->push_back(chunk_of(item, where.c_str()));
    if (messages->empty()) throw ValueError(error_message(where, "data", "at least one item", "none"));
    const std::vector<Spec> spec = specs_of(messages->front().tensors);
    return sources::indexed(spec, [messages](uint64_t i) -> std::optional<Chunk> {
      if (i >= messages->size()) return std::nullopt;
      return (*messages)[i];
    });
  }
  if (nb::isinstance<Batches>(data)) {
    const auto batches = std::make_shared<Batches>(nb::cast<const Batches&>(data));
    return sources::range(*batches);
  }
  if (nb::hasattr(data, "__len__") && nb::hasattr(data, "__getitem__")) {
    const auto items = p.keep(nb::borrow(data));
    const uint64_t count = nb::len(data);
    if (count == 0) throw ValueError(error_message(where, "data", "at least one item", "none"));
    const std::vector<Spec> spec = specs_of(chunk_of(data[0], where.c_str()).tensors);
    return sources::indexed(spec, [items, count, where](uint64_t i) -> std::optional<Chunk> {
      if (i >= count) return std::nullopt;
      CallbackGil gil;
      try {
        return chunk_of(items->object[nb::int_(i)], where.c_str());
      } catch (nb::python_error& e) { python_failed(e, where); }
    });
  }
  nb::object iterator = nb::iter(data);
  const auto it = p.keep(iterator);
  nb::object first;
  try {
    first = iterator.attr("__next__")();
  } catch (nb::python_error& e) {
    if (e.matches(PyExc_StopIteration))
      throw ValueError(error_message(where, "data", "at least one item", "none"));
    throw;
  }
  const auto pending = p.keep(first);
  const std::vector<Spec> spec = specs_of(chunk_of(first, where.c_str()).tensors);
  return sources::generator(spec, [it, pending, where]() -> std::optional<Chunk> {
    CallbackGil gil;
    try {
      if (pending->object.is_valid()) {
        nb::object item = std::move(pending->object);
        return chunk_of(item, where.c_str());
      }
      return chunk_of(it->object.attr("__next__")(), where.c_str());
    } catch (nb::python_error& e) {
      if (e.matches(PyExc_StopIteration)) return std::nullopt;
      python_failed(e, where);
    }
  });
}

// A sink calling fn(*arrays), or fn(*arrays, tags=dict) with `with_tags`:
// each tensor of the message a read-only numpy view.
std::shared_ptr<Sink> python_sink(PythonPipeline& p, const std::string& name, nb::callable fn,
                                  bool with_tags) {
  const auto callback = p.keep(fn);
  const std::string where = "sink " + name;
  return sinks::callback(std::function<void(const Tensors&, const Tags&)>(
      [callback, where, with_tags](const Tensors& message, const Tags& tags) {
        for (const Tensor& t : message) t.wait();  // computed before the GIL is taken
        CallbackGil gil;
        try {
          nb::list args;
          for (const Tensor& t : message) args.append(numpy_view(t, where.c_str()));
          if (with_tags) {
            nb::dict kwargs;
            kwargs["tags"] = tags_to_python(tags);
            callback->object(*nb::tuple(args), **kwargs);
          } else {
            callback->object(*nb::tuple(args));
          }
        } catch (nb::python_error& e) { python_failed(e, where); }
      }));
}

nb::dict result_to_python(const PipelineResult& r) {
  nb::dict out;
  nb::dict accumulators;
  for (const auto& [stage, acc] : r.accumulators) accumulators[stage.c_str()] = tensors_to_python(acc, false);
  out["accumulators"] = accumulators;
  nb::dict metrics;
  for (const NodeMetrics& m : r.metrics) {
    nb::dict d;
    d["kind"] = m.kind;
    d["messages_in"] = m.messages_in;
    d["messages_out"] = m.messages_out;
    d["errors"] = m.errors;
    d["busy_seconds"] = m.busy_seconds;
    d["latency_p50_us"] = m.latency_p50_us;
    d["latency_p99_us"] = m.latency_p99_us;
    nb::dict figures;  // the node kind's own (a batcher's batch sizes, a window's late data)
    for (const auto& [name, value] : m.figures) figures[name.c_str()] = value;
    d["figures"] = figures;
    metrics[m.name.c_str()] = d;
  }
  out["metrics"] = metrics;
  out["checkpoints_completed"] = r.checkpoints.completed;
  out["cancelled"] = r.cancelled;
  return out;
}

PipelineOptions pipeline_options(size_t capacity, const std::string& on_error,
                                 const std::string& checkpoint_dir, uint64_t checkpoint_every,
                                 double checkpoint_every_s, int checkpoint_retain,
                                 std::vector<std::string> at_most_once, const std::string& process,
                                 const std::optional<Placement>& placement, const std::string& name,
                                 int metrics_port, const std::string& run_log, const std::string& trace,
                                 size_t trace_max_events) {
  PipelineOptions o;
  o.capacity = capacity;
  if (on_error == "skip")
    o.on_error = ErrorPolicy::Skip;
  else if (on_error != "stop")
    throw ValueError(error_message("Pipeline", "on_error", "\"stop\" or \"skip\"", "\"" + on_error + "\""));
  o.checkpoint_dir = checkpoint_dir;
  o.checkpoint_interval.messages = checkpoint_every;
  o.checkpoint_interval.time = std::chrono::milliseconds(static_cast<int64_t>(checkpoint_every_s * 1000));
  o.checkpoint_retain = checkpoint_retain;
  o.at_most_once = std::move(at_most_once);
  o.partition.process = process;
  o.partition.placement = placement;
  o.name = name;
  o.metrics_port = metrics_port;
  o.run_log = run_log;
  o.trace = trace;
  o.trace_max_events = trace_max_events;
  return o;
}

}  // namespace

void bind_sources_and_sinks(nb::module_& m) {
  nb::class_<Source>(m, "Source", "Where a pipeline's messages come from (sluice.sources).");
  nb::class_<Sink>(m, "Sink", "Where a pipeline's messages end (sluice.sinks).");
  nb::class_<Collector, Sink>(m, "Collector", "A sink keeping every message, in arrival order.")
      .def(
          "results",
          [](const Collector& c) {
            nb::list out;
            for (const Tensors& message : c.results()) out.append(tensors_to_python(message, true));
            return out;
          },
          "Each message's tensors, as tuples.")
      .def(
          "tags",
          [](const Collector& c) {
            nb::list out;
            for (const Tags& t : c.tags()) out.append(tags_to_python(t));
            return out;
          },
          "Each message's tags, as dicts {(key, offset): value} (offset -1: the whole message).");

  nb::module_ sources = m.def_submodule("sources", "Sources of sluice's own, for Pipeline.source.");
  sources.def(
      "zmq",
      [](const std::string& endpoint, nb::handle spec, int expected_peers) -> std::shared_ptr<Source> {
        std::vector<Spec> specs;
        for (nb::handle s : nb::iter(spec)) specs.push_back(nb::cast<Spec>(s));
        return sources::zmq(endpoint, std::move(specs), {.expected_peers = expected_peers});
      },
      nb::arg("endpoint"), nb::arg("spec"), nb::arg("expected_peers") = 1,
      "Messages of these specs received on a reliable ZeroMQ channel (\"@ipc://...\" binds, "
      "\">tcp://...\" connects), until each peer's end of stream.");
  sources.def(
      "npy_file",
      [](const std::string& path, int64_t batch_size, const std::string& leftover) {
        if (leftover != "repeat" && leftover != "discard")
          throw ValueError(error_message("sources.npy_file", "leftover", "\"repeat\" or \"discard\"",
                                         "\"" + leftover + "\""));
        return sources::range(to_batched(npy::load(path), batch_size,
                                         leftover == "repeat" ? Leftover::Repeat : Leftover::Discard));
      },
      nb::arg("path"), nb::arg("batch_size"), nb::arg("leftover") = "discard",
      "The rows of a .npy file in batches of batch_size (the last partial one dropped, or wrapped around "
      "with leftover=\"repeat\"); it replays after a restore.");
  nb::module_ sinks = m.def_submodule("sinks", "Sinks of sluice's own, for Pipeline.sink.");
  sinks.def("collector", &sinks::collector, "Keeps every message: .results() after the run.");
  sinks.def("npy_files", &sinks::npy_files, nb::arg("directory"),
            "Each message's tensors as .npy files in directory, each message once across restores.");
  sinks.def(
      "zmq", [](const std::string& endpoint) -> std::shared_ptr<Sink> { return sinks::zmq(endpoint); },
      nb::arg("endpoint"), "Each message sent on a reliable ZeroMQ channel, then an end of stream.");
}

void bind_pipeline(nb::module_& m) {
  bind_sources_and_sinks(m);
  nb::class_<NodeId>(m, "Node", "A node of a pipeline, as source, stage and sink return it.")
      .def_ro("index", &NodeId::index);

  nb::class_<Placement>(m, "Placement", "Which processes run a partitioned pipeline, and where they meet.")
      .def_prop_ro("processes", [](const Placement& p) {
        std::vector<std::string> names;
        for (const ProcessPlace& place : p.processes) names.push_back(place.name);
        return names;
      });
  m.def(
      "placement", [](const std::string& given) { return find_placement(given); }, nb::arg("given") = "",
      "A placement from a file path or its text; given empty, from SLUICE_PLACEMENT; None without either.");
  m.def("local_placement", &local_placement, nb::arg("processes"), nb::arg("dir"),
        "Every process on this host, over ipc sockets in dir.");
  m.def(
      "role",
      [](const Placement& p, const std::string& given) -> std::optional<std::string> {
        const std::optional<Role> role = find_role(p, given);
        if (!role) return std::nullopt;
        return role->process;
      },
      nb::arg("placement"), nb::arg("given") = "",
      "This process's name in the placement: `given`, or the launcher's rank (mpirun, srun), or None.");

  nb::class_<PythonPipeline>(m, "Pipeline", nb::type_slots(collected_slots<PythonPipeline>()),
                             "Compiled stages as nodes of a flow graph, fed by sources, drained by sinks.")
      .def(
          "__init__",
          [](PythonPipeline* self, size_t capacity, const std::string& on_error,
             const std::string& checkpoint_dir, uint64_t checkpoint_every, double checkpoint_every_s,
             int checkpoint_retain, std::vector<std::string> at_most_once, const std::string& process,
             const std::optional<Placement>& placement, const std::string& name, int metrics_port,
             const std::string& run_log, const std::string& trace, size_t trace_max_events) {
            new (self) PythonPipeline(pipeline_options(capacity, on_error, checkpoint_dir, checkpoint_every,
                                                       checkpoint_every_s, checkpoint_retain,
                                                       std::move(at_most_once), process, placement, name,
                                                       metrics_port, run_log, trace, trace_max_events));
          },
          nb::kw_only(), nb::arg("capacity") = 64, nb::arg("on_error") = "stop",
          nb::arg("checkpoint_dir") = "", nb::arg("checkpoint_every") = 0,
          nb::arg("checkpoint_every_s") = 0.0, nb::arg("checkpoint_retain") = 3,
          nb::arg("at_most_once") = std::vector<std::string>{}, nb::arg("process") = "",
          nb::arg("placement") = nb::none(), nb::arg("name") = "", nb::arg("metrics_port") = 0,
          nb::arg("run_log") = "", nb::arg("trace") = "",
          nb::arg("trace_max_events") = PipelineOptions{}.trace_max_events)
      .def(
          "source",
          [](PythonPipeline& p, const std::string& name, nb::handle data, const std::string& process) {
            std::shared_ptr<Source> own;
            if (nb::try_cast(data, own, false) && own)
              return p.pipeline.source(name, own, {.process = process});
            return p.pipeline.source(name, python_source(p, name, data), {.process = process});
          },
          nb::arg("name"), nb::arg("data"), nb::kw_only(), nb::arg("process") = "",
          "A source of data's items (arrays, or tuples of them; a sequence replays after a restore), or a "
          "sluice.sources source.")
      .def(
          "stage",
          [](PythonPipeline& p, const std::string& name, nb::callable fn, nb::handle acc, nb::handle input,
             const std::string& device, int concurrency, bool ordered, int64_t batch_size,
             double batch_timeout_s, const std::string& process) {
            StageOptions o;
            if (!acc.is_none()) o.acc = tensors_of(acc, ("stage " + name).c_str());
            if (!input.is_none())
              for (nb::handle s : nb::iter(input)) o.input.push_back(nb::cast<Spec>(s));
            o.device = DevicePreference{device};
            o.concurrency = concurrency;
            o.ordered = ordered;
            o.batch.size = batch_size;
            o.batch.timeout = std::chrono::microseconds(static_cast<int64_t>(batch_timeout_s * 1e6));
            o.process = process;
            const auto f = p.keep(fn);
            return p.pipeline.stage(
                name,
                [f](std::vector<Expr> params) {
                  CallbackGil gil;
                  return call_python(f->object, params, nullptr);
                },
                std::move(o));
          },
          nb::arg("name"), nb::arg("fn"), nb::kw_only(), nb::arg("acc") = nb::none(),
          nb::arg("input") = nb::none(), nb::arg("device") = "host", nb::arg("concurrency") = 1,
          nb::arg("ordered") = true, nb::arg("batch_size") = 0, nb::arg("batch_timeout_s") = 0.001,
          nb::arg("process") = "",
          "fn(message tensors..., acc...) -> (outputs..., new acc...), traced when the run starts and "
          "compiled.")
      .def(
          "sink",
          [](PythonPipeline& p, const std::string& name, nb::handle fn, const std::string& process,
             bool tags) {
            std::shared_ptr<Sink> own;
            if (nb::try_cast(fn, own, false) && own) return p.pipeline.sink(name, own, {.process = process});
            if (!PyCallable_Check(fn.ptr()))
              throw TypeError(error_message("sink " + name, "fn", "a callable or a sluice.sinks sink",
                                            nb::cast<std::string>(nb::repr(nb::handle(fn.type())))));
            return p.pipeline.sink(name, python_sink(p, name, nb::borrow<nb::callable>(fn), tags),
                                   {.process = process});
          },
          nb::arg("name"), nb::arg("fn"), nb::kw_only(), nb::arg("process") = "", nb::arg("tags") = false,
          "fn(*arrays) for each message, with read-only numpy views, the GIL held only inside it "
          "(tags=True: fn(*arrays, tags=dict), the message's tags as sluice.Chunk takes them); or a "
          "sluice.sinks sink.")
      .def(
          "zip_by_time",
          [](PythonPipeline& p, const std::string& name, double tolerance_s, double lateness_s,
             std::shared_ptr<Sink> late, double idle_s, const std::string& process) {
            return p.pipeline.zip_by_time(name,
                                          {.tolerance = seconds_ns(tolerance_s),
                                           .lateness = seconds_ns(lateness_s),
                                           .late = late,
                                           .idle = seconds_ns(idle_s)},
                                          {.process = process});
          },
          nb::arg("name"), nb::kw_only(), nb::arg("tolerance_s") = 0.0, nb::arg("lateness_s") = 0.1,
          nb::arg("late").none() = nb::none(), nb::arg("idle_s") = 0.0, nb::arg("process") = "",
          "Aligns 2 to 4 streams by their rows' times (tags time_ns and sample_rate): the first input's "
          "rows, then each other input's nearest sample within tolerance_s and a bool mask of which "
          "matched. Late chunks go to `late` (a sluice.sinks sink), or are counted and logged. "
          "idle_s > 0: a stream that brought nothing for that long (wall clock) is waited for no longer.")
      .def(
          "event_window",
          [](PythonPipeline& p, const std::string& name, int64_t rows, int64_t every_rows, double length_s,
             double every_s, std::shared_ptr<Sink> late, double idle_s, const std::string& process) {
            return p.pipeline.event_window(name,
                                           {.rows = rows,
                                            .every_rows = every_rows,
                                            .length = seconds_ns(length_s),
                                            .every = seconds_ns(every_s),
                                            .late = late,
                                            .idle = seconds_ns(idle_s)},
                                           {.process = process});
          },
          nb::arg("name"), nb::kw_only(), nb::arg("rows"), nb::arg("every_rows") = 0,
          nb::arg("length_s") = 0.0, nb::arg("every_s") = 0.0, nb::arg("late").none() = nb::none(),
          nb::arg("idle_s") = 0.0, nb::arg("process") = "",
          "Windows of one stream: `rows` rows every `every_rows` (length_s 0), or by time, "
          "[start, start + length_s) every every_s, zero-padded to `rows` rows with the count after. "
          "By time, idle_s > 0 emits the windows holding rows once the stream brought nothing for "
          "that long (wall clock).")
      .def(
          "connect", [](PythonPipeline& p, NodeId from, NodeId to) { p.pipeline.connect(from, to); },
          nb::arg("source"), nb::arg("to"))
      .def(
          "run",
          [](PythonPipeline& p) {
            PipelineResult r;
            {
              nb::gil_scoped_release released;
              r = p.pipeline.run();
            }
            return result_to_python(r);
          },
          "Runs until the sources end and everything drained; returns the accumulators and metrics.")
      .def("start",
           [](PythonPipeline& p) {
             nb::gil_scoped_release released;
             p.pipeline.start();
           })
      .def("wait",
           [](PythonPipeline& p) {
             PipelineResult r;
             {
               nb::gil_scoped_release released;
               r = p.pipeline.wait();
             }
             return result_to_python(r);
           })
      .def(
          "cancel", [](PythonPipeline& p) { p.pipeline.cancel(); }, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "restore",
          [](PythonPipeline& p, const std::string& dir) {
            const RestoreReport r = p.pipeline.restore(dir);
            return nb::make_tuple(r.checkpoint, r.skipped);
          },
          nb::arg("dir") = "",
          "Loads the newest complete checkpoint: (its number or 0, what was skipped and why).")
      .def(
          "to_dot", [](PythonPipeline& p) { return p.pipeline.to_dot(); },
          "The graph as DOT: nodes, the specs on each edge, each process a box (stages traced, not run).")
      .def(
          "to_mermaid", [](PythonPipeline& p) { return p.pipeline.to_mermaid(); },
          "The graph as Mermaid's flowchart.")
      .def("metrics_json", [](PythonPipeline& p) { return p.pipeline.metrics_json(); })
      .def("metrics_prometheus", [](PythonPipeline& p) { return p.pipeline.metrics_prometheus(); })
      .def_prop_ro("metrics_port", [](PythonPipeline& p) { return p.pipeline.metrics_port(); });
}

}  // namespace sluice::python
