// `sluice demo`: the sensor monitor of samples/sensor_monitor. By default
// its source, its two compiled stages and its monitor run as three
// processes of this program, joined by ZeroMQ over ipc:
//
//   sluice demo --role source ──ipc──> --role compute ──ipc──> --role sink
//   vibration                          spectrum, detector      monitor
//
// The parent starts them, waits for all three and exits with the sink's
// status: 0 only when the detector learned. --in-process runs the same
// pipeline in one process.
//
// --checkpoint-dir DIR: the source places a barrier every 100 ms; the
// compute process stores checkpoints of its stages in DIR and, started
// again with the same command, resumes from the newest (its source's
// sender replays what came after it, the monitor drops what it had). The
// parent starts a compute process that a signal killed again.

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "pipeline/zmq_nodes.h"
#include "samples/sensor_monitor/sensor_monitor.h"
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
  // The hidden part: what a child process of the three-process demo runs.
  std::string role;
  std::string input, output;  // ipc endpoints
};

sm::Config config_of(const DemoOptions& o) {
  sm::Config c;
  c.channels = o.channels;
  c.seconds = o.seconds;
  c.seed = o.seed;
  c.chunks = o.chunks;
  c.device = sm::device_or_host(o.device);
  return c;
}

sm::Progress progress_here() { return isatty(STDOUT_FILENO) ? sm::Progress::Line : sm::Progress::Log; }

int finish(const sm::Summary& summary, const sm::Config& c) {
  sm::print_summary(std::cout, summary, c);
  return summary.learned() ? kExitOk : kExitFailed;
}

// ---- the three roles: one pipeline each, joined by reliable channels.
// A few messages in flight on each channel: enough to keep both sides busy,
// few enough that a slow receiver slows its sender instead of queueing
// seconds of data (the default credit is 1000 messages).
constexpr uint64_t kInFlight = 8;
// The compute process's stream to the monitor: a restored compute process
// continues it, and the monitor drops what it had.
constexpr uint64_t kScoresStream = 1;
constexpr auto kBarrierEvery = std::chrono::milliseconds(100);

ZmqSinkOptions to_peer(uint64_t stream_id = 0) {
  ZmqSinkOptions o;
  o.stream_id = stream_id;
  o.channel.credit_messages = kInFlight;  // what the sender keeps for its receiver
  // A peer that is gone (the run stopped) is not waited for a minute.
  o.finish_timeout = std::chrono::seconds(10);
  o.channel.peer_timeout = std::chrono::seconds(10);
  return o;
}

ZmqSourceOptions from_peer(bool continue_streams = false) {
  ZmqSourceOptions o;
  o.channel.continue_streams = continue_streams;
  o.channel.credit_messages = kInFlight;  // what the receiver grants
  return o;
}

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

int run_role(const DemoOptions& o) {
  exit_with_parent();
  sm::Config c = config_of(o);
  const bool checkpoints = !o.checkpoint_dir.empty();
  // A restored compute process must round as the one before it did
  // (devices/cpu/kernels/fft.cpp); a choice of the user's stands.
  if (checkpoints) setenv("SLUICE_FFT_PLANS", "estimate", /*overwrite=*/0);
  PipelineOptions options = sm::pipeline_options(c);
  if (checkpoints && o.role == "source") options.checkpoint_interval.time = kBarrierEvery;
  if (checkpoints && o.role == "compute") options.checkpoint_dir = o.checkpoint_dir;
  Pipeline p(options);
  CancelOnSignal cancel_on_signal(p);
  if (o.role == "source") {
    p.connect(p.source("vibration", sm::vibration(c)), p.sink("to compute", sinks::zmq(o.output, to_peer())));
    p.run();
    return cancel_on_signal.fired() ? kExitInterrupted : kExitOk;
  }
  if (o.role == "compute") {
    NodeId in = p.source("from source", sources::zmq(o.input, sm::signal_spec(c), from_peer()));
    p.connect(sm::add_compute_stages(p, in, c),
              p.sink("to sink", sinks::zmq(o.output, to_peer(kScoresStream))));
    if (checkpoints) {
      RestoreReport r = p.restore();
      if (r.checkpoint > 0) std::cerr << "compute: resuming from checkpoint " << r.checkpoint << "\n";
    }
    const CheckpointMetrics m = p.run().checkpoints;
    if (checkpoints)
      std::cerr << std::fixed << std::setprecision(1) << "compute: " << m.completed
                << " checkpoints stored, the last (" << m.last_number << ") " << m.last_bytes << " bytes in "
                << m.last_duration_s * 1e3 << " ms, aligned in " << m.last_alignment_s * 1e3 << " ms\n";
    return cancel_on_signal.fired() ? kExitInterrupted : kExitOk;
  }
  auto monitor = std::make_shared<sm::Monitor>(c, std::cout, progress_here());
  p.connect(p.source("from compute", sources::zmq(o.input, sm::score_spec(c), from_peer(checkpoints))),
            p.sink("monitor", monitor));
  p.run();
  return finish(monitor->summary(), c);
}

