// event_window (pipeline/event_time.h): one stream's rows cut into windows, by
// count or by time, tumbling or sliding. Rows wait in a buffer of their
// own (one byte vector per tensor) until the windows holding them are
// emitted; a window is a copy of its rows, so its message holds only the
// credit of the message that completed it (none at the stream's end).
//
// It takes part in checkpoints: at a barrier, the rows it holds (with their
// times and their chunks' tags) and where its windows stand are its state,
// handed in before the message after the barrier is taken, and the barrier
// goes on ahead of the windows that message completes. A restored window
// holds those rows again, and the sources replay what came after them.
//
// With `idle`, a timer thread (DeadlineTimer) wakes once the stream has
// brought nothing for that long and emits the windows holding rows, as the
// stream's end would: under the node's lock, numbered as every window is.

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sluice/base/detail/log.h>
#include <sluice/io/wire_format.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/deadline_timer.h>
#include <sluice/pipeline/detail/late_data.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/rows.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

class EventWindowNode : public PipelineNode {
 public:
  EventWindowNode(std::string name, EventWindowOptions options)
      : PipelineNode(std::move(name)),
        options_(std::move(options)),
        late_(options_.late, "EventWindowOptions::late") {
    late_.inputs(1);
    if (options_.every_rows == 0) options_.every_rows = options_.rows;
    if (options_.every.count() == 0) options_.every = options_.length;
    auto refuse = [&](const char* what, const std::string& expected, const std::string& found) {
      throw PipelineError(error_message(who(), what, expected, found));
    };
    if (options_.rows <= 0) refuse("rows", "1 or more", fmt::format("{}", options_.rows));
    if (options_.length.count() < 0)
      refuse("length", "0 (by count) or more ns (by time)", fmt::format("{} ns", options_.length.count()));
    if (by_time() && options_.every.count() <= 0)
      refuse("every", "1 ns or more", fmt::format("{} ns", options_.every.count()));
    if (!by_time() && options_.every_rows <= 0)
      refuse("every_rows", "1 or more", fmt::format("{}", options_.every_rows));
    if (options_.idle.count() < 0 || (options_.idle.count() > 0 && !by_time()))
      refuse("idle", "0, or more ns for windows by time (length > 0)",
             fmt::format("{} ns{}", options_.idle.count(), by_time() ? "" : " by count"));
  }

  const char* kind() const override { return "event_window"; }
  bool numbers_its_outputs() const override { return true; }
  size_t max_inputs() const override { return 1; }
  bool separate_inputs() const override { return true; }  // it numbers its windows itself
  bool needs_order() const override { return true; }
  std::optional<std::vector<Spec>> output_spec() const override { return output_; }

  void resolve(const std::vector<Spec>& inputs) override {
    if (inputs.empty()) throw PipelineError(error_message(who(), "its input", "tensors", "none"));
    output_.emplace();
    for (const Spec& s : inputs) {
      if (s.shape.rank() == 0)
        throw PipelineError(
            error_message(who(), "its input", "tensors with rows along axis 0", specs_str(inputs)));
      output_->push_back(with_rows(s, options_.rows));
      row_.push_back(row_bytes(s));
    }
    if (by_time()) output_->push_back(Spec{DType::S64, Shape{}});
    buffer_.assign(inputs.size(), {});
    input_ = inputs;
  }

  NodePorts join(NodeContext& ctx) override {
    ctx_ = &ctx;
    out_ = ctx.own(std::make_shared<flow::broadcast_node<Envelope>>(ctx.graph()));
    auto* in = ctx.own(std::make_shared<flow::function_node<Envelope, flow::continue_msg>>(
        ctx.graph(), flow::serial, [this](const Envelope& m) {
          take(m);
          return flow::continue_msg();
        }));
    if (options_.idle.count() > 0) {
      last_arrival_ = Clock::now();
      idle_timer_.emplace([this] { return idle(); });
    }
    return {.input = nullptr, .output = out_, .inputs = {in}};
  }

