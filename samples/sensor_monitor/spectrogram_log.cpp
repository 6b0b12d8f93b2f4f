// What the spectrum stage makes, as "spectrogram" records of the run log:
// one channel's band energies over time, for `sluice report` to draw.

#include <algorithm>
#include <chrono>
#include <vector>

#include "samples/sensor_monitor/sensor_monitor.h"

namespace sluice::sensor_monitor {
namespace {

// The spectrum makes a chunk every few milliseconds; a record of each would
// make the log of a long run large for no more detail than a chart shows.
constexpr auto kEvery = std::chrono::milliseconds(100);
constexpr int64_t kChannel = 0;

class SpectrogramLog : public Sink {
 public:
  SpectrogramLog(const Config& c, std::shared_ptr<RunLog> log)
      : c_(c), log_(std::move(log)), sum_(static_cast<size_t>(c.bands)) {}

  void consume(uint64_t seq, const Tensors& tensors) override {
    std::vector<float> features = tensors.at(0).to_vector<float>();  // [W][C * bands]
    std::vector<float> labels = tensors.at(1).to_vector<float>();
    const size_t row = static_cast<size_t>(c_.channels * c_.bands);
    for (size_t w = 0; w < labels.size(); ++w) {
      for (size_t b = 0; b < sum_.size(); ++b)
        sum_[b] += features[w * row + static_cast<size_t>(kChannel * c_.bands) + b];
      faults_ += labels[w] > 0.5f;
      ++windows_;
    }
    ++chunks_;
    last_seq_ = seq;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ >= kEvery) flush(now);
  }

  // The chunks since the last record are not left out.
  void finish() override {
    if (windows_ > 0) flush(std::chrono::steady_clock::now());
  }

 private:
  void flush(std::chrono::steady_clock::time_point now) {
    std::vector<float> mean(sum_.size());
    for (size_t b = 0; b < sum_.size(); ++b)
      mean[b] = static_cast<float>(sum_[b] / static_cast<double>(windows_));
    log_->write(RunRecord("spectrogram")
                    .integer("chunk", static_cast<int64_t>(last_seq_))
                    .integer("chunks", chunks_)
                    .integer("channel", kChannel)
                    .number("fault_share", static_cast<double>(faults_) / static_cast<double>(windows_))
                    .numbers("bands", mean, 3));
    std::fill(sum_.begin(), sum_.end(), 0.0);
    chunks_ = windows_ = faults_ = 0;
    last_ = now;
  }

  Config c_;
  std::shared_ptr<RunLog> log_;
  std::vector<double> sum_;  // per band, over the windows since the last record
  int64_t chunks_ = 0, windows_ = 0, faults_ = 0;
  uint64_t last_seq_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

std::shared_ptr<Sink> spectrogram_log(const Config& c, std::shared_ptr<RunLog> log) {
  return std::make_shared<SpectrogramLog>(c, std::move(log));
}

}  // namespace sluice::sensor_monitor
