// The two sensor groups of a synthetic machine: C vibration sensors, made
// window by window, and a tachometer reading its shaft speed on a clock of
// its own. Nothing here is compiled by sluice; it only has to be fast
// enough to keep the compiled stages busy and to be the same for the same
// seed.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <numbers>
#include <optional>
#include <thread>

#include <sensor_monitor/sensor_monitor.h>
#include <sluice/devices/shared_memory.h>

namespace sluice::sensor_monitor {
namespace {

constexpr int kHarmonics = 6;
constexpr double kTwoPi = 2 * std::numbers::pi;

// xoshiro256**: small, fast, and the same numbers on every platform (the
// standard library's distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : s_) {  // splitmix64 spreads the seed over the state
      seed += 0x9e3779b97f4a7c15;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      word = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Two samples of unit variance, near enough to normal for sensor noise:
  // each the sum of four 8-bit uniforms (Irwin-Hall), from one draw.
  std::pair<float, float> noise_pair() {
    const uint64_t r = next();
    auto sum = [](uint64_t w) {
      return (w & 0xff) + ((w >> 8) & 0xff) + ((w >> 16) & 0xff) + ((w >> 24) & 0xff);
    };
    constexpr float kMean = 2 * 255.0f;
    const float scale = 1 / std::sqrt(4 * (256.0f * 256.0f - 1) / 12);  // the sum's standard deviation
    return {(static_cast<float>(sum(r)) - kMean) * scale, (static_cast<float>(sum(r >> 32)) - kMean) * scale};
  }

 private:
  uint64_t s_[4];
};

enum class Fault : uint8_t { None, ImpulseTrain, ToneBand };

// The machine's operating point, window after window: shaft speed and load
// wander slowly, as a machine's do under changing work. A generator of its
// own, so that the tachometer (another source, in another thread or
// process) reads the very speeds the vibration was made with.
class OperatingPoint {
 public:
  explicit OperatingPoint(uint64_t seed) : rng_(seed ^ 0x6f70657261746521) {}
  void step() {
    shaft_hz_ = std::clamp(shaft_hz_ + rng_.uniform(-0.5, 0.5), 20.0, 60.0);
    load_ = std::clamp(load_ + rng_.uniform(-0.03, 0.03), 0.6, 1.4);
    ++window_;
  }
  double shaft_hz() const { return shaft_hz_; }
  double load() const { return load_; }
  int64_t window() const { return window_; }  // of the last step; -1 before the first

 private:
  Rng rng_;
  double shaft_hz_ = 40, load_ = 1;
  int64_t window_ = -1;
};

class Machine {
 public:
  explicit Machine(const Config& c)
      : c_(c),
        point_(c.seed),
        rng_(c.seed),
        noise_rng_{Rng(rng_.next()), Rng(rng_.next()), Rng(rng_.next()), Rng(rng_.next())} {
    const auto channels = static_cast<size_t>(c.channels);
    harmonic_sin_.resize(channels * kHarmonics);
    harmonic_cos_.resize(channels * kHarmonics);
    noise_.resize(channels);
    fault_gain_.resize(channels);
    for (size_t ch = 0; ch < channels; ++ch) {
      double gain = rng_.uniform(0.5, 1.5);  // how well the sensor is coupled to the shaft
      for (int k = 0; k < kHarmonics; ++k) {
        double amplitude = gain / (k + 1) * rng_.uniform(0.5, 1.5);
        double phase = rng_.uniform(0, kTwoPi);
        harmonic_sin_[ch * kHarmonics + static_cast<size_t>(k)] =
            static_cast<float>(amplitude * std::cos(phase));
        harmonic_cos_[ch * kHarmonics + static_cast<size_t>(k)] =
            static_cast<float>(amplitude * std::sin(phase));
      }
      noise_[ch] = static_cast<float>(rng_.uniform(0.2, 0.4));
    }
    const auto n = static_cast<size_t>(c.window);
    basis_stride_ = n + kBasisSkew;
    basis_.resize(2 * kHarmonics * basis_stride_);
    fault_wave_.resize(n);
  }