  bool drained(NodeContext&) override {
    // Stopped first: what it emitted after the graph went quiet is waited
    // for with what the stream's end emits.
    const bool timer_emitted = stop_timer();
    Visit v(counters());
    std::vector<Envelope> out;
    {
      std::lock_guard lock(mutex_);
      if (by_time()) {
        watermark_ = std::numeric_limits<int64_t>::max();
        // What the stream's end completes holds no message's credit: the
        // messages are gone, and a reliable upstream waits for them.
        cut_by_time(out, nullptr, last_seq_);
      } else if (!times_.empty()) {
        unwindowed_ += times_.size();
        logger().info("{}: {} rows at the end fill no window of {}", who(), times_.size(), options_.rows);
      }
    }
    put_all(v, out, *out_);
    return !out.empty() || timer_emitted;
  }

  void stop() override { stop_timer(); }

  bool takes_part() const override { return true; }
  bool checkpoints_tensors() const override { return true; }
  uint64_t outputs_numbered_from() const override { return numbered_from_; }

  // The final checkpoint's state, the stream over: what is left held fills
  // no window (drained() counted it), so none of it is kept.
  std::string checkpoint_state(int64_t /*number*/) override {
    std::lock_guard lock(mutex_);
    return state_text(/*with_rows=*/false).dump();
  }

  void check(const Checkpoint& c, const std::string& at) const override {
    if (c.number > 0) restored_state(c, at);
  }

  void restore(const Checkpoint& c) override {
    if (c.number == 0) return;
    Restored r = restored_state(c, "");
    std::lock_guard lock(mutex_);
    const nlohmann::json& j = r.state;
    taken_ = j.at("taken");
    skip_ = j.at("skip");
    last_time_ = j.at("last_time");
    emitted_end_ = j.at("emitted_end");
    watermark_ = j.at("watermark");
    next_start_ = j.at("next_start");
    numbered_from_ = j.at("next_seq");
    windows_ = j.at("windows");
    unwindowed_ = j.at("unwindowed");
    late_.restore_counts(j.at("late").get<std::vector<uint64_t>>(), who());
    for (auto& b : buffer_) b.clear();
    times_.clear();
    chunk_tags_.clear();
    if (r.tensors.empty()) return;
    for (size_t k = 0; k < buffer_.size(); ++k) {
      const auto* from = static_cast<const std::byte*>(r.tensors[k].host_data());
      buffer_[k].assign(from, from + r.tensors[k].spec().bytes());
    }
    times_ = r.tensors[buffer_.size()].to_vector<int64_t>();
    for (size_t i = 0; i < r.tags.size(); ++i)
      chunk_tags_.push_back({j.at("chunks").at(i).at(0).get<int64_t>(), std::move(r.tags[i])});
  }

  void end_stream() override { late_.end_stream(); }
  void finish() override {
    stop_timer();
    late_.finish();
  }

  void add_metrics(NodeMetrics& m) const override {
    std::lock_guard lock(mutex_);
    m.figures["windows"] = static_cast<double>(windows_);
    late_.add_metrics(m);
    m.figures["rows_unwindowed"] = static_cast<double>(unwindowed_);
    m.figures["rows_held"] = static_cast<double>(times_.size());
    if (options_.idle.count() > 0) m.figures["idle_flushes"] = static_cast<double>(idle_flushes_);
  }

 private:
  std::string who() const { return fmt::format("event_window '{}'", name()); }
  bool by_time() const { return options_.length.count() > 0; }
  int64_t held() const { return static_cast<int64_t>(times_.size()); }

  // Where a chunk's rows start among the rows the window has taken, and its
  // whole-chunk tags: a window's tags are those of its first row's chunk.
  struct ChunkTags {
    int64_t first_row;
    Tags tags;
  };

