// The vibration source: a synthetic machine with C sensors, made window by
// window. Nothing here is compiled by sluice; it only has to be fast enough
// to keep the compiled stages busy and to be the same for the same seed.

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <numbers>
#include <optional>

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

class Machine {
 public:
  explicit Machine(const Config& c)
      : c_(c),
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
    step_operating_point();
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
        const auto load = static_cast<float>(load_);
        const float sa0 = load * a[k], cb0 = load * b[k], sa1 = load * a[k + 1], cb1 = load * b[k + 1];
        for (size_t i = 0; i < n; ++i) x[i] += (sa0 * s0[i] + cb0 * c0[i]) + (sa1 * s1[i] + cb1 * c1[i]);
      }
      if (fault_ != Fault::None)
        for (size_t i = 0; i < n; ++i) x[i] += fault_gain_[ch] * fault_wave_[i];
    }
    return fault_ == Fault::None ? 0.0f : 1.0f;
  }

 private:
  // Shaft speed and load wander slowly, as a machine's do under changing work.
  void step_operating_point() {
    shaft_hz_ = std::clamp(shaft_hz_ + rng_.uniform(-0.5, 0.5), 20.0, 60.0);
    load_ = std::clamp(load_ + rng_.uniform(-0.03, 0.03), 0.6, 1.4);
  }

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
    const double step = kTwoPi * shaft_hz_ / c_.sample_rate;
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
      const double period = c_.sample_rate / (shaft_hz_ * impulse_ratio_);
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
        double hz = tone_hz_ + kOffset[s] * shaft_hz_;
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
  Rng rng_;                                   // the machine's state and faults
  std::array<Rng, kNoiseStreams> noise_rng_;  // the sensors' noise
  std::vector<float> harmonic_sin_, harmonic_cos_, noise_, fault_gain_, basis_, fault_wave_;
  size_t basis_stride_ = 0;  // floats from one row of basis_ to the next
  double shaft_hz_ = 40, shaft_angle_ = 0, load_ = 1;
  Fault fault_ = Fault::None;
  int fault_left_ = 0;
  double impulse_ratio_ = 0, amplitude_ = 0, to_impulse_ = 0;
  double res_a1_ = 0, res_a2_ = 0, res_y1_ = 0, res_y2_ = 0;
  double tone_hz_ = 0;
  double seconds_ = 0;  // since the first window
};

class VibrationSource : public Source {
 public:
  explicit VibrationSource(const Config& c) : c_(c), machine_(c) {}

  std::vector<Spec> spec() const override { return signal_spec(c_); }
  void output_memory(OutputMemory memory) override { memory_ = memory; }

  std::optional<Tensors> next() override {
    auto now = std::chrono::steady_clock::now();
    if (!deadline_)
      deadline_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(c_.seconds));
    if (c_.chunks > 0 ? made_ == c_.chunks : now >= *deadline_) return std::nullopt;
    ++made_;

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
    return Tensors{wrap_host(specs[0], samples, std::move(signal)), tensor(labels, specs[1].shape),
                   scalar<int64_t>(now_ns())};
  }

 private:
  Config c_;
  Machine machine_;
  OutputMemory memory_ = OutputMemory::Default;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  int64_t made_ = 0;
};

}  // namespace

std::shared_ptr<Source> vibration(const Config& c) { return std::make_shared<VibrationSource>(c); }

}  // namespace sluice::sensor_monitor