  // One window into out[C][N]; returns its label (1: a fault was present).
  float window(float* out) {
    point_.step();
    step_fault();
    const auto n = static_cast<size_t>(c_.window);
    make_harmonic_basis();
    make_fault_wave();
    for (size_t ch = 0; ch < static_cast<size_t>(c_.channels); ++ch) {
      float* x = out + ch * n;
      const float* a = &harmonic_sin_[ch * kHarmonics];
      const float* b = &harmonic_cos_[ch * kHarmonics];
      // Four generators, two samples each in turn: their steps do not wait on each other.
      size_t at = 0;
      for (; at + 2 * kNoiseStreams <= n; at += 2 * kNoiseStreams)
        for (size_t j = 0; j < kNoiseStreams; ++j) {
          const auto [first, second] = noise_rng_[j].noise_pair();
          x[at + 2 * j] = noise_[ch] * first;
          x[at + 2 * j + 1] = noise_[ch] * second;
        }
      for (; at < n; ++at) x[at] = noise_[ch] * noise_rng_[0].noise_pair().first;
      // Two harmonics a pass over the window (kHarmonics is even).
      for (size_t k = 0; k < kHarmonics; k += 2) {
        const float* s0 = &basis_[2 * k * basis_stride_];
        const float* c0 = s0 + basis_stride_;
        const float* s1 = c0 + basis_stride_;
        const float* c1 = s1 + basis_stride_;
        const auto load = static_cast<float>(point_.load());
        const float sa0 = load * a[k], cb0 = load * b[k], sa1 = load * a[k + 1], cb1 = load * b[k + 1];
        for (size_t i = 0; i < n; ++i) x[i] += (sa0 * s0[i] + cb0 * c0[i]) + (sa1 * s1[i] + cb1 * c1[i]);
      }
      if (fault_ != Fault::None)
        for (size_t i = 0; i < n; ++i) x[i] += fault_gain_[ch] * fault_wave_[i];
    }
    return fault_ == Fault::None ? 0.0f : 1.0f;
  }

 private:
  // Faults start at random windows and last 8 to 40 windows, about a third of the time in all.
  void step_fault() {
    if (fault_ != Fault::None && --fault_left_ > 0) return;
    fault_ = Fault::None;
    if (rng_.uniform() >= 1.0 / 40) return;
    fault_ = rng_.uniform() < 0.5 ? Fault::ImpulseTrain : Fault::ToneBand;
    fault_left_ = 8 + static_cast<int>(rng_.uniform(0, 33));
    // Where the defect sits decides how strongly each sensor hears it.
    for (float& g : fault_gain_) g = static_cast<float>(rng_.uniform(0.5, 1.0));
    if (fault_ == Fault::ImpulseTrain) {
      impulse_ratio_ = rng_.uniform(3.0, 5.5);  // defect frequency over shaft speed
      amplitude_ = rng_.uniform(1.0, 2.5);
      double resonance = rng_.uniform(2500, 4500);
      double r = std::exp(-1.0 / (0.0008 * c_.sample_rate));  // rings for about 0.8 ms
      res_a1_ = 2 * r * std::cos(kTwoPi * resonance / c_.sample_rate);
      res_a2_ = -r * r;
      res_y1_ = res_y2_ = to_impulse_ = 0;
    } else {
      tone_hz_ = rng_.uniform(1200, 2400);
      amplitude_ = rng_.uniform(0.25, 0.6);
    }
  }

