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
// tensors on the host, and the times of its rows.
struct Held {
  Envelope message;
  Tensors host;
  std::vector<const std::byte*> data;  // each tensor's, on the host
  int64_t rows = 0;
  std::vector<int64_t> times;   // each row's
  int64_t first = 0, last = 0;  // its first and last rows' times
};

// Another stream's chunks that may still match a reference row, oldest first.
struct Stream {
  std::deque<Held> chunks;
  int64_t last = kNever;  // the time of its newest row
  bool ended = false;     // it brings no more: nothing waits for it
};

class ZipByTimeNode : public PipelineNode {
 public:
  ZipByTimeNode(std::string name, ZipOptions options)
      : PipelineNode(std::move(name)),
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
    std::vector<Envelope> out;
    {
      std::lock_guard lock(mutex_);
      release(out, /*ended=*/true);
    }
    put_all(v, out, *out_);
    return !out.empty();
  }

  // Once every message of an input up to its end has been taken, nothing
  // waits for it any more: without this, a reference holding its whole
  // capacity would wait for a stream that ended until the run did, which,
  // across processes, can be never.
  void input_ended(size_t input, uint64_t messages) override {
    Visit v(counters());
    std::vector<Envelope> out;
    {
      std::lock_guard lock(mutex_);
      ends_[input] = messages;
      if (!ended_input(input)) return;
      release(out, /*ended=*/false);
    }
    put_all(v, out, *out_);
  }

  void end_stream() override { late_.end_stream(); }
  void finish() override { late_.finish(); }

  void add_metrics(NodeMetrics& m) const override {
    std::lock_guard lock(mutex_);
    late_.add_metrics(m);
    m.figures["matched_rows"] = static_cast<double>(matched_rows_);
    m.figures["unmatched_rows"] = static_cast<double>(unmatched_rows_);
    m.figures["unwaited"] = static_cast<double>(unwaited_);
    m.figures["held_full"] = static_cast<double>(held_full_);
    m.figures["waiting"] = static_cast<double>(pending_.size());
  }

 private:
  std::string who() const { return fmt::format("zip_by_time '{}'", name()); }
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
    std::vector<Envelope> out;
    // Counted however it goes: its input's end is known by the count.
    struct Taken {
      ZipByTimeNode& zip;
      size_t k;
      std::vector<Envelope>& out;
      ~Taken() {
        std::lock_guard lock(zip.mutex_);
        ++zip.taken_[k];
        if (zip.ended_input(k)) zip.release(out, /*ended=*/false);
      }
    };
    {
      Taken counted{*this, k, out};
      if (!m.skipped) hold_and_release(k, m, out);  // a skipped one (ErrorPolicy::Skip) has nothing to align
    }
    put_all(v, out, *out_);
  }

  void hold_and_release(size_t k, const Envelope& m, std::vector<Envelope>& out) {
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
        s.chunks.push_back(std::move(h));
      }
      release(out, /*ended=*/false);
    } catch (const Error& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
  }

  Held hold(size_t k, const Envelope& m) const {
    Held h{.message = m};
    for (const Tensor& t : m.tensors) {
      h.host.push_back(t.to_host());
      h.data.push_back(static_cast<const std::byte*>(h.host.back().host_data()));
    }
    h.rows = message_rows(h.host, fmt::format("{}, input {}", who(), k),
                          k == 0 ? Scalars::PassOver : Scalars::Refused);
    const RowTimes times = row_times(tags_of(m), fmt::format("{}, input {}", who(), k));
    h.times.resize(static_cast<size_t>(h.rows));
    for (int64_t r = 0; r < h.rows; ++r) h.times[static_cast<size_t>(r)] = times.at(r);
    h.first = times.at(0);
    h.last = times.at(std::max<int64_t>(h.rows - 1, 0));
    return h;
  }

  // Emits the reference chunks that need wait no longer. Under the lock.
  void release(std::vector<Envelope>& out, bool ended) {
    // What came more than the tolerance before every row still to come
    // matches none: let go now, not when a reference is emitted, or a
    // stream that starts before the reference (a sensor switched on first,
    // say) would hold its whole capacity, the reference would wait for it,
    // and neither would move.
    if (!pending_.empty())
      for (Stream& s : streams_)
        while (!s.chunks.empty() && s.chunks.front().last < pending_.front().first - tolerance())
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
      out.push_back(emit(c));
      pending_.pop_front();
    }
  }

  Envelope emit(const Held& c) {
    Envelope e;
    e.seq = next_seq_++;
    e.born = c.message.born;
    e.credit = c.message.credit;
    e.tensors = c.message.tensors;
    for (size_t k = 1; k < inputs_.size(); ++k) align(c, streams_[k - 1], inputs_[k], e.tensors);
    emitted_ = c.last;
    Tags tags = tags_of(c.message);
    tags.set(std::string(tag_keys::kWatermark), c.last);
    attach_tags(e, std::move(tags));
    return e;
  }

  // Each reference row's nearest sample of stream `s` within the
  // tolerance (ties to the earlier), appended to `out` as that stream's
  // tensors with the reference's rows, and which rows matched.
  void align(const Held& c, Stream& s, const std::vector<Spec>& specs, Tensors& out) {
    Tensors aligned;
    std::vector<std::byte*> to;
    std::vector<size_t> row;
    for (const Spec& spec : specs) {
      // Every row is written below: a match's, or zeros.
      aligned.push_back(host_tensor(with_rows(spec, c.rows), who(), /*zeroed=*/false));
      to.push_back(host_bytes(aligned.back()));
      row.push_back(row_bytes(spec));
    }
    Tensor matched = host_tensor(Spec{DType::Pred, Shape{c.rows}}, who());
    std::byte* hit = host_bytes(matched);
    std::vector<const Held*> held;
    for (const Held& h : s.chunks)
      if (h.rows > 0) held.push_back(&h);
    // The cursor: `after`, the first sample after the row's time (chunk
    // held[next], row j; next == held.size(): none), and `before`, the one
    // before it.
    size_t next = 0;
    int64_t j = 0;
    const Held* before = nullptr;
    int64_t before_row = 0, before_time = 0;
    // Rows are copied in runs: consecutive rows taking consecutive samples
    // of one chunk (most of them, at like rates), or taking none (zeros).
    int64_t run_from = 0, run_rows = 0, run_row = 0;
    const Held* run_chunk = nullptr;
    auto flush = [&] {
      for (size_t k = 0; k < to.size() && run_rows > 0; ++k) {
        std::byte* dst = to[k] + static_cast<size_t>(run_from) * row[k];
        const size_t bytes = static_cast<size_t>(run_rows) * row[k];
        if (run_chunk)
          std::memcpy(dst, run_chunk->data[k] + static_cast<size_t>(run_row) * row[k], bytes);
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
    for (int64_t r = 0; r < c.rows; ++r) {
      const int64_t t = c.times[static_cast<size_t>(r)];
      while (next < held.size() && held[next]->times[static_cast<size_t>(j)] <= t) {
        before = held[next];
        before_row = j;
        before_time = before->times[static_cast<size_t>(j)];
        if (++j == before->rows) {
          ++next;
          j = 0;
        }
      }
      const Held* pick = before;
      int64_t pick_row = before_row, distance = t - before_time;
      if (next < held.size()) {
        const int64_t after = held[next]->times[static_cast<size_t>(j)] - t;
        if (!before || after < distance) {
          pick = held[next];
          pick_row = j;
          distance = after;
        }
      }
      if (!pick || distance > tolerance()) {
        copy(r, nullptr, 0);
        continue;
      }
      ++matches;
      hit[r] = std::byte{1};
      copy(r, pick, pick_row);
    }
    flush();
    matched_rows_ += matches;
    unmatched_rows_ += static_cast<uint64_t>(c.rows) - matches;
    // What only came before this chunk's last row, by more than the
    // tolerance, matches no row after it.
    while (!s.chunks.empty() && s.chunks.front().last < c.last - tolerance()) s.chunks.pop_front();
    for (Tensor& t : aligned) out.push_back(std::move(t));
    out.push_back(std::move(matched));
  }

  ZipOptions options_;
  std::optional<std::vector<Spec>> output_;
  std::vector<std::vector<Spec>> inputs_;
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
  uint64_t matched_rows_ = 0, unmatched_rows_ = 0, unwaited_ = 0, held_full_ = 0;
};

}  // namespace

std::unique_ptr<PipelineNode> zip_by_time_node(std::string name, ZipOptions options) {
  return std::make_unique<ZipByTimeNode>(std::move(name), std::move(options));
}

}  // namespace sluice
