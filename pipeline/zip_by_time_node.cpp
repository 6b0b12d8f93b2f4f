// zip_by_time (pipeline/event_time.h): 2 to 4 streams aligned by the times
// of their rows. The first input, the reference, sets the rows of every
// output; each other stream gives each reference row its sample nearest in
// time, within the tolerance (pipeline/detail/time_alignment.h). This node
// holds the chunks until a reference chunk needs wait no longer, then
// aligns it outside its lock.
//
// It takes part in checkpoints without holding any input back: a barrier's
// first arrival (on any input) snapshots what the zip holds, and what the
// inputs the barrier has not yet come on bring until it does is kept with
// the snapshot (their messages before their barrier). A restored zip holds
// the snapshot's chunks again and takes those messages once more, then the
// sources replay from their barriers. Holding an input at its barrier
// until the others reach theirs would not do: the reference's chunks wait
// for the other streams' rows, and each input's barrier comes at its own
// count of messages, so the held input and the waiting reference could
// hold each other's sources' whole capacity for good.

#include <algorithm>
#include <atomic>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/deadline_timer.h>
#include <sluice/pipeline/detail/late_data.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/rows.h>
#include <sluice/pipeline/detail/time_alignment.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

// Another stream's chunks that may still match a reference row, oldest
// first. Shared with the reference chunks being aligned to them.
struct Stream {
  std::deque<std::shared_ptr<const Held>> chunks;
  int64_t last = kNever;  // the time of its newest row
  bool ended = false;     // it brings no more: nothing waits for it
  Clock::time_point heard{};  // when its last message came (or the run started)
};

// A reference chunk that waits no longer, and each other stream's chunks
// with rows that its rows may take: aligned outside the lock, so that the
// next message is taken meanwhile.
struct Job {
  Held ref;
  std::vector<HeldChunks> streams;  // each other stream's
  uint64_t seq = 0;
};

// A chunk as a checkpoint keeps it: which input it came on, its tensors on
// the host and its tags; `in_flight`: a message taken after the snapshot,
// before its input's barrier, to be taken again on restore.
struct Saved {
  size_t input = 0;
  Tensors host;
  Tags tags;
  bool in_flight = false;
};

