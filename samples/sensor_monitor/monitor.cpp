// The monitor: the sink at the end of the pipeline. It judges every fault
// score against the window's label, measures throughput and latency, and
// keeps a person watching informed.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>

#include <fmt/core.h>

#include <sluice/pipeline/metrics.h>
#include <sensor_monitor/sensor_monitor.h>

namespace sluice::sensor_monitor {
namespace {

constexpr double kPassAccuracy = 0.9;
// Fewer windows, or too few of either kind, say nothing about the detector.
constexpr int64_t kJudgedWindows = 100;
constexpr int64_t kJudgedOfEachKind = 10;
constexpr auto kLineEvery = std::chrono::milliseconds(200);
constexpr auto kLogEvery = std::chrono::seconds(2);
// A "scores" record a chunk would be a thousand a second.
constexpr auto kRecordEvery = std::chrono::milliseconds(50);

// One window's outcome: the detector's call and the truth, and the shaft
// speed joined to it (negative: none).
struct Outcome {
  bool fault_called;
  bool fault;
  float shaft_hz = -1;
};

struct Counts {
  int64_t windows = 0, correct = 0, tp = 0, fp = 0, fn = 0, faults = 0;
  void add(Outcome o) {
    ++windows;
    correct += o.fault_called == o.fault;
    tp += o.fault_called && o.fault;
    fp += o.fault_called && !o.fault;
    fn += !o.fault_called && o.fault;
    faults += o.fault;
  }
  double ratio(int64_t num, int64_t den) const {
    return den ? static_cast<double>(num) / static_cast<double>(den) : 0;
  }
};

std::string with_commas(int64_t v) {
  std::string digits = fmt::format("{}", v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// 1234567 -> "1.23 M".
std::string si(double v) {
  const char* units[] = {"", " k", " M", " G"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 3) {
    v /= 1000;
    ++u;
  }
  return fmt::format("{:.3g}{}", v, units[u]);
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

}  // namespace

bool Summary::judged() const {
  return late_windows >= kJudgedWindows && late_faults >= kJudgedOfEachKind &&
         late_windows - late_faults >= kJudgedOfEachKind;
}

bool Summary::learned() const { return judged() && late_accuracy >= kPassAccuracy; }

struct Monitor::State {
  Config c;
  std::ostream& out;
  Progress progress;
  std::shared_ptr<RunLog> log;
  mutable std::mutex mutex;  // guards what follows
  std::vector<Outcome> outcomes;
  Counts all;
  LatencyHistogram latency;  // microseconds per chunk, made to scored
  int64_t first_born_ns = -1, last_scored_ns = 0;
  std::chrono::steady_clock::time_point last_progress{};
  bool line_open = false;
  // The run log's: when the last record was written, and the windows since.
  std::chrono::steady_clock::time_point last_record{};
  Counts since_record;
  Tensors last_chunk;
  uint64_t last_seq = 0;

  void record(uint64_t seq, const Tensors& tensors) {
    std::vector<float> scores = tensors.at(0).to_vector<float>();
    std::vector<float> labels = tensors.at(1).to_vector<float>();
    log->write(
        RunRecord("scores")
            .integer("chunk", static_cast<int64_t>(seq))
            .numbers("scores", scores, 3)
            .numbers("labels", labels, 1)
            .integer("windows", all.windows)
            .number("accuracy", all.ratio(all.correct, all.windows))  // as summarise() has it
            .number("recent_accuracy", since_record.ratio(since_record.correct, since_record.windows)));
    since_record = {};
    last_record = std::chrono::steady_clock::now();
  }

  Summary summarise() const {
    Summary s;
    s.windows = all.windows;
    s.samples = s.windows * c.channels * c.window;
    s.bytes = s.samples * static_cast<int64_t>(sizeof(float));
    s.seconds = first_born_ns < 0 ? 0 : static_cast<double>(last_scored_ns - first_born_ns) * 1e-9;
    s.latency_p50_ms = latency.percentile(0.5) / 1000;
    s.latency_p99_ms = latency.percentile(0.99) / 1000;
    s.accuracy = all.ratio(all.correct, all.windows);
    Counts late, slow, fast;
    for (size_t i = outcomes.size() / 2; i < outcomes.size(); ++i) {
      late.add(outcomes[i]);
      if (outcomes[i].shaft_hz >= Summary::kSplitHz)
        fast.add(outcomes[i]);
      else if (outcomes[i].shaft_hz >= 0)
        slow.add(outcomes[i]);
    }
    for (const Outcome& o : outcomes) {
      if (o.shaft_hz < 0) continue;
      const double hz = o.shaft_hz;
      s.shaft_min_hz = s.joined_windows ? std::min(s.shaft_min_hz, hz) : hz;
      s.shaft_max_hz = s.joined_windows ? std::max(s.shaft_max_hz, hz) : hz;
      ++s.joined_windows;
    }
    s.late_slow = slow.windows;
    s.late_fast = fast.windows;
    s.late_accuracy_slow = slow.ratio(slow.correct, slow.windows);
    s.late_accuracy_fast = fast.ratio(fast.correct, fast.windows);
    s.late_windows = late.windows;
    s.late_faults = late.faults;
    s.late_accuracy = late.ratio(late.correct, late.windows);
    s.late_precision = late.ratio(late.tp, late.tp + late.fp);
    s.late_recall = late.ratio(late.tp, late.tp + late.fn);
    return s;
  }

  std::string progress_text() const {
    Summary s = summarise();
    double rate = s.seconds > 0 ? 1 / s.seconds : 0;
    return "windows " + with_commas(s.windows) + " | " + si(static_cast<double>(s.samples) * rate) +
           " samples/s | " + fixed(static_cast<double>(s.bytes) * rate / 1e6, 1) + " MB/s | latency p50 " +
           si(s.latency_p50_ms) + " ms p99 " + si(s.latency_p99_ms) + " ms | accuracy " +
           fixed(s.accuracy, 3);
  }

  void report(bool last) {
    auto now = std::chrono::steady_clock::now();
    if (progress == Progress::Off) return;
    if (progress == Progress::Line) {
      if (!last && now - last_progress < kLineEvery) return;
      out << "\r\033[K" << progress_text() << (last ? "\n" : "") << std::flush;
      line_open = !last;
    } else {
      if (last || now - last_progress < kLogEvery) return;
      out << progress_text() << "\n" << std::flush;
    }
    last_progress = now;
  }
};

Monitor::Monitor(const Config& c, std::ostream& out, Progress progress, std::shared_ptr<RunLog> log)
    : state_(new State{.c = c, .out = out, .progress = progress, .log = std::move(log)}) {
  state_->last_progress = std::chrono::steady_clock::now();
}

Monitor::~Monitor() = default;

void Monitor::consume(uint64_t seq, const Tensors& tensors) {
  std::vector<float> scores = tensors.at(0).to_vector<float>();
  std::vector<float> labels = tensors.at(1).to_vector<float>();
  int64_t born = tensors.at(2).to_vector<int64_t>().at(0);
  // Joined (joined_spec): each window's shaft speed, where it has one.
  std::vector<float> shaft_hz;
  std::vector<bool> joined;
  if (tensors.size() == joined_spec(state_->c).size()) {
    shaft_hz = tensors[3].to_vector<float>();
    joined = tensors[4].to_vector<bool>();
  }
  int64_t scored = now_ns();

  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  for (size_t i = 0; i < scores.size(); ++i) {
    Outcome o{scores[i] > 0.5f, labels[i] > 0.5f};
    if (!joined.empty() && joined[i]) o.shaft_hz = shaft_hz[i];
    s.outcomes.push_back(o);
    s.all.add(o);
    s.since_record.add(o);
  }
  if (s.first_born_ns < 0) s.first_born_ns = born;
  s.last_scored_ns = scored;
  s.latency.record(static_cast<double>(scored - born) / 1000);
  s.report(false);
  if (!s.log) return;
  if (std::chrono::steady_clock::now() - s.last_record >= kRecordEvery) {
    s.record(seq, tensors);
  } else {
    s.last_chunk = tensors;  // recorded by finish() if it is the last
    s.last_seq = seq;
  }
}

void Monitor::finish() {
  std::lock_guard lock(state_->mutex);
  if (state_->log && state_->since_record.windows > 0 && !state_->last_chunk.empty())
    state_->record(state_->last_seq, state_->last_chunk);
  if (state_->line_open) state_->report(true);
}

Summary Monitor::summary() const {
  std::lock_guard lock(state_->mutex);
  return state_->summarise();
}

void print_summary(std::ostream& out, const Summary& s, const Config& c) {
  double signal_seconds = static_cast<double>(s.windows * c.window) / c.sample_rate;
  double rate = s.seconds > 0 ? 1 / s.seconds : 0;
  auto row = [&out](const std::string& name, const std::string& value) {
    out << fmt::format("  {:<22}{}\n", name, value);
  };
  out << "\nsensor monitor: " << c.channels << " channels at " << si(c.sample_rate) << "Hz, " << c.window
      << "-sample windows, " << c.bands << " bands per channel, stages on " << c.device.str() << "\n";
  row("windows", with_commas(s.windows) + " (" + fixed(signal_seconds, 1) + " s of signal in " +
                     fixed(s.seconds, 1) + " s: " + fixed(signal_seconds * rate, 0) + "x real time)");
  row("throughput", si(static_cast<double>(s.samples) * rate) + " samples/s, " +
                        fixed(static_cast<double>(s.bytes) * rate / 1e6, 1) + " MB/s");
  row("latency per chunk", "p50 " + fixed(s.latency_p50_ms, 2) + " ms, p99 " + fixed(s.latency_p99_ms, 2) +
                               fmt::format(" ms ({} windows a chunk)", c.windows_per_chunk));
  row("accuracy, whole run", fixed(s.accuracy, 3));
  row("second half", "accuracy " + fixed(s.late_accuracy, 3) + ", precision " + fixed(s.late_precision, 3) +
                         ", recall " + fixed(s.late_recall, 3) + " (" + with_commas(s.late_windows) +
                         " windows, " + with_commas(s.late_faults) + " faulty)");
  if (s.joined_windows > 0) {
    row("shaft speed",
        fmt::format("joined by time to {} of {} windows ({:.1f}%), {:.1f} to {:.1f} Hz",
                    with_commas(s.joined_windows), with_commas(s.windows),
                    100.0 * static_cast<double>(s.joined_windows) / static_cast<double>(s.windows),
                    s.shaft_min_hz, s.shaft_max_hz));
    row("tachometer",
        fmt::format("{} readings/s on a clock of its own ({} ppm fast, {} ms ahead, {} us jitter), "
                    "{:.1f}% of its messages lost",
                    c.tachometer_rate, c.tachometer_drift_ppm, c.tachometer_offset_ms, c.tachometer_jitter_us,
                    100 * c.tachometer_dropout));
    row("second half by speed",
        fmt::format("below {0:.0f} Hz accuracy {1} ({2} windows), {0:.0f} Hz and up {3} "
                    "({4} windows)",
                    Summary::kSplitHz, fixed(s.late_accuracy_slow, 3), with_commas(s.late_slow),
                    fixed(s.late_accuracy_fast, 3), with_commas(s.late_fast)));
  }
  if (!s.judged()) {
    out << "the run was too short to judge the detector: expected at least " << kJudgedWindows
        << " windows in its second half, " << kJudgedOfEachKind << " of them faulty and " << kJudgedOfEachKind
        << " normal\n";
    return;
  }
  out << (s.learned() ? "the detector learned: " : "the detector did not learn: ")
      << "accuracy over the second half " << fixed(s.late_accuracy, 3) << (s.learned() ? " >= " : " < ")
      << fixed(kPassAccuracy, 2) << "\n";
}

}  // namespace sluice::sensor_monitor
