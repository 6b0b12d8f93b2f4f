#pragma once
// The sensor monitor: vibration data from a machine's sensors streamed
// through compiled kernels, and a fault detector trained online on it.
//
//   vibration ──> spectrum ──────────────> detector ──> joined ──> monitor
//   (source)      Hann, FFT, log band       logistic     by time    progress line,
//   C x 1024      energies, normalised      regression,  to the     summary: accuracy,
//   per window    acc: running mean/var     one Adam     shaft      precision, recall,
//                                           step a chunk speed      and by shaft speed
//   tachometer ─────────────────────────────────────────────┘
//   (source) shaft speed, 200 a second, on a clock of its own
//
// Every message is one chunk of `windows_per_chunk` windows and carries
// three tensors: the chunk's data, its labels (1: the machine had a fault
// during that window) and the time the source made it. The stages pass the
// labels and the time through, so the detector can learn from the labels
// and the monitor can score the detector and measure latency, whether the
// nodes share a process or not.
//
// The machine has a second sensor group: a tachometer reading the shaft's
// speed on a clock of its own, which drifts against the vibration
// sensors', with jitter and lost messages. Both sources stamp their chunks
// with the time of their first row (tags: time_ns and sample_rate, a row a
// window for the vibration); the stages carry the tags, and "joined"
// (zip_by_time) gives each scored window the reading nearest its start, so
// that the monitor can tell how the detector does at each speed.
//
// One program, three processes: every node names the process that runs it
// ("source", "compute", "sink"). samples/sensor_monitor/main.cpp runs the
// whole pipeline in one process; `sluice demo` runs the same program as
// three processes, each building its own part (PartitionOptions), and so
// does `mpirun -np 3 sluice demo`, one process per rank.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/optimizers.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/run_log.h>