  // sin(k phi) and cos(k phi) of the shaft angle phi over the window: a
  // phasor per harmonic, started exactly from its angle each window and
  // rotated by its step sample by sample. The harmonics' rotations do not
  // wait on each other, so they run side by side (a chain of powers of one
  // phasor, as before, made every multiply wait for the last).
  void make_harmonic_basis() {
    const auto n = static_cast<size_t>(c_.window);
    const double step = kTwoPi * point_.shaft_hz() / c_.sample_rate;
    double re[kHarmonics], im[kHarmonics], step_re[kHarmonics], step_im[kHarmonics];
    for (int k = 0; k < kHarmonics; ++k) {
      re[k] = std::cos((k + 1) * shaft_angle_);
      im[k] = std::sin((k + 1) * shaft_angle_);
      step_re[k] = std::cos((k + 1) * step);
      step_im[k] = std::sin((k + 1) * step);
    }
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < kHarmonics; ++k) {
        basis_[2 * k * basis_stride_ + i] = static_cast<float>(im[k]);
        basis_[(2 * k + 1) * basis_stride_ + i] = static_cast<float>(re[k]);
        const double r = re[k] * step_re[k] - im[k] * step_im[k];
        im[k] = re[k] * step_im[k] + im[k] * step_re[k];
        re[k] = r;
      }
    }
    shaft_angle_ = std::fmod(shaft_angle_ + step * static_cast<double>(n), kTwoPi);
  }

  void make_fault_wave() {
    const auto n = static_cast<size_t>(c_.window);
    if (fault_ == Fault::ImpulseTrain) {
      // Impulses at the defect frequency, each ringing a two-pole resonator.
      const double period = c_.sample_rate / (point_.shaft_hz() * impulse_ratio_);
      for (size_t i = 0; i < n; ++i) {
        double kick = 0;
        if (--to_impulse_ <= 0) {
          kick = amplitude_;
          to_impulse_ += period;
        }
        double y = kick + res_a1_ * res_y1_ + res_a2_ * res_y2_;
        res_y2_ = res_y1_;
        res_y1_ = y;
        fault_wave_[i] = static_cast<float>(y);
      }
    } else if (fault_ == Fault::ToneBand) {
      // A tone with sidebands at the shaft speed, as gear mesh faults show.
      constexpr double kSideband[] = {1.0, 0.5, 0.5, 0.25, 0.25};
      constexpr double kOffset[] = {0, 1, -1, 2, -2};
      std::fill(fault_wave_.begin(), fault_wave_.end(), 0.0f);
      for (int s = 0; s < 5; ++s) {
        double hz = tone_hz_ + kOffset[s] * point_.shaft_hz();
        std::complex<double> z = std::polar(1.0, std::fmod(kTwoPi * hz * seconds_, kTwoPi));
        const std::complex<double> rotate = std::polar(1.0, kTwoPi * hz / c_.sample_rate);
        for (size_t i = 0; i < n; ++i) {
          fault_wave_[i] += static_cast<float>(amplitude_ * kSideband[s] * z.imag());
          z *= rotate;
        }
      }
    }
    seconds_ += static_cast<double>(n) / c_.sample_rate;
  }

  static constexpr size_t kNoiseStreams = 4;
  // The basis' rows lie this many floats more than a window apart: rows a
  // power of two apart (4 KiB for 1,024 samples) alias in the cache and the
  // store buffer, and the loop writing one sample to each of the twelve ran
  // several times slower.
  static constexpr size_t kBasisSkew = 16;

  Config c_;
  OperatingPoint point_;
  Rng rng_;                                   // the machine's faults
  std::array<Rng, kNoiseStreams> noise_rng_;  // the sensors' noise
  std::vector<float> harmonic_sin_, harmonic_cos_, noise_, fault_gain_, basis_, fault_wave_;
  size_t basis_stride_ = 0;  // floats from one row of basis_ to the next
  double shaft_angle_ = 0;
  Fault fault_ = Fault::None;
  int fault_left_ = 0;
  double impulse_ratio_ = 0, amplitude_ = 0, to_impulse_ = 0;
  double res_a1_ = 0, res_a2_ = 0, res_y1_ = 0, res_y2_ = 0;
  double tone_hz_ = 0;
  double seconds_ = 0;  // since the first window
};

// When a source ends: after its `chunks`-th message where the config counts
// chunks, else once the config's seconds have passed since its first
// (infinite: never by time).
class Ending {
 public:
  Ending(double seconds, int64_t chunks) : seconds_(seconds), chunks_(chunks) {}
  bool reached(int64_t made) {
    if (chunks_ > 0) return made >= chunks_;
    if (std::isinf(seconds_)) return false;
    const auto now = std::chrono::steady_clock::now();
    if (!deadline_)
      deadline_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds_));
    return now >= *deadline_;
  }

 private:
  double seconds_;
  int64_t chunks_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

}  // namespace

// How far the vibration sensors have sampled, in the machine's time, for
// the tachometer to read no further.
class MachineClock {
 public:
  void sampled(int64_t ns) {
    std::lock_guard lock(mutex_);
    sampled_ns_ = ns;
    changed_.notify_all();
  }
  // The vibration ended; or (stop) whoever waits is to give up.
  void ended() {
    std::lock_guard lock(mutex_);
    ended_ = true;
    changed_.notify_all();
  }
  // Waits until the vibration has sampled up to `ns` (true), or has ended
  // short of it (false).
  bool wait_for(int64_t ns) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return sampled_ns_ >= ns || ended_; });
    return sampled_ns_ >= ns;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t sampled_ns_ = -1;
  bool ended_ = false;
};