int run_processes(const DemoOptions& o, const std::string& self) {
  TempDir dir("sluice-demo");
  const std::string signal = "ipc://" + dir.path() + "/signal", scores = "ipc://" + dir.path() + "/scores";
  std::vector<std::string> common = {self,         "demo",
                                     "--channels", std::to_string(o.channels),
                                     "--seconds",  std::to_string(o.seconds),
                                     "--chunks",   std::to_string(o.chunks),
                                     "--seed",     std::to_string(o.seed),
                                     "--device",   o.device};
  if (!o.checkpoint_dir.empty()) common.insert(common.end(), {"--checkpoint-dir", o.checkpoint_dir});
  auto role = [&](const std::string& name, const std::string& in, const std::string& out) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--role", name});
    if (!in.empty()) args.insert(args.end(), {"--input", in});
    if (!out.empty()) args.insert(args.end(), {"--output", out});
    return args;
  };
  std::cout << "sluice demo: source, compute and sink as three processes, joined by ZeroMQ over " << signal
            << " and " << scores << "\n"
            << std::flush;
  // The receivers bind; the order they start in does not matter to ZeroMQ.
  ProcessGroup group;
  group.start("sink", role("sink", scores, ""));
  group.start("compute", role("compute", signal, scores), /*restart_when_killed=*/!o.checkpoint_dir.empty());
  group.start("source", role("source", "", signal));
  // A stalled run is ended: generous, since the stages compile before data flows.
  // Ctrl-C or SIGTERM here stops the children in order, and the temporary
  // directory goes with this function.
  StopSignals signals;
  std::vector<ProcessGroup::Exit> exits = group.wait(o.seconds + 120, [&] { return signals.requested(); });
  int status = kExitOk;
  std::string line = "processes:";
  for (const ProcessGroup::Exit& e : exits) {
    line += " " + e.name + " " + e.how;
    if (e.status != kExitOk) status = kExitFailed;  // the sink's when the detector did not learn
  }
  std::cout << line << "\n";
  return signals.requested() ? kExitInterrupted : status;
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
                   "where the compiled stages run (cuda falls back to host where there is none)")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  demo->add_option("--chunks", o->chunks,
                   "how many chunks the source produces (0: as many as --seconds allow)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  demo->add_option("--checkpoint-dir", o->checkpoint_dir,
                   "checkpoint the compute process's stages here every 100 ms; a compute process killed and "
                   "started again (the parent does it) resumes from the newest checkpoint");
  demo->add_flag("--in-process", o->in_process, "run source, stages and sink in this one process");
  // What the parent passes to its children; not for people.
  demo->add_option("--role", o->role)->check(CLI::IsMember({"source", "compute", "sink"}))->group("");
  demo->add_option("--input", o->input)->group("");
  demo->add_option("--output", o->output)->group("");
  demo->parse_complete_callback([o] {
    bool needs_input = o->role == "compute" || o->role == "sink";
    bool needs_output = o->role == "compute" || o->role == "source";
    if ((needs_input && o->input.empty()) || (needs_output && o->output.empty()))
      throw CLI::ValidationError("--role " + o->role, "is missing its --input or --output endpoint");
    if (o->in_process && !o->checkpoint_dir.empty())
      throw CLI::ValidationError("--checkpoint-dir", "checkpoints the three-process run; drop --in-process");
  });
  return {demo, [o] {
            if (!o->role.empty()) return run_role(*o);
            sm::Config c = config_of(*o);
            if (o->device == "cuda" && c.device == host())
              std::cerr << "sluice demo: no CUDA device here, the stages run on " << c.device.str() << "\n";
            if (o->in_process) return finish(sm::run_in_process(c, std::cout, progress_here()), c);
            return run_processes(*o, self_path());
          }};
}

}  // namespace sluice::tools
