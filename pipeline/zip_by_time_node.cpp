// zip_by_time (pipeline/event_time.h): 2 to 4 streams aligned by the times
// of their rows. The first input, the reference, sets the rows of every
// output; each other stream gives each reference row its sample nearest in
// time, within the tolerance. Each stream's rows go forward in time, so
// one cursor walks each stream's held chunks along the reference's rows:
// the alignment costs a step per row, where a search would cost a log.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/late_data.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/rows.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

// A chunk the zip holds: its message (and so its source's credit), its
// tensors on the host, and the times of its rows (computed where needed,
// not stored: a stored time costs more to read back, from memory, than
// to compute).
struct Held {
  Envelope message;
  Tensors host;
  std::vector<const std::byte*> data;  // each tensor's, on the host
  int64_t rows = 0;
  RowTimes times;
  int64_t first = 0, last = 0;  // its first and last rows' times
  int64_t time(int64_t row) const { return times.at(row); }
};

// Chunks of a stream with rows, oldest first, shared with the jobs aligned to them.
using HeldChunks = std::vector<std::shared_ptr<const Held>>;

// Another stream's chunks that may still match a reference row, oldest
// first. Shared with the reference chunks being aligned to them.
struct Stream {
  std::deque<std::shared_ptr<const Held>> chunks;
  int64_t last = kNever;  // the time of its newest row
  bool ended = false;     // it brings no more: nothing waits for it
};

// A reference chunk that waits no longer, and each other stream's chunks
// with rows that its rows may take: aligned outside the lock, so that the
// next message is taken meanwhile.
struct Job {
  Held ref;
  std::vector<HeldChunks> streams;  // each other stream's
  uint64_t seq = 0;
};

class ZipByTimeNode : public PipelineNode {
 public:
  ZipByTimeNode(std::string name, ZipOptions options)
      : PipelineNode(std::move(name)),
        who_(fmt::format("zip_by_time '{}'", this->name())),
        options_(std::move(options)),
        late_(options_.late, "ZipOptions::late") {
    if (options_.tolerance.count() < 0)
      throw PipelineError(error_message(who(), "tolerance", "0 ns or more",
                                        fmt::format("{} ns", options_.tolerance.count())));
    if (options_.lateness.count() < 0)
      throw PipelineError(
          error_message(who(), "lateness", "0 ns or more", fmt::format("{} ns", options_.lateness.count())));
  }

  const char* kind() const override { return "zip_by_time"; }
  bool separate_inputs() const override { return true; }
  bool needs_order() const override { return true; }
  std::optional<std::vector<Spec>> output_spec() const override { return output_; }

  void resolve_inputs(const std::vector<std::vector<Spec>>& inputs) override {
    if (inputs.size() < 2)
      throw PipelineError(error_message(who(), "inputs", "2 to 4 streams", fmt::format("{}", inputs.size())));
    // The reference's scalars are values of its whole chunk, which go on
    // with it; every other tensor has the chunk's rows.
    int64_t rows = -1;
    for (size_t k = 0; k < inputs.size(); ++k) {
      int64_t input_rows = -1;
      bool fits = !inputs[k].empty();
      for (const Spec& s : inputs[k]) {
        if (s.shape.rank() == 0) {
          fits = fits && k == 0;
          continue;
        }
        if (input_rows >= 0 && s.shape.dim(0) != input_rows) fits = false;
        input_rows = s.shape.dim(0);
      }
      if (!fits || input_rows < 0)
        throw PipelineError(error_message(who(), fmt::format("input {}", k),
                                          k == 0 ? "tensors with one count of rows along axis 0, and scalars"
                                                 : "tensors with one count of rows along axis 0",
                                          inputs[k].empty() ? "none" : specs_str(inputs[k])));
      if (k == 0) rows = input_rows;
    }
    output_ = inputs[0];
    for (size_t k = 1; k < inputs.size(); ++k) {
      for (const Spec& s : inputs[k]) output_->push_back(with_rows(s, rows));
      output_->push_back(Spec{DType::Pred, Shape{rows}});
    }
    inputs_ = inputs;
    input_who_.clear();
    for (size_t k = 0; k < inputs.size(); ++k) input_who_.push_back(fmt::format("{}, input {}", who(), k));
    streams_.assign(inputs.size() - 1, Stream{});
    taken_.assign(inputs.size(), 0);
    ends_.assign(inputs.size(), std::nullopt);
    late_.inputs(inputs.size());
  }

