#include <sluice/pipeline/sinks.h>

namespace sluice {

void Sink::consume_tagged(uint64_t seq, const Tensors& tensors, const Tags&) { consume(seq, tensors); }

void Collector::consume(uint64_t seq, const Tensors& tensors) { consume_tagged(seq, tensors, {}); }

void Collector::consume_tagged(uint64_t seq, const Tensors& tensors, const Tags& tags) {
  std::lock_guard lock(mutex_);
  results_.push_back(tensors);
  seqs_.push_back(seq);
  tags_.push_back(tags);
}

std::vector<Tags> Collector::tags() const {
  std::lock_guard lock(mutex_);
  return tags_;
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
  explicit CallbackSink(std::function<void(const Tensors&, const Tags&)> fn) : fn_(std::move(fn)) {}
  void consume(uint64_t, const Tensors& tensors) override { fn_(tensors, {}); }
  void consume_tagged(uint64_t, const Tensors& tensors, const Tags& tags) override { fn_(tensors, tags); }

 private:
  std::function<void(const Tensors&, const Tags&)> fn_;
};
}  // namespace

std::shared_ptr<Sink> callback(std::function<void(const Tensors&)> fn) {
  return callback([fn = std::move(fn)](const Tensors& tensors, const Tags&) { fn(tensors); });
}

std::shared_ptr<Sink> callback(std::function<void(const Tensors&, const Tags&)> fn) {
  return std::make_shared<CallbackSink>(std::move(fn));
}
std::shared_ptr<Collector> collector() { return std::make_shared<Collector>(); }

}  // namespace sinks
}  // namespace sluice