namespace {

class VibrationSource : public Source {
 public:
  VibrationSource(const Config& c, std::shared_ptr<MachineClock> clock)
      : c_(c), machine_(c), ending_(c.seconds, c.chunks), clock_(std::move(clock)) {}
  ~VibrationSource() override {
    if (clock_) clock_->ended();
  }

  std::vector<Spec> spec() const override { return signal_spec(c_); }
  void output_memory(OutputMemory memory) override { memory_ = memory; }

  std::optional<Tensors> next() override {
    std::optional<Chunk> chunk = next_chunk();
    if (!chunk) return std::nullopt;
    return std::move(chunk->tensors);
  }

  // Stamped with the time of its first window on the machine's clock (the
  // vibration sensors' sampling clock, from 0), a row a window.
  std::optional<Chunk> next_chunk() override {
    if (ending_.reached(made_)) {
      if (clock_) clock_->ended();
      return std::nullopt;
    }
    const int64_t first_window = made_++ * c_.windows_per_chunk;

    const std::vector<Spec> specs = spec();
    // The chunk's memory becomes the tensor's buffer: no copy, and none
    // where another process of this host reads it (shared memory).
    const auto bytes = static_cast<size_t>(specs[0].bytes());
    std::shared_ptr<void> signal =
        memory_ == OutputMemory::Shared
            ? shared_allocate(bytes)
            : std::shared_ptr<void>(std::shared_ptr<float[]>(new float[bytes / sizeof(float)]));
    auto* samples = static_cast<float*>(signal.get());
    std::vector<float> labels(static_cast<size_t>(c_.windows_per_chunk));
    const auto per_window = static_cast<size_t>(c_.channels * c_.window);
    for (size_t w = 0; w < labels.size(); ++w) labels[w] = machine_.window(samples + w * per_window);
    Chunk chunk{{wrap_host(specs[0], samples, std::move(signal)), tensor(labels, specs[1].shape),
                 scalar<int64_t>(now_ns())},
                {}};
    const double window_seconds = static_cast<double>(c_.window) / c_.sample_rate;
    chunk.tags.set_time(std::llround(static_cast<double>(first_window) * window_seconds * 1e9), "machine");
    chunk.tags.set_sample_rate(1 / window_seconds);
    if (clock_)
      clock_->sampled(
          std::llround(static_cast<double>(first_window + c_.windows_per_chunk) * window_seconds * 1e9));
    return chunk;
  }

 private:
  Config c_;
  Machine machine_;
  Ending ending_;
  std::shared_ptr<MachineClock> clock_;
  OutputMemory memory_ = OutputMemory::Default;
  int64_t made_ = 0;
};

// When the tachometer's clock reads `own` seconds, the machine's: that
// clock runs `tachometer_drift_ppm` fast and started `tachometer_offset_ms` ahead.
double machine_seconds(const Config& c, double own) {
  return (own - c.tachometer_offset_ms * 1e-3) / (1 + c.tachometer_drift_ppm * 1e-6);
}

// The tachometer: the shaft speed in Hz, `tachometer_rate` readings a
// second on a clock of its own, `tachometer_rows` a message, each message
// stamped by that clock. Reading n is taken at n / rate on its clock, which
// is the machine's clock run `tachometer_drift_ppm` fast and started
// `tachometer_offset_ms` ahead; a stamp is off by up to
// `tachometer_jitter_us` either way, and a message is lost now and then
// (`tachometer_dropout`). A reading is the speed of the window it falls
// in, to within 0.05 Hz (its pulse count's resolution).
class TachometerSource : public Source {
 public:
  // `on_its_own`: it ends by the config's count or seconds; otherwise by
  // the count alone (a driver ends it where the vibration ended).
  explicit TachometerSource(const Config& c, bool on_its_own = true)
      : c_(c),
        point_(c.seed),
        rng_(c.seed ^ 0x746163686f6d6574),
        ending_(on_its_own ? c.seconds : std::numeric_limits<double>::infinity(), messages_for(c)) {}

  std::vector<Spec> spec() const override { return tachometer_spec(c_); }

  std::optional<Tensors> next() override {
    std::optional<Chunk> chunk = next_chunk();
    if (!chunk) return std::nullopt;
    return std::move(chunk->tensors);
  }