  NodePorts join(NodeContext& ctx) override {
    ctx_ = &ctx;
    out_ = ctx.own(std::make_shared<flow::broadcast_node<Envelope>>(ctx.graph()));
    NodePorts ports{.input = nullptr, .output = out_};
    for (size_t k = 0; k < inputs_.size(); ++k)
      ports.inputs.push_back(ctx.own(std::make_shared<flow::function_node<Envelope, flow::continue_msg>>(
          ctx.graph(), flow::serial, [this, k](const Envelope& m) {
            take(k, m);
            return flow::continue_msg();
          })));
    return ports;
  }

  bool drained(NodeContext&) override {
    Visit v(counters());
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mutex_);
      release(jobs, /*ended=*/true);
    }
    const bool any = !jobs.empty();
    send(v, jobs);
    return any;
  }

  // Once every message of an input up to its end has been taken, nothing
  // waits for it any more: without this, a reference holding its whole
  // capacity would wait for a stream that ended until the run did, which,
  // across processes, can be never.
  void input_ended(size_t input, uint64_t messages) override {
    Visit v(counters());
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mutex_);
      ends_[input] = messages;
      if (!ended_input(input)) return;
      release(jobs, /*ended=*/false);
    }
    send(v, jobs);
  }

  void end_stream() override { late_.end_stream(); }
  void finish() override { late_.finish(); }

  void add_metrics(NodeMetrics& m) const override {
    std::lock_guard lock(mutex_);
    late_.add_metrics(m);
    m.figures["matched_rows"] = static_cast<double>(matched_rows_.load());
    m.figures["unmatched_rows"] = static_cast<double>(unmatched_rows_.load());
    m.figures["unwaited"] = static_cast<double>(unwaited_);
    m.figures["held_full"] = static_cast<double>(held_full_);
    m.figures["waiting"] = static_cast<double>(pending_.size());
  }

 private:
  // Made once: naming the node in an error is rare, and each chunk passes
  // these names to what may refuse it.
  const std::string& who() const { return who_; }
  int64_t tolerance() const { return options_.tolerance.count(); }

  // Whether input k's last message has been taken (under the lock): its
  // stream, if not the reference's, is marked ended.
  bool ended_input(size_t k) {
    if (!ends_[k] || taken_[k] < *ends_[k]) return false;
    if (k > 0) streams_[k - 1].ended = true;
    return true;
  }

  void take(size_t k, const Envelope& m) {
    Visit v(counters(), m);
    std::vector<Job> jobs;
    // Counted however it goes: its input's end is known by the count.
    struct Taken {
      ZipByTimeNode& zip;
      size_t k;
      std::vector<Job>& jobs;
      ~Taken() {
        std::lock_guard lock(zip.mutex_);
        ++zip.taken_[k];
        if (zip.ended_input(k)) zip.release(jobs, /*ended=*/false);
      }
    };
    {
      Taken counted{*this, k, jobs};
      if (!m.skipped) hold_and_release(k, m, jobs);  // a skipped one (ErrorPolicy::Skip) has nothing to align
    }
    send(v, jobs);
  }

  // Aligns the jobs and passes them on. Jobs of two threads may go out of
  // order: their numbers were given in order, and order is restored where
  // it is needed.
  void send(Visit& v, std::vector<Job>& jobs) {
    std::vector<Envelope> out;
    for (Job& job : jobs) {
      try {
        out.push_back(emit(job));
      } catch (const Error& e) { ctx_->fail(job.seq, e.what(), std::current_exception()); }
    }
    put_all(v, out, *out_);
  }

  void hold_and_release(size_t k, const Envelope& m, std::vector<Job>& jobs) {
    try {
      Held h = hold(k, m);
      std::lock_guard lock(mutex_);
      if (k == 0) {
        if (h.first <= ref_last_) return late_.take(who(), k, h.host, tags_of(h.message), h.rows, ref_last_);
        ref_last_ = h.last;
        pending_.push_back(std::move(h));
      } else {
        Stream& s = streams_[k - 1];
        // It might have matched rows already emitted, or it goes back in time.
        const int64_t bound = std::max(s.last, emitted_ == kNever ? kNever : emitted_ + tolerance());
        if (h.first <= bound) return late_.take(who(), k, h.host, tags_of(h.message), h.rows, bound);
        s.last = h.last;
        s.chunks.push_back(std::make_shared<const Held>(std::move(h)));
      }
      release(jobs, /*ended=*/false);
    } catch (const Error& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
  }

  Held hold(size_t k, const Envelope& m) const {
    Held h{.message = m};
    for (const Tensor& t : m.tensors) {
      h.host.push_back(t.to_host());
      h.data.push_back(static_cast<const std::byte*>(h.host.back().host_data()));
    }
    h.rows = message_rows(h.host, input_who_[k], k == 0 ? Scalars::PassOver : Scalars::Refused);
    h.times = row_times(tags_of(m), input_who_[k]);
    h.first = h.time(0);
    h.last = h.time(std::max<int64_t>(h.rows - 1, 0));
    return h;
  }

  // Makes jobs of the reference chunks that need wait no longer. Under the lock.
  void release(std::vector<Job>& jobs, bool ended) {
    // What came more than the tolerance before every row still to come
    // matches none: let go now, not when a reference is emitted, or a
    // stream that starts before the reference (a sensor switched on first,
    // say) would hold its whole capacity, the reference would wait for it,
    // and neither would move.
    if (!pending_.empty())
      for (Stream& s : streams_)
        while (!s.chunks.empty() && s.chunks.front()->last < pending_.front().first - tolerance())
          s.chunks.pop_front();
    while (!pending_.empty()) {
      const Held& c = pending_.front();
      const int64_t needed = c.last + tolerance();
      bool waits = false, unwaited = false;
      for (const Stream& s : streams_) {
        if (ended || s.ended || (s.last != kNever && s.last >= needed)) continue;
        if (ref_last_ - needed >= options_.lateness.count()) {
          unwaited = true;
          continue;
        }
        waits = true;
      }
      if (waits) {
        // Holding its source's whole capacity, the reference brings no more
        // until the others catch up: backpressure, said once.
        if (pending_.size() >= ctx_->capacity() && !held_full_++)
          logger().warn(
              "{}: holds its reference's whole capacity ({} chunks) waiting for the other streams: "
              "the reference waits for them (for the lateness to decide instead, give it a capacity "
              "of more chunks than the lateness spans)",
              who(), pending_.size());
        break;
      }
      unwaited_ += unwaited;
      jobs.push_back(job(std::move(pending_.front())));
      pending_.pop_front();
    }
  }

  // Reference chunk `c`'s job. Under the lock.
  Job job(Held c) {
    Job j{.ref = std::move(c), .seq = next_seq_++};
    emitted_ = j.ref.last;
    for (Stream& s : streams_) {
      auto& taken = j.streams.emplace_back();
      for (const auto& h : s.chunks)
        if (h->rows > 0) taken.push_back(h);
      // What only came before this chunk's last row, by more than the
      // tolerance, matches no row after it.
      while (!s.chunks.empty() && s.chunks.front()->last < j.ref.last - tolerance()) s.chunks.pop_front();
    }
    return j;
  }

  Envelope emit(const Job& job) {
    const Held& c = job.ref;
    Envelope e;
    e.seq = job.seq;
    e.born = c.message.born;
    e.credit = c.message.credit;
    e.tensors = c.message.tensors;
    for (size_t k = 1; k < inputs_.size(); ++k) align(c, job.streams[k - 1], inputs_[k], e.tensors);
    Tags tags = tags_of(c.message);
    tags.set(std::string(tag_keys::kWatermark), c.last);
    attach_tags(e, std::move(tags));
    return e;
  }

  // One stream's rows aligned to a reference chunk: where they go.
  struct Aligned {
    Tensors tensors;
    std::vector<std::byte*> to;  // each tensor's bytes
    std::vector<size_t> row;     // each tensor's bytes a row
    std::byte* hit = nullptr;    // whether each row matched
  };
  static constexpr int64_t kBlockRows = 512;

  // Each reference row's nearest sample of stream `s` within the
  // tolerance (ties to the earlier), appended to `out` as that stream's
  // tensors with the reference's rows, and which rows matched. A long
  // chunk's rows are aligned in blocks on the idle workers: each block
  // finds where its cursor starts with a search, then walks.
  void align(const Held& c, const HeldChunks& held, const std::vector<Spec>& specs, Tensors& out) {
    Aligned a;
    for (const Spec& spec : specs) {
      // Every row is written below: a match's, or zeros.
      a.tensors.push_back(host_tensor(with_rows(spec, c.rows), who(), /*zeroed=*/false));
      a.to.push_back(host_bytes(a.tensors.back()));
      a.row.push_back(row_bytes(spec));
    }
    Tensor matched = host_tensor(Spec{DType::Pred, Shape{c.rows}}, who());
    a.hit = host_bytes(matched);
    uint64_t matches = 0;
    if (c.rows < 2 * kBlockRows) {
      matches = align_rows(c, held, a, 0, c.rows);
    } else {
      std::atomic<uint64_t> counted{0};
      // Isolated: while it waits for the blocks, this thread takes up
      // nothing else, which would hold up this message behind it.
      tbb::this_task_arena::isolate([&] {
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, c.rows, kBlockRows),
                          [&](const tbb::blocked_range<int64_t>& b) {
                            counted += align_rows(c, held, a, b.begin(), b.end());
                          });
      });
      matches = counted;
    }
    matched_rows_ += matches;
    unmatched_rows_ += static_cast<uint64_t>(c.rows) - matches;
    for (Tensor& t : a.tensors) out.push_back(std::move(t));
    out.push_back(std::move(matched));
  }

  // Aligns reference rows [from, to); how many matched.
  uint64_t align_rows(const Held& c, const HeldChunks& held, Aligned& a, int64_t from, int64_t to) const {
    // The cursor: `after`, the first sample after the row's time (chunk
    // held[next], row j; next == held.size(): none), and `before`, the one
    // before it; first placed by a search for row `from`'s time.
    size_t next = 0;
    int64_t j = 0;
    const Held* before = nullptr;
    int64_t before_row = 0, before_time = 0;
    const int64_t start = c.time(from);
    while (next < held.size() && held[next]->last <= start) ++next;  // chunks wholly at or before it
    if (next > 0) {
      before = held[next - 1].get();
      before_row = before->rows - 1;
      before_time = before->last;
    }
    if (next < held.size()) {
      // The first row after `start` in held[next] (its first may be too).
      const Held& h = *held[next];
      int64_t lo = 0, hi = h.rows - 1;  // h.time(hi) > start
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (h.time(mid) > start)
          hi = mid;
        else
          lo = mid + 1;
      }
      j = lo;
      if (j > 0) {
        before = &h;
        before_row = j - 1;
        before_time = h.time(j - 1);
      }
    }
    // Rows are copied in runs: consecutive rows taking consecutive samples
    // of one chunk (most of them, at like rates), or taking none (zeros).
    int64_t run_from = 0, run_rows = 0, run_row = 0;
    const Held* run_chunk = nullptr;
    auto flush = [&] {
      for (size_t k = 0; k < a.to.size() && run_rows > 0; ++k) {
        std::byte* dst = a.to[k] + static_cast<size_t>(run_from) * a.row[k];
        const size_t bytes = static_cast<size_t>(run_rows) * a.row[k];
        if (run_chunk)
          std::memcpy(dst, run_chunk->data[k] + static_cast<size_t>(run_row) * a.row[k], bytes);
        else
          std::memset(dst, 0, bytes);
      }
    };
    auto copy = [&](int64_t r, const Held* chunk, int64_t at) {
      if (run_rows > 0 && chunk == run_chunk && (!chunk || at == run_row + run_rows)) {
        ++run_rows;
        return;
      }
      flush();
      run_from = r;
      run_rows = 1;
      run_chunk = chunk;
      run_row = at;
    };
    uint64_t matches = 0;
    for (int64_t r = from; r < to; ++r) {
      const int64_t t = c.time(r);
      while (next < held.size() && held[next]->time(j) <= t) {
        before = held[next].get();
        before_row = j;
        before_time = before->time(j);
        if (++j == before->rows) {
          ++next;
          j = 0;
        }
      }
      const Held* pick = before;
      int64_t pick_row = before_row, distance = t - before_time;
      if (next < held.size()) {
        const int64_t after = held[next]->time(j) - t;
        if (!before || after < distance) {
          pick = held[next].get();
          pick_row = j;
          distance = after;
        }
      }
      if (!pick || distance > tolerance()) {
        copy(r, nullptr, 0);
        continue;
      }
      ++matches;
      a.hit[r] = std::byte{1};
      copy(r, pick, pick_row);
    }
    flush();
    return matches;
  }

  std::string who_;
  ZipOptions options_;
  std::optional<std::vector<Spec>> output_;
  std::vector<std::vector<Spec>> inputs_;
  std::vector<std::string> input_who_;  // who(), input k
  NodeContext* ctx_ = nullptr;
  flow::broadcast_node<Envelope>* out_ = nullptr;

  mutable std::mutex mutex_;  // guards what follows
  std::deque<Held> pending_;  // reference chunks waiting for the other streams
  std::vector<Stream> streams_;
  std::vector<uint64_t> taken_;                // messages taken from each input
  std::vector<std::optional<uint64_t>> ends_;  // how many each input brings, once it ended
  int64_t ref_last_ = kNever;  // the reference's newest row time
  int64_t emitted_ = kNever;   // the last emitted row's time
  uint64_t next_seq_ = 0;
  LateData late_;
  uint64_t unwaited_ = 0, held_full_ = 0;
  std::atomic<uint64_t> matched_rows_{0},
      unmatched_rows_{0};  // counted as jobs are aligned, outside the lock
};

}  // namespace

std::unique_ptr<PipelineNode> zip_by_time_node(std::string name, ZipOptions options) {
  return std::make_unique<ZipByTimeNode>(std::move(name), std::move(options));
}

}  // namespace sluice