namespace sluice::sensor_monitor {

struct Config {
  int64_t channels = 8;            // sensors on the machine
  double sample_rate = 16000;      // Hz
  int64_t window = 1024;           // samples per channel per window (one FFT frame)
  int64_t bands = 32;              // frequency bands per channel
  int64_t windows_per_chunk = 16;  // windows per message
  size_t chunks_in_flight = 8;     // per pipeline: bounds memory and latency, enough to keep stages busy
  double seconds = 20;             // how long the source produces, wall clock
  int64_t chunks = 0;              // or, when above 0, how many chunks it produces
  uint64_t seed = 1;               // the signal (and its faults) for a seed is always the same
  float learning_rate = 0.05f;     // of the detector's Adam steps
  // Where the two compiled stages run, resolved by the process that runs
  // them: a GPU where there is one, else the host. A GPU's client takes
  // memory as it needs it (preallocate off): the demo's processes share it.
  DevicePreference device = DevicePreference::accelerator_or_host({.preallocate = false});
  int metrics_port = 0;            // serves the pipeline's metrics on this port (0: off)
  std::string run_log;             // the pipeline's run log (PipelineOptions::run_log); empty: none
  std::string trace;               // the pipeline's timeline (PipelineOptions::trace); empty: none
  // The tachometer (the second sensor group) and the join by time.
  double tachometer_rate = 200;          // readings a second, on its own clock
  int64_t tachometer_rows = 256;         // readings a message
  double tachometer_drift_ppm = 30;      // its clock runs this much fast against the vibration's
  double tachometer_offset_ms = 1.5;     // and started this far ahead
  double tachometer_jitter_us = 50;      // each message's stamp is off by up to this, either way
  double tachometer_dropout = 1.0 / 16;  // the share of its messages lost on the way
  double join_tolerance_ms = 3;          // a window takes the reading nearest its start within this
};

// ---- messages between the nodes
// vibration -> spectrum: {signal f32[W][C][N], labels f32[W], born s64[]}
std::vector<Spec> signal_spec(const Config& c);
// spectrum -> detector: {features f32[W][C * bands], labels, born}
std::vector<Spec> feature_spec(const Config& c);
// detector -> joined: {fault scores f32[W] (probabilities), labels, born}
std::vector<Spec> score_spec(const Config& c);
// tachometer -> joined: {shaft speed in Hz f32[tachometer_rows]}
std::vector<Spec> tachometer_spec(const Config& c);
// joined -> monitor: score_spec, then {shaft speed f32[W] (0 where none
// was joined), joined pred[W]}
std::vector<Spec> joined_spec(const Config& c);
// Nanoseconds of the steady clock, the clock `born` is read from: on Linux
// it is one clock for every process of the machine.
int64_t now_ns();

// ---- the source
// The synthetic vibration of a machine, chunk after chunk, until
// `c.seconds` have passed: harmonics of a wandering shaft speed and sensor
// noise, with faults injected at random windows for random durations,
// either an impulse train ringing a structural resonance (a bearing defect)
// or a new band of tones with sidebands (a gear mesh defect). The data of
// chunk i depends only on the seed and i.
// Given a machine clock, it says there how far it has sampled and when it ended.
class MachineClock;
std::shared_ptr<MachineClock> machine_clock();
std::shared_ptr<Source> vibration(const Config& c, std::shared_ptr<MachineClock> clock = nullptr);
// The tachometer of the same machine (the same seed): its shaft speed,
// read on the tachometer's own clock (Config's tachometer_*), until the
// vibration's end (as many chunks' worth, or as many seconds). Given the
// vibration's machine clock (both sources in one process), a thread of its
// own reads and pushes the readings as the vibration samples the machine,
// and ends where the vibration ended: it never runs far ahead of the
// vibration it is joined to, which would hold its messages in the join and
// their credit with them.
std::shared_ptr<Source> tachometer(const Config& c, std::shared_ptr<MachineClock> clock = nullptr);

// ---- the compiled stages
// Initial accumulators: spectrum's {count f32[], mean f32[C][bands],
// m2 f32[C][bands]} (Chan's parallel variance), detector's {weights
// f32[C * bands], bias f32[]} followed by its optimizer's state, all zero.
Tensors spectrum_acc(const Config& c);
Tensors detector_acc(const Config& c);
// The detector's optimizer: Adam at the configured learning rate.
optimizers::Optimizer detector_optimizer(const Config& c);
// The stages' functions, traced once when the pipeline starts.
Function spectrum_function(const Config& c);
Function detector_function(const Config& c);
// Adds "spectrum" and "detector" after `from` (which sends signal_spec
// messages), in process `process`; returns the detector, which sends
// score_spec messages. When the pipeline keeps a run log, a
// "spectrogram" sink in the same process records what spectrum makes
// (spectrogram_log).
NodeId add_compute_stages(Pipeline& p, NodeId from, const Config& c, const std::string& process = {});

// ---- the run log (`sluice report` draws it)
// A sink of feature_spec messages writing "spectrogram" records to `log`:
// every 100 ms, the chunk of the moment whole, channel 0's normalised band
// energies window by window ("values", [windows][bands]) with their labels.
std::shared_ptr<Sink> spectrogram_log(const Config& c, std::shared_ptr<RunLog> log);

// ---- the monitor
enum class Progress : uint8_t {
  Line,  // one line rewritten in place (a terminal)
  Log,   // a plain line every few seconds (a file, a pipe)
  Off,
};

// What the monitor saw; the second half of the run is what a trained
// detector is judged on.
struct Summary {
  int64_t windows = 0, samples = 0, bytes = 0;
  double seconds = 0;  // first chunk made to last chunk scored
  double latency_p50_ms = 0, latency_p99_ms = 0;
  double accuracy = 0;                                            // all windows
  double late_accuracy = 0, late_precision = 0, late_recall = 0;  // second half
  int64_t late_windows = 0, late_faults = 0;
  // The shaft speed joined to the windows (joined_spec messages): how many
  // had one, its range, and the second half's accuracy below and from
  // kSplitHz.
  int64_t joined_windows = 0;
  double shaft_min_hz = 0, shaft_max_hz = 0;
  static constexpr double kSplitHz = 40;
  double late_accuracy_slow = 0, late_accuracy_fast = 0;
  int64_t late_slow = 0, late_fast = 0;
  // Whether the second half has enough windows of both kinds to judge by.
  bool judged() const;
  // The demo's pass mark: judged, and accuracy over the second half of at least 0.9.
  bool learned() const;
};

// A sink of joined_spec messages (or score_spec, where no speed is
// joined): scores every window (score > 0.5 says fault), keeps the figures
// of the summary and writes progress to `out`.
// Given a run log, writes a "scores" record every 50 ms and after the last
// chunk: that chunk's scores and true labels, the accuracy so far and over
// the windows since the record before.
// Thread safety: summary() may be called while the pipeline runs.
class Monitor : public Sink {
 public:
  Monitor(const Config& c, std::ostream& out, Progress progress, std::shared_ptr<RunLog> log = nullptr);
  ~Monitor() override;
  void consume(uint64_t seq, const Tensors& tensors) override;
  void finish() override;
  Summary summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The summary as a table, and one closing line saying whether the detector learned.
void print_summary(std::ostream& out, const Summary& s, const Config& c);

// A pipeline bounded as the config says, for any part of the monitor.
PipelineOptions pipeline_options(const Config& c);

// The processes of the pipeline, in the order launchers' ranks take them.
inline const std::vector<std::string> kProcesses = {"source", "compute", "sink"};

// The whole pipeline, each node in its process (which only a partitioned
// pipeline heeds): vibration (source) -> spectrum -> detector (compute) ->
// joined -> `monitor` (sink), and tachometer (source) -> joined.
void add_sensor_monitor(Pipeline& p, const Config& c, std::shared_ptr<Sink> monitor);

// The whole pipeline in this process.
Summary run_in_process(const Config& c, std::ostream& out, Progress progress);

}  // namespace sluice::sensor_monitor