  std::optional<Chunk> next_chunk() override {
    for (;;) {
      if (ending_.reached(made_)) return std::nullopt;
      const int64_t message = made_++;
      const double jitter_ns = rng_.uniform(-1, 1) * c_.tachometer_jitter_us * 1e3;
      if (rng_.uniform() < c_.tachometer_dropout) continue;  // lost on its way
      std::vector<float> speeds(static_cast<size_t>(c_.tachometer_rows));
      const double window_seconds = static_cast<double>(c_.window) / c_.sample_rate;
      for (size_t j = 0; j < speeds.size(); ++j) {
        const double machine =
            machine_seconds(c_, static_cast<double>(message * c_.tachometer_rows + static_cast<int64_t>(j)) /
                                    c_.tachometer_rate);
        const auto window = std::max<int64_t>(0, static_cast<int64_t>(std::floor(machine / window_seconds)));
        while (point_.window() < window) point_.step();
        speeds[j] = static_cast<float>(point_.shaft_hz() + rng_.uniform(-0.05, 0.05));
      }
      Chunk chunk{{tensor(speeds, Shape{c_.tachometer_rows})}, {}};
      const double first = static_cast<double>(message * c_.tachometer_rows) / c_.tachometer_rate;
      chunk.tags.set_time(std::llround(first * 1e9 + jitter_ns), "tachometer");
      chunk.tags.set_sample_rate(c_.tachometer_rate);
      return chunk;
    }
  }

 private:
  // Where the config counts the vibration's chunks: as many messages as
  // cover them on the tachometer's clock, and one more.
  static int64_t messages_for(const Config& c) {
    if (c.chunks <= 0) return 0;
    const double seconds = static_cast<double>(c.chunks * c.windows_per_chunk * c.window) / c.sample_rate;
    const double own = seconds * (1 + c.tachometer_drift_ppm * 1e-6) + c.tachometer_offset_ms * 1e-3;
    return static_cast<int64_t>(std::ceil(own * c.tachometer_rate / static_cast<double>(c.tachometer_rows))) +
           1;
  }

  Config c_;
  OperatingPoint point_;
  Rng rng_;  // its jitter, losses and resolution
  Ending ending_;
  int64_t made_ = 0;
};

// The tachometer as its driver reads it beside the vibration sensors: a
// thread of its own takes each message's readings once the vibration has
// sampled the machine up to them (the machine clock), as two sensor groups
// of one machine do, and pushes them into the pipeline. Waiting for the
// vibration, or for the pipeline's room, holds none of the pipeline's
// threads; and the tachometer never runs far ahead of the vibration it is
// joined to, which would hold its messages in the join, with their credit.
// It ends where the vibration ended.
class TachometerDriver : public PushSource {
 public:
  TachometerDriver(const Config& c, std::shared_ptr<MachineClock> clock)
      : PushSource(tachometer_spec(c)),
        c_(c),
        readings_(c, /*on_its_own=*/false),
        clock_(std::move(clock)),
        thread_([this] { run(); }) {}
  ~TachometerDriver() override {
    stopping_ = true;
    clock_->ended();
    thread_.join();
  }
  TachometerDriver(const TachometerDriver&) = delete;
  TachometerDriver& operator=(const TachometerDriver&) = delete;

 private:
  void run() {
    try {
      while (std::optional<Chunk> chunk = readings_.next_chunk()) {
        // Its first reading's time on the machine's clock, near enough to pace by.
        const double machine = machine_seconds(c_, static_cast<double>(*chunk->tags.time_ns()) * 1e-9);
        if (!clock_->wait_for(std::llround(machine * 1e9))) break;
        // In a process that does not run this source, nothing is ever
        // wired: a push waits in steps, to see the source go.
        while (!push_for(*chunk, std::chrono::milliseconds(100)))
          if (stopping_) return;
      }
      close();
    } catch (const PipelineError&) {
      // The pipeline stopped: nothing more is taken.
    }
  }

  Config c_;
  TachometerSource readings_;
  std::shared_ptr<MachineClock> clock_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace

std::shared_ptr<MachineClock> machine_clock() { return std::make_shared<MachineClock>(); }

std::shared_ptr<Source> vibration(const Config& c, std::shared_ptr<MachineClock> clock) {
  return std::make_shared<VibrationSource>(c, std::move(clock));
}

std::shared_ptr<Source> tachometer(const Config& c, std::shared_ptr<MachineClock> clock) {
  if (clock) return std::make_shared<TachometerDriver>(c, std::move(clock));
  return std::make_shared<TachometerSource>(c);
}

}  // namespace sluice::sensor_monitor
