#pragma once
// Where a pipeline's messages come from. A Source produces the tensors of
// one message at a time until it ends; the pipeline numbers them 0, 1, 2...

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "stream/step.h"
#include "stream/to_batched.h"

namespace sluice {

// What a source implements. next() is called from one thread at a time.
class Source {
 public:
  virtual ~Source() = default;
  // The specs of every message's tensors (checked against the consumers at connect).
  virtual std::vector<Spec> spec() const = 0;
  // The next message, or nullopt once the source has ended.
  virtual std::optional<Tensors> next() = 0;
};

// Called once the pipeline is done with a pushed message: `finished` is
// true when every sink consumed it (or it was skipped under
// ErrorPolicy::Skip), false when the run stopped before it got there. Runs
// on whichever thread let the message go: keep it short.
using OnDone = std::function<void(bool finished)>;

// A source other threads feed: push blocks while the pipeline holds its
// capacity of this source's messages; close ends the source.
// Thread safety: push and close may be called from any thread.
class PushSource : public Source {
 public:
  explicit PushSource(std::vector<Spec> spec) : spec_(std::move(spec)) {}
  std::vector<Spec> spec() const override { return spec_; }
  std::optional<Tensors> next() override;  // not used: the pipeline takes pushes directly

  void push(const Tensors& tensors, OnDone done = {});
  void push(const Tensor& t) { push(Tensors{t}); }
  // The same, waiting at most `timeout` for the pipeline's room: false
  // (nothing pushed, `done` not called) when there was none.
  bool push_for(const Tensors& tensors, std::chrono::milliseconds timeout, OnDone done = {});
  void close();

  // Wired by the pipeline when it starts: where pushes go, and how credit is taken.
  struct Wiring {
    std::function<void(Tensors, OnDone)> deliver;  // runs with one credit taken
    // Waits up to the time given (negative: forever) for a credit; nullopt
    // when the pipeline stopped, false when the time ran out.
    std::function<std::optional<bool>(std::chrono::milliseconds)> take_credit;
    std::function<void()> closed;
  };
  void wire(Wiring w);
  void unwire();

 private:
  std::vector<Spec> spec_;
  std::mutex mutex_;
  std::condition_variable wired_;
  std::optional<Wiring> wiring_;
  bool closed_ = false;
  bool stopped_ = false;
};

namespace sources {

// Calls `make()` for each message until it returns nullopt.
std::shared_ptr<Source> generator(std::vector<Spec> spec, std::function<std::optional<Tensors>()> make);
// The tensors of a list, one message each.
std::shared_ptr<Source> list(std::vector<Tensor> tensors);
// Any range of tensors (to_batched's Batches, a vector, ...): one message per element.
template <typename Range>
std::shared_ptr<Source> range(Range r) {
  auto state = std::make_shared<Range>(std::move(r));
  auto it = std::make_shared<decltype(std::begin(*state))>(std::begin(*state));
  if (*it == std::end(*state)) throw PipelineError("sources::range: expected at least one tensor, found none");
  Tensor first = **it;
  return generator({first.spec()}, [state, it]() -> std::optional<Tensors> {
    if (*it == std::end(*state)) return std::nullopt;
    Tensor t = **it;
    ++*it;
    return Tensors{t};
  });
}
// A push source for messages of `spec`.
std::shared_ptr<PushSource> push(std::vector<Spec> spec);

}  // namespace sources
}  // namespace sluice
