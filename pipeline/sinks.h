#pragma once
// Where a pipeline's messages end: a callback, or a collector keeping them.

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "stream/step.h"

namespace sluice {

// What a sink implements. consume() is called one message at a time, in
// sequence order when the path to the sink is ordered; finish() once after
// the last message (or after a cancel).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void consume(uint64_t seq, const Tensors& tensors) = 0;
  virtual void finish() {}
};

// Keeps every message's tensors, in arrival order. Thread safety: results()
// may be read while the pipeline runs.
class Collector : public Sink {
 public:
  void consume(uint64_t seq, const Tensors& tensors) override;
  std::vector<Tensors> results() const;
  std::vector<uint64_t> sequence_numbers() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Tensors> results_;
  std::vector<uint64_t> seqs_;
};

namespace sinks {
std::shared_ptr<Sink> callback(std::function<void(const Tensors&)> fn);
std::shared_ptr<Collector> collector();
}  // namespace sinks

}  // namespace sluice
