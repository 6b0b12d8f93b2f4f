#include <sluice/pipeline/node.h>

#include <utility>

#include <fmt/format.h>

#include <sluice/devices/cross_thread_allocator.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/trace_recorder.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {

namespace {
int64_t bytes_of(const Tensors& t) {
  int64_t b = 0;
  for (const Tensor& x : t) b += x.spec().bytes();
  return b;
}
}  // namespace

Visit::Visit(NodeCounters& c, const Envelope& m) : counters(c) {
  c.messages_in.fetch_add(1, std::memory_order_relaxed);
  c.bytes_in.fetch_add(static_cast<uint64_t>(bytes_of(m.tensors)), std::memory_order_relaxed);
  if (m.skipped) c.skipped.fetch_add(1, std::memory_order_relaxed);
  if (c.trace) queued = m.sent;
}

void Visit::leave(Envelope& m) {
  leave(std::as_const(m));
  m.sent = start;  // leave's now
}

void Visit::leave(const Envelope& m) {
  const Clock::time_point now = Clock::now();
  counters.messages_out.fetch_add(1, std::memory_order_relaxed);
  counters.bytes_out.fetch_add(static_cast<uint64_t>(bytes_of(m.tensors)), std::memory_order_relaxed);
  counters.busy_ns.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(now - start).count()),
                             std::memory_order_relaxed);
  counters.latency.record(std::chrono::duration<double, std::micro>(now - m.born).count());
  if (counters.trace) {
    counters.trace->recorder->slice(*counters.trace, start, now, m.seq, queued);
    queued = {};  // the wait was the first message's
  }
  start = now;
}

std::shared_ptr<void> hold_credit(const std::shared_ptr<Credit>& credit,
                                  std::function<void(bool finished)> done) {
  return std::shared_ptr<void>(nullptr, [credit, done = std::move(done)](void*) {
    // Counted before `live` is read, as end_credits clears `live` before it
    // reads the count: one of the two sees the other.
    credit->releasing.fetch_add(1);
    if (credit->live.load()) credit->release();
    credit->releasing.fetch_sub(1);
    if (done) done(credit->finishing.load(std::memory_order_acquire));
  });
}

void attach_tags(Envelope& m, Tags tags) {
  if (tags.empty()) {
    m.tags = nullptr;
    return;
  }
  struct Held {
    std::shared_ptr<void> credit;
    Tags tags;
  };
  // Freed where the message's last copy goes, on another thread.
  auto held =
      std::allocate_shared<Held>(CrossThreadAllocator<Held>(), Held{std::move(m.credit), std::move(tags)});
  m.tags = &held->tags;
  m.credit = std::move(held);
}

const Tags& tags_of(const Envelope& m) {
  static const Tags none;
  return m.tags ? *m.tags : none;
}

void stage_tags(TagRule rule, const std::function<Tags(const Tags&, const Tensors&)>& set, const Envelope& in,
                Envelope& out) {
  switch (rule) {
    case TagRule::Carry: out.tags = in.tags; break;
    case TagRule::Drop: out.tags = nullptr; break;
    default: attach_tags(out, set(tags_of(in), out.tensors));
  }
}

void check_tag_rows(const Chunk& chunk, const std::string& who) {
  if (chunk.tags.empty() || chunk.tensors.empty()) return;
  const Tensor& first = chunk.tensors.front();
  const int64_t rows = first.rank() == 0 ? 1 : first.shape().dim(0);
  for (const Tag& t : chunk.tags.all())
    if (t.offset >= rows)
      throw PipelineError(
          error_message(who, fmt::format("tag '{}'", t.key),
                        fmt::format("a row of its first tensor, {} (below {})", first.spec(), rows),
                        fmt::format("row {}", t.offset)));
}

void PipelineNode::resolve_inputs(const std::vector<std::vector<Spec>>& inputs) {
  std::vector<Spec> all;
  for (const auto& in : inputs) all.insert(all.end(), in.begin(), in.end());
  resolve(all);
}

Tensors host_copies(const Tensors& acc) {
  Tensors out;
  for (const Tensor& t : acc)
    out.push_back(t.device() == host() ? tensor_from_bytes(t.spec(), t.host_data(), host()) : t.to_host());
  return out;
}

void PipelineNode::update(StageUpdate, bool) {
  throw PipelineError(error_message("update of '" + name() + "'", "", "a stage", std::string("a ") + kind()));
}

}  // namespace sluice
