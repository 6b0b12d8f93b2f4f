#include <sluice/pipeline/sources.h>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/node.h>

namespace sluice {

std::optional<Tensors> Source::next() {
  throw PipelineError(error_message("source", "", "next() or next_chunk() implemented", "neither"));
}

std::optional<Chunk> Source::next_chunk() {
  std::optional<Tensors> tensors = next();
  if (!tensors) return std::nullopt;
  return Chunk{std::move(*tensors), {}};
}

void Source::resume(uint64_t position, const std::string&) {
  throw PipelineError(error_message(
      "source", fmt::format("cannot replay, so cannot resume at message {}", position), "", ""));
}

std::optional<Tensors> PushSource::next() {
  throw PipelineError(
      error_message("push source", "next() is not used; the pipeline receives pushes directly", "", ""));
}

void PushSource::wire(Wiring w) {
  std::lock_guard lock(mutex_);
  wiring_ = std::move(w);
  stopped_ = false;
  wired_.notify_all();
  if (closed_) wiring_->closed();
}

void PushSource::unwire() {
  std::lock_guard lock(mutex_);
  wiring_.reset();
  stopped_ = true;
  wired_.notify_all();
}

void PushSource::push(const Tensors& tensors, OnDone done) {
  push_for(Chunk{tensors, {}}, std::chrono::milliseconds(-1), std::move(done));
}

void PushSource::push(const Chunk& chunk, OnDone done) {
  push_for(chunk, std::chrono::milliseconds(-1), std::move(done));
}

bool PushSource::push_for(const Tensors& tensors, std::chrono::milliseconds timeout, OnDone done) {
  return push_for(Chunk{tensors, {}}, timeout, std::move(done));
}

bool PushSource::push_for(const Chunk& chunk, std::chrono::milliseconds timeout, OnDone done) {
  check_tag_rows(chunk, "push source");
  Wiring w;
  {
    std::unique_lock lock(mutex_);
    if (closed_) throw PipelineError(error_message("push source", "push after close", "", ""));
    // Pushes before the pipeline starts wait for it.
    auto ready = [&] { return wiring_.has_value() || stopped_; };
    if (timeout.count() < 0) {
      wired_.wait(lock, ready);
    } else if (!wired_.wait_for(lock, timeout, ready)) {
      return false;
    }
    if (!wiring_) throw PipelineError(error_message("push source", "the pipeline has stopped", "", ""));
    w = *wiring_;
  }
  std::optional<bool> taken = w.take_credit(timeout);
  if (!taken) throw PipelineError(error_message("push source", "the pipeline has stopped", "", ""));
  if (!*taken) return false;
  std::optional<ForwardedBarrier> barrier;
  {
    std::lock_guard lock(mutex_);
    barrier.swap(barrier_);
  }
  w.deliver(chunk, std::move(done), std::move(barrier));
  return true;
}

void PushSource::request_update(const std::string& stage, Tensors acc) {
  std::function<void(const std::string&, Tensors)> update;
  {
    std::lock_guard lock(mutex_);
    if (!wiring_)
      throw PipelineError(error_message("push source: update of stage '" + stage + "'",
                                        "the pipeline is not running", "", ""));
    update = wiring_->update;
  }
  update(stage, std::move(acc));
}

void PushSource::push_barrier(int64_t number, std::string state) {
  std::lock_guard lock(mutex_);
  barrier_ = ForwardedBarrier{number, std::move(state)};
}

void PushSource::fail(const std::string& what) {
  std::function<void(const std::string&)> abort;
  {
    std::lock_guard lock(mutex_);
    if (wiring_) abort = wiring_->abort;
  }
  if (abort) abort(what);
  else logger().error("push source: {} (the pipeline was not running)", what);
  close();
}

void PushSource::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  if (wiring_) wiring_->closed();
}

namespace sources {

namespace {

// Untagged messages, as chunks with no tags: one mechanism for both.
template <typename... Args>
std::function<std::optional<Chunk>(Args...)> as_chunks(std::function<std::optional<Tensors>(Args...)> make) {
  return [make = std::move(make)](Args... args) -> std::optional<Chunk> {
    std::optional<Tensors> tensors = make(args...);
    if (!tensors) return std::nullopt;
    return Chunk{std::move(*tensors), {}};
  };
}

class GeneratorSource : public Source {
 public:
  GeneratorSource(std::vector<Spec> spec, std::function<std::optional<Chunk>()> make)
      : spec_(std::move(spec)), make_(std::move(make)) {}
  std::vector<Spec> spec() const override { return spec_; }
  std::optional<Chunk> next_chunk() override { return make_(); }
  bool replayable() const override { return true; }
  void resume(uint64_t position, const std::string&) override {
    for (uint64_t i = 0; i < position; ++i)
      if (!make_())
        throw PipelineError(error_message(fmt::format("sources::generator: resume at message {}", position),
                                          "", "the generator to reach it again",
                                          fmt::format("it ended after {}", i)));
  }

 private:
  std::vector<Spec> spec_;
  std::function<std::optional<Chunk>()> make_;
};

class IndexedSource : public Source {
 public:
  IndexedSource(std::vector<Spec> spec, std::function<std::optional<Chunk>(uint64_t)> make)
      : spec_(std::move(spec)), make_(std::move(make)) {}
  std::vector<Spec> spec() const override { return spec_; }
  std::optional<Chunk> next_chunk() override {
    std::optional<Chunk> m = make_(next_);
    if (m) ++next_;
    return m;
  }
  bool replayable() const override { return true; }
  void resume(uint64_t position, const std::string&) override { next_ = position; }

 private:
  std::vector<Spec> spec_;
  std::function<std::optional<Chunk>(uint64_t)> make_;
  uint64_t next_ = 0;
};
}  // namespace

std::shared_ptr<Source> generator(std::vector<Spec> spec, std::function<std::optional<Tensors>()> make) {
  return generator(std::move(spec), as_chunks(std::move(make)));
}

std::shared_ptr<Source> generator(std::vector<Spec> spec, std::function<std::optional<Chunk>()> make) {
  if (spec.empty())
    throw PipelineError(error_message("sources::generator", "", "the spec of its messages", "none"));
  return std::make_shared<GeneratorSource>(std::move(spec), std::move(make));
}

std::shared_ptr<Source> indexed(std::vector<Spec> spec,
                                std::function<std::optional<Tensors>(uint64_t)> make) {
  return indexed(std::move(spec), as_chunks(std::move(make)));
}

std::shared_ptr<Source> indexed(std::vector<Spec> spec, std::function<std::optional<Chunk>(uint64_t)> make) {
  if (spec.empty())
    throw PipelineError(error_message("sources::indexed", "", "the spec of its messages", "none"));
  return std::make_shared<IndexedSource>(std::move(spec), std::move(make));
}

std::shared_ptr<Source> list(std::vector<Tensor> tensors) { return range(std::move(tensors)); }

std::shared_ptr<PushSource> push(std::vector<Spec> spec) {
  if (spec.empty())
    throw PipelineError(error_message("sources::push", "", "the spec of its messages", "none"));
  return std::make_shared<PushSource>(std::move(spec));
}

}  // namespace sources
}  // namespace sluice