  void take(const Envelope& m) {
    Visit v(counters(), m);
    std::vector<Envelope> out;
    if (m.barrier) hand_in(m, out);
    if (m.skipped) return put_all(v, out, *out_);
    try {
      Tensors host;
      for (const Tensor& t : m.tensors) host.push_back(t.to_host());
      const int64_t rows = message_rows(host, who());
      const Tags& tags = tags_of(m);
      std::optional<RowTimes> times;
      if (by_time() || (tags.time_ns() && tags.sample_rate())) times = row_times(tags, who());
      std::lock_guard lock(mutex_);
      last_seq_ = m.seq;
      if (idle_timer_) {
        last_arrival_ = Clock::now();
        idle_timer_->arm(last_arrival_ + options_.idle);
      }
      if (times && rows > 0) {
        const int64_t first = times->at(0);
        if (first <= last_time_ || first < emitted_end_)
          return late_.take(who(), 0, host, tags, rows, std::max(last_time_, emitted_end_ - 1));
        last_time_ = times->at(rows - 1);
      }
      append(host, tags, rows, times);
      watermark_ =
          std::max({watermark_, last_time_, tags.get<int64_t>(tag_keys::kWatermark).value_or(kNever)});
      if (by_time()) {
        cut_by_time(out, m.credit, m.seq);
      } else {
        cut_by_count(out, m.credit);
      }
    } catch (const Error& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
    put_all(v, out, *out_);
  }

  // The idle timer's deadline passed: if the stream has brought nothing
  // since, its watermark passes every row held (the end of the last window
  // holding the newest), and the windows holding rows go. Whether any did.
  bool idle() {
    Visit v(counters());
    std::vector<Envelope> out;
    {
      std::lock_guard lock(mutex_);
      const Clock::time_point quiet_until = last_arrival_ + options_.idle;
      if (Clock::now() < quiet_until) {
        idle_timer_->arm(quiet_until);
        return false;
      }
      if (times_.empty() || last_time_ == kNever) return false;
      const int64_t last_start = floor_div(last_time_, options_.every.count()) * options_.every.count();
      watermark_ = std::max(watermark_, last_start + options_.length.count() - 1);
      cut_by_time(out, nullptr, last_seq_);
      if (out.empty()) return false;
      ++idle_flushes_;
    }
    put_all(v, out, *out_);
    return true;
  }

  // Ends the idle timer, if any; whether it emitted windows.
  bool stop_timer() { return idle_timer_ && idle_timer_->stop(); }

  // Checkpoint barrier m.barrier comes before message m: what the window
  // holds now is its state there. The barrier goes on first, numbered as
  // the window's outputs are (a restored run numbers on after it).
  void hand_in(const Envelope& m, std::vector<Envelope>& out) {
    Tensors held;
    std::string state;
    {
      std::lock_guard lock(mutex_);
      out.push_back(Envelope{next_seq_++, {}, true, m.credit, m.born, m.barrier});
      if (ctx_->storing()) {
        held = held_tensors();
        state = state_text(/*with_rows=*/true).dump();
      }
    }
    ctx_->reached(m.barrier, std::move(held), std::move(state));
  }

  // Where its windows stand (and, `with_rows`, how many rows it holds and
  // where each of their chunks starts, with its tags' bytes). Under the lock.
  nlohmann::json state_text(bool with_rows) const {
    nlohmann::json chunks = nlohmann::json::array();
    if (with_rows && !times_.empty())
      for (const ChunkTags& c : chunk_tags_) chunks.push_back({c.first_row, wire::tags_block_bytes(c.tags)});
    return {{"held", with_rows ? held() : 0},
            {"taken", taken_ + (with_rows ? 0 : held())},
            {"skip", skip_},
            {"last_time", last_time_},
            {"emitted_end", emitted_end_},
            {"watermark", watermark_},
            {"next_start", next_start_},
            {"next_seq", numbered_from_ + next_seq_},
            {"windows", windows_},
            {"unwindowed", unwindowed_},
            {"late", late_.counts()},
            {"chunks", std::move(chunks)}};
  }

  // The rows held (none: no tensors): each input tensor's, their times,
  // and their chunks' tags blocks one after another. Under the lock.
  Tensors held_tensors() const {
    Tensors t;
    if (times_.empty()) return t;
    for (size_t k = 0; k < buffer_.size(); ++k) {
      Tensor rows = host_tensor(with_rows(input_[k], held()), who(), /*zeroed=*/false);
      std::memcpy(host_bytes(rows), buffer_[k].data(), buffer_[k].size());
      t.push_back(std::move(rows));
    }
    t.push_back(tensor(times_, Shape{held()}));
    std::vector<const Tags*> tags;
    for (const ChunkTags& c : chunk_tags_) tags.push_back(&c.tags);
    t.push_back(tags_blocks(tags, who()).blocks);
    return t;
  }

  struct Restored {
    nlohmann::json state;
    Tensors tensors;         // as held_tensors() made them; none when it held no rows
    std::vector<Tags> tags;  // each chunk's, read from the last of them
  };
  // Its state in checkpoint `c`, checked against what it takes:
  // CheckpointError naming it (after `at`) where it does not fit.
  Restored restored_state(const Checkpoint& c, const std::string& at) const {
    const std::string where = at + who();
    auto state = c.states.find(name());
    if (state == c.states.end()) throw CheckpointError(error_message(where, "", "its state", "none"));
    Restored r;
    try {
      r.state = nlohmann::json::parse(state->second);
      for (const char* key : {"taken", "skip", "last_time", "emitted_end", "watermark", "next_start",
                              "next_seq", "windows", "unwindowed", "late", "chunks"})
        (void)r.state.at(key);  // restore() reads them: missing, the checkpoint is refused here
      const auto held = r.state.at("held").get<int64_t>();
      auto tensors = c.accumulators.find(name());
      if (held == 0) return r;
      if (tensors == c.accumulators.end())
        throw CheckpointError(error_message(where, "", fmt::format("the {} rows it held", held), "none"));
      r.tensors = tensors->second;
      std::vector<Spec> want;
      for (const Spec& s : input_) want.push_back(with_rows(s, held));
      want.push_back(Spec{DType::S64, Shape{held}});
      std::vector<Spec> got = specs_of(r.tensors);
      if (!got.empty()) got.pop_back();  // the tags blocks, which read_tags_blocks checks
      if (got != want)
        throw CheckpointError(
            error_message(where, "the rows it held", specs_str(want), specs_str(specs_of(r.tensors))));
      std::vector<size_t> bytes;
      for (const auto& chunk : r.state.at("chunks")) bytes.push_back(chunk.at(1).get<size_t>());
      r.tags = read_tags_blocks(r.tensors.back(), bytes, where);
    } catch (const nlohmann::json::exception& e) {
      throw CheckpointError(error_message(where, "its state", "what it wrote", e.what()));
    }
    return r;
  }

  void append(const Tensors& host, const Tags& tags, int64_t rows, const std::optional<RowTimes>& times) {
    if (rows == 0) return;
    chunk_tags_.push_back({taken_ + held(), tags});
    for (size_t k = 0; k < host.size(); ++k) {
      const auto* from = static_cast<const std::byte*>(host[k].host_data());
      buffer_[k].insert(buffer_[k].end(), from, from + static_cast<size_t>(rows) * row_[k]);
    }
    for (int64_t r = 0; r < rows; ++r) times_.push_back(times ? times->at(r) : kNever);
    // By count, rows a window slid past before they came.
    const int64_t skipped = std::min(skip_, held());
    skip_ -= skipped;
    drop(skipped);
  }

  // Forgets the first `n` rows held.
  void drop(int64_t n) {
    if (n <= 0) return;
    for (size_t k = 0; k < buffer_.size(); ++k)
      buffer_[k].erase(buffer_[k].begin(),
                       buffer_[k].begin() + static_cast<ptrdiff_t>(static_cast<size_t>(n) * row_[k]));
    times_.erase(times_.begin(), times_.begin() + n);
    taken_ += n;
    while (chunk_tags_.size() > 1 && chunk_tags_[1].first_row <= taken_) chunk_tags_.pop_front();
  }

  void cut_by_count(std::vector<Envelope>& out, const std::shared_ptr<void>& credit) {
    while (held() >= options_.rows) {
      out.push_back(window(0, options_.rows, credit, {}));
      const int64_t slide = std::min(options_.every_rows, held());
      skip_ += options_.every_rows - slide;
      drop(slide);
    }
  }

  // Emits every window ending at or before the watermark that holds a row.
  void cut_by_time(std::vector<Envelope>& out, const std::shared_ptr<void>& credit, uint64_t seq) {
    const int64_t length = options_.length.count(), every = options_.every.count();
    while (!times_.empty()) {
      // The first window holding the first row held, or a later one.
      next_start_ = std::max(next_start_, (floor_div(times_.front() - length, every) + 1) * every);
      if (next_start_ > times_.front()) {  // windows further apart than long: rows in none
        drop(std::lower_bound(times_.begin(), times_.end(), next_start_) - times_.begin());
        continue;
      }
      if (next_start_ + length - 1 > watermark_) break;
      const int64_t end = next_start_ + length;
      const auto from = std::lower_bound(times_.begin(), times_.end(), next_start_) - times_.begin();
      const auto to = std::lower_bound(times_.begin(), times_.end(), end) - times_.begin();
      if (to - from > options_.rows)
        ctx_->fail(seq,
                   error_message(who(), fmt::format("window [{}, {}) ns", next_start_, end),
                                 fmt::format("at most {} rows (EventWindowOptions::rows)", options_.rows),
                                 fmt::format("{}", to - from)));
      else if (to > from)
        out.push_back(window(from, to - from, credit, std::make_pair(next_start_, end)));
      emitted_end_ = end;
      next_start_ += every;
      drop(std::lower_bound(times_.begin(), times_.end(), next_start_) - times_.begin());
    }
  }

  // Rows [from, from + count) of those held as one window's message.
  Envelope window(int64_t from, int64_t count, const std::shared_ptr<void>& credit,
                  std::optional<std::pair<int64_t, int64_t>> span) {
    Envelope e;
    e.seq = next_seq_++;
    e.born = Clock::now();
    e.credit = credit;
    for (size_t k = 0; k < buffer_.size(); ++k) {
      Tensor t = host_tensor((*output_)[k], who());
      std::memcpy(host_bytes(t), buffer_[k].data() + static_cast<size_t>(from) * row_[k],
                  static_cast<size_t>(count) * row_[k]);
      e.tensors.push_back(std::move(t));
    }
    if (span) e.tensors.push_back(scalar<int64_t>(count));
    // Its rows' chunks' tags joined as the rows are (join_tags): the first
    // row's chunk's whole-chunk tags, the time moved to that row; every tag
    // at a row, moved to where the row lands; what a later chunk says
    // otherwise of itself (its time), at its first row.
    const int64_t first = taken_ + from, end = first + count;
    std::vector<Tags> parts;
    std::vector<int64_t> part_rows;
    for (size_t i = 0; i < chunk_tags_.size(); ++i) {
      const int64_t chunk_end = i + 1 < chunk_tags_.size() ? chunk_tags_[i + 1].first_row : taken_ + held();
      const int64_t lo = std::max(first, chunk_tags_[i].first_row), hi = std::min(end, chunk_end);
      if (lo >= hi) continue;
      parts.push_back(
          slice_tags(chunk_tags_[i].tags, lo - chunk_tags_[i].first_row, hi - chunk_tags_[i].first_row));
      part_rows.push_back(hi - lo);
    }
    Tags tags = join_tags(parts, part_rows);
    if (span) {
      tags.set("window_start_ns", span->first);
      tags.set("window_end_ns", span->second);
    }
    // Its own watermark, not its first row's chunk's; none at the end of the stream.
    if (watermark_ != kNever && watermark_ != std::numeric_limits<int64_t>::max())
      tags.set(std::string(tag_keys::kWatermark), watermark_);
    else
      tags.erase(tag_keys::kWatermark);
    attach_tags(e, std::move(tags));
    ++windows_;
    return e;
  }

  EventWindowOptions options_;
  std::optional<std::vector<Spec>> output_;
  std::vector<Spec> input_;
  std::vector<size_t> row_;  // each input tensor's row bytes
  NodeContext* ctx_ = nullptr;
  flow::broadcast_node<Envelope>* out_ = nullptr;

  mutable std::mutex mutex_;                    // guards what follows
  std::vector<std::vector<std::byte>> buffer_;  // the rows held, per tensor
  std::vector<int64_t> times_;                  // each held row's time (kNever: unknown)
  std::deque<ChunkTags> chunk_tags_;
  int64_t taken_ = 0;  // rows dropped so far: the first held row's number
  int64_t skip_ = 0;   // by count: rows still to drop as they come
  int64_t last_time_ = kNever, emitted_end_ = kNever, watermark_ = kNever;
  int64_t next_start_ = kNever;
  uint64_t last_seq_ = 0, next_seq_ = 0;  // this run's numbers: its input's, its windows'
  uint64_t numbered_from_ = 0;            // where a restored run's window numbers go on from
  LateData late_;
  uint64_t windows_ = 0, unwindowed_ = 0;
  // With `idle`: when the last message came, and how often its timer emitted windows.
  Clock::time_point last_arrival_{};
  uint64_t idle_flushes_ = 0;
  std::optional<DeadlineTimer> idle_timer_;  // last: stopped before what it reads goes
};

}  // namespace

std::unique_ptr<PipelineNode> event_window_node(std::string name, EventWindowOptions options) {
  return std::make_unique<EventWindowNode>(std::move(name), std::move(options));
}

}  // namespace sluice
