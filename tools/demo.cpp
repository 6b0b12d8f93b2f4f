// `sluice demo`: the sensor monitor of samples/sensor_monitor, one
// partitioned pipeline whose nodes name their processes. By default its
// source, its two compiled stages and its monitor run as three processes
// of this program, each building its part, joined by ZeroMQ over ipc:
//
//   sluice demo --role source ──ipc──> --role compute ──ipc──> --role sink
//   vibration                          spectrum, detector      joined, monitor
//   tachometer ─────────────────────────────ipc─────────────────────┘
//
// The parent starts them, waits for all three and exits with the sink's
// status: 0 only when the detector learned. --in-process runs the same
// pipeline in one process. Under a launcher (mpirun -np 3, srun -n 3, a
// StatefulSet of 3) each rank runs the process of its rank; --placement
// (or SLUICE_PLACEMENT) says where each is, by default all on this host
// over ipc.
//
// --checkpoint-dir DIR: the source places a barrier every 100 ms; the
// compute process stores checkpoints of its stages in DIR and, started
// again with the same command, resumes from the newest (its source's
// sender replays what came after it, the monitor drops what it had). The
// parent starts a compute process that a signal killed again.
//
// --metrics-port N: each process serves its metrics on 127.0.0.1, port N
// plus its rank in the placement (source N, compute N+1, sink N+2; N
// in-process), GET /metrics and /metrics.json (README, "Metrics").
//
// --run-log FILE: every process appends its pipeline's metrics and the
// sample's records (a spectrogram, the detector's scores against the true
// faults, the accuracy so far) to FILE, which the parent (or the one
// process of --in-process) first empties; `sluice report FILE` draws them.
//
// --trace FILE: each process writes its timeline (PipelineOptions::trace)
// beside FILE as FILE.ROLE.json, which the parent merges into FILE (as
// `sluice trace merge` does) once the three have exited.

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <sensor_monitor/sensor_monitor.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/placement.h>
#include <sluice/pipeline/trace.h>
#include "tools/commands.h"
#include "tools/processes.h"
#include "tools/stop_signals.h"

