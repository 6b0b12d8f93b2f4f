#include <sluice/pipeline/sinks.h>

namespace sluice {

void Collector::consume(uint64_t seq, const Tensors& tensors) {
  std::lock_guard lock(mutex_);
  results_.push_back(tensors);
  seqs_.push_back(seq);
}

std::vector<Tensors> Collector::results() const {
  std::lock_guard lock(mutex_);
  return results_;
}

std::vector<uint64_t> Collector::sequence_numbers() const {
  std::lock_guard lock(mutex_);
  return seqs_;
}

namespace sinks {

namespace {
class CallbackSink : public Sink {
 public:
  explicit CallbackSink(std::function<void(const Tensors&)> fn) : fn_(std::move(fn)) {}
  void consume(uint64_t, const Tensors& tensors) override { fn_(tensors); }

 private:
  std::function<void(const Tensors&)> fn_;
};
}  // namespace

std::shared_ptr<Sink> callback(std::function<void(const Tensors&)> fn) {
  return std::make_shared<CallbackSink>(std::move(fn));
}
std::shared_ptr<Collector> collector() { return std::make_shared<Collector>(); }

}  // namespace sinks
}  // namespace sluice