// A checkpoint under way: its barrier has come on some inputs, not yet on
// every one that still brings messages.
struct Snapshot {
  int64_t number = 0;
  bool storing = false;
  std::vector<bool> passed;   // per input: its barrier has come
  nlohmann::json state;       // where the zip stood when it came first
  std::vector<Saved> chunks;  // held then, and the in-flight messages since
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
    if (options_.idle.count() < 0)
      throw PipelineError(
          error_message(who(), "idle", "0 ns or more", fmt::format("{} ns", options_.idle.count())));
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
    // What a restore's in-flight messages made goes out as the run starts.
    ctx.at_start([this] {
      Visit v(counters());
      std::vector<Job> jobs = std::exchange(restored_jobs_, {});
      send(v, jobs);
    });
    if (options_.idle.count() > 0) {
      for (Stream& s : streams_) s.heard = Clock::now();
      idle_timer_.emplace([this] { return idle(); });
    }
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
    // Stopped first: what it sent after the graph went quiet is waited for
    // with what the streams' end releases.
    const bool timer_sent = stop_timer();
    Visit v(counters());
    std::vector<Job> jobs;
    std::vector<Snapshot> done;
    {
      std::lock_guard lock(mutex_);
      release(jobs, /*ended=*/true);
      complete(done);
    }
    const bool any = !jobs.empty();
    hand_in(done);
    send(v, jobs);
    return any || timer_sent;
  }

  void stop() override { stop_timer(); }

  bool takes_part() const override { return true; }
  bool checkpoints_tensors() const override { return true; }
  uint64_t outputs_numbered_from() const override { return numbered_from_; }

  // The final checkpoint's state, the streams over: nothing it holds can
  // match a row still to come, so none of it is kept.
  std::string checkpoint_state(int64_t /*number*/) override {
    std::lock_guard lock(mutex_);
    nlohmann::json state = where_it_stands();
    state["chunks"] = nlohmann::json::array();
    return state.dump();
  }

  void check(const Checkpoint& c, const std::string& at) const override {
    if (c.number > 0) saved_chunks(c, at);
  }

  void restore(const Checkpoint& c) override {
    if (c.number == 0) return;
    auto [state, chunks] = saved_chunks(c, "");
    std::lock_guard lock(mutex_);
    ref_last_ = state.at("ref_last");
    emitted_ = state.at("emitted");
    numbered_from_ = state.at("next_seq");
    unwaited_ = state.at("unwaited");
    held_full_ = state.at("held_full");
    late_.restore_counts(state.at("late").get<std::vector<uint64_t>>(), who());
    const auto lasts = state.at("stream_last").get<std::vector<int64_t>>();
    for (size_t j = 0; j < streams_.size(); ++j) streams_[j] = Stream{.last = lasts.at(j)};
    pending_.clear();
    for (Saved& saved : chunks) {
      Envelope m;
      m.tensors = std::move(saved.host);
      attach_tags(m, std::move(saved.tags));
      Held h = hold(saved.input, m);
      if (saved.in_flight) {
        arrive(saved.input, std::move(h), restored_jobs_);
      } else if (saved.input == 0) {
        pending_.push_back(std::move(h));
      } else {
        streams_[saved.input - 1].chunks.push_back(std::make_shared<const Held>(std::move(h)));
      }
    }
  }

  // Once every message of an input up to its end has been taken, nothing
  // waits for it any more: without this, a reference holding its whole
  // capacity would wait for a stream that ended until the run did, which,
  // across processes, can be never.
  void input_ended(size_t input, uint64_t messages) override {
    Visit v(counters());
    std::vector<Job> jobs;
    std::vector<Snapshot> done;
    {
      std::lock_guard lock(mutex_);
      ends_[input] = messages;
      if (!ended_input(input)) return;
      release(jobs, /*ended=*/false);
      complete(done);
    }
    hand_in(done);
    send(v, jobs);
  }

  void end_stream() override { late_.end_stream(); }
  void finish() override {
    stop_timer();
    late_.finish();
  }

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
    std::vector<Envelope> marks;
    std::vector<Snapshot> done;
    // Counted however it goes: its input's end is known by the count.
    struct Taken {
      ZipByTimeNode& zip;
      size_t k;
      std::vector<Job>& jobs;
      std::vector<Snapshot>& done;
      ~Taken() {
        std::lock_guard lock(zip.mutex_);
        ++zip.taken_[k];
        if (k > 0 && zip.idle_timer_) zip.streams_[k - 1].heard = Clock::now();
        if (!zip.ended_input(k)) return;
        zip.release(jobs, /*ended=*/false);
        zip.complete(done);
      }
    };
    {
      Taken counted{*this, k, jobs, done};
      if (m.barrier) barrier(k, m, marks, done);
      if (!m.skipped) hold_and_release(k, m, jobs);  // a skipped one (ErrorPolicy::Skip) has nothing to align
    }
    hand_in(done);
    put_all(v, marks, *out_);
    send(v, jobs);
  }

  // Checkpoint barrier m.barrier comes on input k, before message m. Its
  // first arrival snapshots the zip and goes on, numbered as the zip's
  // outputs are (a restored run numbers on after it). Under no lock.
  void barrier(size_t k, const Envelope& m, std::vector<Envelope>& marks, std::vector<Snapshot>& done) {
    std::lock_guard lock(mutex_);
    auto s = std::find_if(snapshots_.begin(), snapshots_.end(),
                          [&](const Snapshot& x) { return x.number == m.barrier; });
    if (s == snapshots_.end()) {
      marks.push_back(Envelope{next_seq_++, {}, true, m.credit, m.born, m.barrier});
      s = snapshots_.insert(snapshots_.end(), snapshot(m.barrier));
    }
    s->passed[k] = true;
    complete(done);
  }

  // What the zip holds and where it stands, for barrier `number`. Under the lock.
  Snapshot snapshot(int64_t number) const {
    Snapshot s{.number = number, .storing = ctx_->storing(), .passed = std::vector<bool>(inputs_.size())};
    if (!s.storing) return s;
    s.state = where_it_stands();
    for (const Held& h : pending_) s.chunks.push_back({0, h.host, tags_of(h.message)});
    for (size_t j = 0; j < streams_.size(); ++j)
      for (const auto& h : streams_[j].chunks) s.chunks.push_back({j + 1, h->host, tags_of(h->message)});
    return s;
  }

  nlohmann::json where_it_stands() const {
    std::vector<int64_t> lasts;
    for (const Stream& s : streams_) lasts.push_back(s.last);
    return {{"ref_last", ref_last_}, {"emitted", emitted_},     {"next_seq", numbered_from_ + next_seq_},
            {"unwaited", unwaited_}, {"held_full", held_full_}, {"late", late_.counts()},
            {"stream_last", lasts}};
  }

  // Whether input k brings nothing more (its last message taken). Under the lock.
  bool over(size_t k) const { return ends_[k] && taken_[k] >= *ends_[k]; }

  // Moves out the snapshots whose barrier has come on every input that
  // still brings messages. Under the lock.
  void complete(std::vector<Snapshot>& done) {
    for (auto s = snapshots_.begin(); s != snapshots_.end();) {
      bool all = true;
      for (size_t k = 0; k < inputs_.size(); ++k) all = all && (s->passed[k] || over(k));
      if (!all) {
        ++s;
        continue;
      }
      done.push_back(std::move(*s));
      s = snapshots_.erase(s);
    }
  }

  // Hands complete snapshots in: the chunks' tensors one after another,
  // then their tags blocks; the state lists the chunks. Under no lock.
  void hand_in(std::vector<Snapshot>& done) {
    for (Snapshot& s : done) {
      if (!s.storing) {
        ctx_->reached(s.number, {}, {});
        continue;
      }
      Tensors tensors;
      std::vector<const Tags*> tags;
      for (const Saved& c : s.chunks) {
        tensors.insert(tensors.end(), c.host.begin(), c.host.end());
        tags.push_back(&c.tags);
      }
      TagsBlocks blocks = tags_blocks(tags, who());
      nlohmann::json chunks = nlohmann::json::array();
      for (size_t i = 0; i < s.chunks.size(); ++i)
        chunks.push_back({s.chunks[i].input, blocks.bytes[i], s.chunks[i].in_flight});
      s.state["chunks"] = std::move(chunks);
      if (!s.chunks.empty()) tensors.push_back(std::move(blocks.blocks));
      ctx_->reached(s.number, std::move(tensors), s.state.dump());
    }
  }

  // The state and chunks of checkpoint `c`, checked against the inputs:
  // CheckpointError naming the zip (after `at`) where they do not fit.
  std::pair<nlohmann::json, std::vector<Saved>> saved_chunks(const Checkpoint& c,
                                                             const std::string& at) const {
    const std::string where = at + who();
    auto state = c.states.find(name());
    if (state == c.states.end()) throw CheckpointError(error_message(where, "", "its state", "none"));
    std::pair<nlohmann::json, std::vector<Saved>> r;
    try {
      r.first = nlohmann::json::parse(state->second);
      for (const char* key : {"ref_last", "emitted", "next_seq", "unwaited", "held_full", "late"})
        (void)r.first.at(key);  // restore() reads them: missing, the checkpoint is refused here
      const nlohmann::json& chunks = r.first.at("chunks");
      if (r.first.at("stream_last").size() != streams_.size())
        throw CheckpointError(error_message(where, "its state", fmt::format("{} inputs", inputs_.size()),
                                            fmt::format("{}", r.first.at("stream_last").size() + 1)));
      if (chunks.empty()) return r;
      auto tensors = c.accumulators.find(name());
      if (tensors == c.accumulators.end())
        throw CheckpointError(
            error_message(where, "", fmt::format("the {} chunks it held", chunks.size()), "none"));
      const Tensors& t = tensors->second;
      size_t next = 0;
      std::vector<size_t> bytes;
      for (const auto& chunk : chunks) {
        const auto input = chunk.at(0).get<size_t>();
        if (input >= inputs_.size())
          throw CheckpointError(error_message(
              where, "a chunk's input", fmt::format("below {}", inputs_.size()), fmt::format("{}", input)));
        Saved& saved = r.second.emplace_back(Saved{.input = input, .in_flight = chunk.at(2).get<bool>()});
        const size_t n = inputs_[input].size();
        if (next + n >= t.size() ||
            specs_of(Tensors(t.begin() + static_cast<ptrdiff_t>(next),
                             t.begin() + static_cast<ptrdiff_t>(next + n))) != inputs_[input])
          throw CheckpointError(error_message(where,
                                              fmt::format("chunk {} of input {}", r.second.size() - 1, input),
                                              specs_str(inputs_[input]), "tensors that do not fit it"));
        saved.host.assign(t.begin() + static_cast<ptrdiff_t>(next),
                          t.begin() + static_cast<ptrdiff_t>(next + n));
        next += n;
        bytes.push_back(chunk.at(1).get<size_t>());
      }
      if (next + 1 != t.size())
        throw CheckpointError(
            error_message(where, "its tensors", fmt::format("{}", next + 1), fmt::format("{}", t.size())));
      std::vector<Tags> tags = read_tags_blocks(t.back(), bytes, where);
      for (size_t i = 0; i < tags.size(); ++i) r.second[i].tags = std::move(tags[i]);
    } catch (const nlohmann::json::exception& e) {
      throw CheckpointError(error_message(where, "its state", "what it wrote", e.what()));
    }
    return r;
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
      // Before its barrier on this input: in flight for the checkpoints under way.
      for (Snapshot& s : snapshots_)
        if (s.storing && !s.passed[k])
          s.chunks.push_back({k, h.host, tags_of(h.message), /*in_flight=*/true});
      arrive(k, std::move(h), jobs);
    } catch (const Error& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
  }

  // Chunk h of input k is taken: held (or late), and the references that
  // need wait no longer made jobs. Under the lock.
  void arrive(size_t k, Held h, std::vector<Job>& jobs) {
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

  // The idle timer's deadline passed: the reference chunks waiting only
  // for streams that have brought nothing for the idle time go without
  // them. Whether any did.
  bool idle() {
    Visit v(counters());
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mutex_);
      release(jobs, /*ended=*/false);
    }
    send(v, jobs);
    return !jobs.empty();
  }

  // Ends the idle timer, if any; whether it sent anything.
  bool stop_timer() { return idle_timer_ && idle_timer_->stop(); }

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
    const Clock::time_point now = idle_timer_ ? Clock::now() : Clock::time_point{};
    while (!pending_.empty()) {
      const Held& c = pending_.front();
      const int64_t needed = c.last + tolerance();
      bool waits = false, unwaited = false;
      std::optional<Clock::time_point> idle_at;  // when the first stream it waits for turns idle
      for (const Stream& s : streams_) {
        if (ended || s.ended || (s.last != kNever && s.last >= needed)) continue;
        if (ref_last_ - needed >= options_.lateness.count() ||
            (idle_timer_ && now - s.heard >= options_.idle)) {
          unwaited = true;
          continue;
        }
        waits = true;
        if (idle_timer_)
          idle_at = std::min(idle_at.value_or(Clock::time_point::max()), s.heard + options_.idle);
      }
      if (waits) {
        if (idle_at) idle_timer_->arm(*idle_at);
        // Holding its source's whole capacity, the reference brings no more
        // until the others catch up: backpressure, said once.
        if (ctx_ && pending_.size() >= ctx_->capacity() && !held_full_++)
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
    for (size_t k = 1; k < inputs_.size(); ++k) {
      const uint64_t matches =
          align_by_time(c, job.streams[k - 1], inputs_[k], options_.tolerance.count(), who(), e.tensors);
      matched_rows_ += matches;
      unmatched_rows_ += static_cast<uint64_t>(c.rows) - matches;
    }
    Tags tags = tags_of(c.message);
    tags.set(std::string(tag_keys::kWatermark), c.last);
    attach_tags(e, std::move(tags));
    return e;
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
  uint64_t next_seq_ = 0;      // this run's numbers for its outputs
  uint64_t numbered_from_ = 0;      // where a restored run's go on from
  std::deque<Snapshot> snapshots_;  // checkpoints under way
  std::vector<Job> restored_jobs_;  // made by a restore's in-flight messages, sent as the run starts
  LateData late_;
  uint64_t unwaited_ = 0, held_full_ = 0;
  std::atomic<uint64_t> matched_rows_{0},
      unmatched_rows_{0};  // counted as jobs are aligned, outside the lock
  std::optional<DeadlineTimer> idle_timer_;  // last: stopped before what it reads goes
};

}  // namespace

std::unique_ptr<PipelineNode> zip_by_time_node(std::string name, ZipOptions options) {
  return std::make_unique<ZipByTimeNode>(std::move(name), std::move(options));
}

}  // namespace sluice