namespace sluice::tools {
namespace {

namespace sm = sensor_monitor;

struct DemoOptions {
  int64_t channels = 8;
  double seconds = 20;
  uint64_t seed = 1;
  std::string device = "host";
  bool in_process = false;
  int64_t chunks = 0;
  std::string checkpoint_dir;
  std::string role;       // one process of the three (else: a launcher's rank, or all three)
  std::string placement;  // where each process runs (placement.h); default: this host, ipc
  int metrics_port = 0;   // the first process's; each serves on this plus its rank (0: none)
  std::string run_log;    // every process appends its records here (empty: none)
  std::string trace;  // the run's timeline; each of three processes writes its part beside it (empty: none)
};

sm::Config config_of(const DemoOptions& o) {
  sm::Config c;
  c.channels = o.channels;
  c.seconds = o.seconds;
  c.seed = o.seed;
  c.chunks = o.chunks;
  // Resolved by the process that runs the stages: the others make no client.
  c.device = o.device == "host" ? DevicePreference{"host"}
                                 : DevicePreference({o.device, "host"}, {.preallocate = false});
  c.metrics_port = o.metrics_port;
  c.run_log = o.run_log;
  c.trace = o.trace;
  return c;
}

sm::Progress progress_here() { return isatty(STDOUT_FILENO) ? sm::Progress::Line : sm::Progress::Log; }

int finish(const sm::Summary& summary, const sm::Config& c) {
  sm::print_summary(std::cout, summary, c);
  return summary.learned() ? kExitOk : kExitFailed;
}

// ---- the three processes: one partitioned pipeline.

// Where process `role` writes its part of the trace `path`, which the
// launcher merges (as `sluice trace merge` does) once the three are done.
std::string trace_part(const std::string& path, const std::string& role) {
  return path + "." + role + ".json";
}

void merge_trace_parts(const std::string& path) {
  std::vector<std::string> parts;
  for (const std::string& role : sm::kProcesses) parts.push_back(trace_part(path, role));
  merge_traces(parts, path);
  for (const std::string& part : parts) std::filesystem::remove(part);
  std::cout << "trace: " << path << " (" << parts.size() << " processes; open it in ui.perfetto.dev)\n";
}
constexpr auto kBarrierEvery = std::chrono::milliseconds(100);
// A peer gone (the run stopped) is not waited for a minute.
constexpr auto kPeerTimeout = std::chrono::seconds(10);
// Where the placement came from when a launcher started the processes on
// this host without one.
constexpr const char* kLauncherDefault = "the default under a launcher (this host, ipc)";

// SIGINT or SIGTERM (the parent stopping the run, or its death) cancels the
// role's pipeline: its sinks still send their end of stream.
class CancelOnSignal {
 public:
  explicit CancelOnSignal(Pipeline& p)
      : watcher_([this, &p] {
          while (!done_.load()) {
            if (signals_.requested()) {
              p.cancel();
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~CancelOnSignal() {
    done_.store(true);
    watcher_.join();
  }
  CancelOnSignal(const CancelOnSignal&) = delete;
  CancelOnSignal& operator=(const CancelOnSignal&) = delete;
  bool fired() const { return signals_.requested(); }

 private:
  StopSignals signals_;
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

int run_role(const DemoOptions& o, const Placement& placement, const Role& role) {
  exit_with_parent();
  sm::Config c = config_of(o);
  const std::string& me = role.process;
  if (!o.trace.empty()) c.trace = trace_part(o.trace, me);
  const bool checkpoints = !o.checkpoint_dir.empty();
  PipelineOptions options = sm::pipeline_options(c);
  options.partition = {.process = me, .placement = placement, .peer_timeout = kPeerTimeout};
  if (o.metrics_port > 0) options.metrics_port = o.metrics_port + placement.rank_of(me);
  if (checkpoints && me == "source") options.checkpoint_interval.time = kBarrierEvery;
  if (checkpoints && me == "compute") options.checkpoint_dir = o.checkpoint_dir;
  Pipeline p(options);
  CancelOnSignal cancel_on_signal(p);
  auto monitor = std::make_shared<sm::Monitor>(c, std::cout, progress_here(), p.run_log());
  sm::add_sensor_monitor(p, c, monitor);
  if (checkpoints && me == "compute") {
    RestoreReport r = p.restore();
    if (r.checkpoint > 0) std::cerr << "compute: resuming from checkpoint " << r.checkpoint << "\n";
  }
  const CheckpointMetrics m = p.run().checkpoints;
  if (checkpoints && me == "compute")
    std::cerr << fmt::format(
        "compute: {} checkpoints stored, the last ({}) {} bytes in {:.1f} ms, aligned in {:.1f} ms\n",
        m.completed, m.last_number, m.last_bytes, m.last_duration_s * 1e3, m.last_alignment_s * 1e3);
  if (me == "sink") return finish(monitor->summary(), c);
  return cancel_on_signal.fired() ? kExitInterrupted : kExitOk;
}

// All three on this host over ipc, in rank order, their sockets named
// `name` in the abstract namespace (Linux): nothing on disk, so nothing left
// behind however a process ends, SIGKILL of the parent or of a rank included.
std::string local_placement_text(const std::string& name) {
  std::string text;
  for (const std::string& p : sm::kProcesses) text += (text.empty() ? "" : ",") + p + "=ipc://@" + name;
  return text;
}

// This process's part when it is one of the three: --role, or a launcher's
// rank (mpirun, srun, PMI, a StatefulSet pod); nullopt: start all three.
std::optional<std::pair<Placement, Role>> own_part(const DemoOptions& o) {
  std::optional<int> world = launcher_size();
  if (o.role.empty() && world == 1) return std::nullopt;  // a launcher of one: it starts the three itself
  std::optional<Placement> placement = find_placement(o.placement);
  // Ranks started together on one host without a placement share their launcher's process.
  if (!placement)
    placement = parse_placement(local_placement_text(fmt::format("sluice-demo-{}", getppid())), kLauncherDefault);
  std::optional<Role> role = find_role(*placement, o.role);
  if (!role) return std::nullopt;
  if (o.role.empty() && world && *world != static_cast<int>(sm::kProcesses.size()))
    throw PipelineError(
        error_message("sluice demo under a launcher", "ranks",
                      fmt::format("{} ranks, one per process (source, compute, sink)", sm::kProcesses.size()),
                      fmt::format("{}", *world)));
  return std::pair{*placement, *role};
}

int run_processes(const DemoOptions& o, const std::string& self) {
  const std::string sockets = fmt::format("sluice-demo-{}-{:08x}", getpid(), std::random_device{}());
  const std::string placement = local_placement_text(sockets);
  std::vector<std::string> common = {self,         "demo",
                                     "--channels", fmt::format("{}", o.channels),
                                     "--seconds",  fmt::format("{}", o.seconds),
                                     "--chunks",   fmt::format("{}", o.chunks),
                                     "--seed",     fmt::format("{}", o.seed),
                                     "--device",   o.device};
  if (!o.checkpoint_dir.empty()) common.insert(common.end(), {"--checkpoint-dir", o.checkpoint_dir});
  if (o.metrics_port > 0) common.insert(common.end(), {"--metrics-port", fmt::format("{}", o.metrics_port)});
  if (!o.run_log.empty()) common.insert(common.end(), {"--run-log", o.run_log});
  if (!o.trace.empty()) common.insert(common.end(), {"--trace", o.trace});
  common.insert(common.end(), {"--placement", placement});
  auto role = [&](const std::string& name) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--role", name});
    return args;
  };
  std::cout
      << "sluice demo: one pipeline as three processes (source, compute, sink), joined by ZeroMQ over ipc (@"
      << sockets << "/...)\n"
      << std::flush;
  // The receivers bind; the order they start in does not matter to ZeroMQ.
  ProcessGroup group;
  group.start("sink", role("sink"));
  group.start("compute", role("compute"), /*restart_when_killed=*/!o.checkpoint_dir.empty());
  group.start("source", role("source"));
  // A stalled run is ended: generous, since the stages compile before data flows.
  // Ctrl-C or SIGTERM here stops the children in order.
  StopSignals signals;
  std::vector<ProcessGroup::Exit> exits = group.wait(o.seconds + 120, [&] { return signals.requested(); });
  int status = kExitOk;
  std::string line = "processes:";
  for (const ProcessGroup::Exit& e : exits) {
    line += " " + e.name + " " + e.how;
    if (e.status != kExitOk) status = kExitFailed;  // the sink's when the detector did not learn
  }
  std::cout << line << "\n";
  if (!o.trace.empty() && status == kExitOk) merge_trace_parts(o.trace);
  return signals.requested() ? kExitInterrupted : status;
}

// A run's log starts empty, so that the report shows this run alone; the
// path is made absolute, so that the processes agree on it wherever they run.
void start_run_log(DemoOptions& o) {
  if (o.run_log.empty()) return;
  o.run_log = std::filesystem::absolute(o.run_log).string();
  std::ofstream truncate(o.run_log, std::ios::trunc);
  if (!truncate)
    throw PipelineError(error_message("sluice demo --run-log",
                                      fmt::format("cannot create '{}': {}", o.run_log, std::strerror(errno)), "", ""));
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "the sensor monitor: vibration data through a compiled spectrum and an online-trained fault detector, "
      "as three processes joined by ZeroMQ; exits with 0 when the detector learned");
  demo->add_option("--channels", o->channels, "sensor channels")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  demo->add_option("--seconds", o->seconds, "how long the source produces data (wall clock)")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  demo->add_option("--seed", o->seed, "the seed of the synthetic signal and its faults")
      ->capture_default_str();
  demo->add_option("--device", o->device,
                   "where the compiled stages run: a platform of this build (falls back to host where it is "
                   "not available)")
      ->check(CLI::IsMember(known_platforms()))
      ->capture_default_str();
  demo->add_option("--chunks", o->chunks,
                   "how many chunks the source produces (0: as many as --seconds allow)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  demo->add_option("--checkpoint-dir", o->checkpoint_dir,
                   "checkpoint the compute process's stages here every 100 ms; a compute process killed and "
                   "started again (the parent does it) resumes from the newest checkpoint");
  demo->add_option("--metrics-port", o->metrics_port,
                   "serve each process's metrics on 127.0.0.1 (GET /metrics, Prometheus' text format, and "
                   "/metrics.json) on this port plus its rank in the placement: source N, compute N+1, sink "
                   "N+2; --in-process: N (0: off)")
      ->check(CLI::Range(0, 65533))
      ->capture_default_str();
  demo->add_option(
      "--run-log", o->run_log,
      "append each process's metrics, a spectrogram, the detector's scores against the true faults "
      "and its accuracy to this file as JSON Lines (emptied first), for `sluice report`");
  demo->add_option("--trace", o->trace,
                   "write the run's timeline to this file: the Chrome trace event format (ui.perfetto.dev, "
                   "chrome://tracing), a slice per node per message and a flow following each message "
                   "through the three processes (under a launcher, each rank writes FILE.ROLE.json for "
                   "`sluice trace merge`)");
  demo->add_flag("--in-process", o->in_process, "run source, stages and sink in this one process");
  demo->add_option(
          "--role", o->role,
          "run one process of the three (with --placement); default: a launcher's rank (mpirun, srun, "
          "PMI, a StatefulSet pod), else all three")
      ->check(CLI::IsMember(sm::kProcesses));
  demo->add_option(
      "--placement", o->placement,
      "where each process runs: a file or text, e.g. "
      "'source=tcp://10.0.0.1,compute=tcp://10.0.0.2,sink=ipc:///tmp/s' (default: SLUICE_PLACEMENT, "
      "else this host over ipc)");
  demo->parse_complete_callback([o] {
    const char* from_environment = std::getenv("SLUICE_PLACEMENT");
    if (!o->role.empty() && o->placement.empty() && (!from_environment || !*from_environment))
      throw CLI::ValidationError("--role " + o->role,
                                 "needs --placement (or SLUICE_PLACEMENT): where the other processes are");
    if (o->in_process && !o->checkpoint_dir.empty())
      throw CLI::ValidationError("--checkpoint-dir", "checkpoints the three-process run; drop --in-process");
  });
  return {demo, [o] {
            // Under a launcher, each rank appends to the log as it is.
            if (auto part = own_part(*o)) return run_role(*o, part->first, part->second);
            start_run_log(*o);
            if (!o->trace.empty()) o->trace = std::filesystem::absolute(o->trace).string();
            sm::Config c = config_of(*o);
            if (o->in_process) return finish(sm::run_in_process(c, std::cout, progress_here()), c);
            return run_processes(*o, self_path());
          }};
}

}  // namespace sluice::tools
