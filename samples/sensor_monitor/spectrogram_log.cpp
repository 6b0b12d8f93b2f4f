// What the spectrum stage makes, as "spectrogram" records of the run log:
// one channel's band energies, window by window, for `sluice report` to draw.

#include <chrono>
#include <vector>

#include <sensor_monitor/sensor_monitor.h>

namespace sluice::sensor_monitor {
namespace {

// The spectrum makes a chunk every millisecond or so; a record of each would
// make the log of a long run large for no more than a chart shows. A chunk
// every 100 ms, whole: its windows are consecutive, so a fault (8 to 40
// windows) shows as it is, not averaged away.
constexpr auto kEvery = std::chrono::milliseconds(100);
constexpr int64_t kChannel = 0;

class SpectrogramLog : public Sink {
 public:
  SpectrogramLog(const Config& c, std::shared_ptr<RunLog> log) : c_(c), log_(std::move(log)) {}

  void consume(uint64_t seq, const Tensors& tensors) override {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < kEvery) return;
    last_ = now;
    std::vector<float> features = tensors.at(0).to_vector<float>();  // [W][C * bands]
    std::vector<float> labels = tensors.at(1).to_vector<float>();
    const size_t row = static_cast<size_t>(c_.channels * c_.bands), bands = static_cast<size_t>(c_.bands);
    std::vector<float> values;  // [W][bands] of the channel
    values.reserve(labels.size() * bands);
    for (size_t w = 0; w < labels.size(); ++w)
      for (size_t b = 0; b < bands; ++b)
        values.push_back(features[w * row + static_cast<size_t>(kChannel) * bands + b]);
    log_->write(RunRecord("spectrogram")
                    .integer("chunk", static_cast<int64_t>(seq))
                    .integer("channel", kChannel)
                    .integer("bands", c_.bands)
                    .numbers("values", values, 3)
                    .numbers("labels", labels, 1));
  }

 private:
  Config c_;
  std::shared_ptr<RunLog> log_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

std::shared_ptr<Sink> spectrogram_log(const Config& c, std::shared_ptr<RunLog> log) {
  return std::make_shared<SpectrogramLog>(c, std::move(log));
}

}  // namespace sluice::sensor_monitor
