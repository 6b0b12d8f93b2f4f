// A batched stage (StageOptions::batch, Nx.Serving's batch_size and
// batch_timeout): messages gather into a batch until it holds `size` of
// them or `timeout` has passed since the first one came; the compiled
// function then runs once on the batch, zero-padded to `size` rows, and
// each message goes on with its own row of every output.
//
// At most `concurrency` batches run at once (Nx.Serving's partitions,
// Triton's model instances; 1 by default). A batch whose timeout passes
// while every runner is busy is not flushed: it keeps filling until a
// runner is free (or it is full), since running it early would only share
// the cores with the batch that is running. A request then waits at most
// its timeout and two batches' compute (the one running and its own) when
// the stage keeps up, and a stage that falls behind runs full batches.
//
// Messages are gathered in sequence order (a sequencer, then a serial
// node): gathered as they come, a late message could sit in a pending batch
// while the messages after it, done, wait for it at the next sequencer
// holding all of the source's credit, so that nothing could fill the batch
// until its timeout. A batch, full or flushed by the node's timer (DeadlineTimer), is
// handed to a runner node, so that batches run on the graph's threads and
// gathering goes on meanwhile; a full batch that finds every runner busy
// waits in a queue, which the next batch to end takes from. While a batch
// is pending or queued the graph's wait is reserved, so that the run does
// not end before it has run.

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/deadline_timer.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/rows.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class BatcherNode : public PipelineNode {
 public:
  BatcherNode(std::string name, std::function<Function(const std::vector<Spec>&)> tracer,
              StageOptions options)
      : PipelineNode(std::move(name)), options_(std::move(options)) {
    const BatchOptions& b = options_.batch;
    if (b.size < 1)
      throw PipelineError(error_message(who(), "batch.size", "at least 1 (0: not batched)", b.size));
    if (b.timeout.count() <= 0)
      throw PipelineError(
          error_message(who(), "batch.timeout", "more than 0 us", fmt::format("{} us", b.timeout.count())));
    if (options_.input.empty())
      throw PipelineError(error_message(
          who(), "input", "the specs of one message (a batched stage traces its function on them)", "none"));
    if (!options_.acc.empty())
      throw PipelineError(error_message(who(), "acc", "none (a batched stage takes no accumulator)",
                                        fmt::format("{} tensors", options_.acc.size())));
    if (options_.concurrency < 1)
      throw PipelineError(
          error_message(who(), "concurrency", "at least 1 (batches run at once)", options_.concurrency));
    for (const Spec& s : options_.input) {
      std::vector<int64_t> dims{b.size};
      dims.insert(dims.end(), s.shape.dims().begin(), s.shape.dims().end());
      batch_input_.push_back({s.dtype, Shape(std::move(dims))});
    }
    // Traced now for its specs; compiled when the run starts, on the device
    // of the process that runs it.
    function_ = tracer(step_parameters(batch_input_, {}, who()));
    const std::vector<Spec> out = Step::outputs_of(function_, batch_input_, {}, who());
    for (size_t k = 0; k < out.size(); ++k) {
      if (out[k].shape.rank() == 0 || out[k].shape.dim(0) != b.size)
        throw PipelineError(error_message(who(), fmt::format("output {}", k),
                                          fmt::format("a leading batch dimension of {}", b.size), out[k]));
      std::vector<int64_t> dims(out[k].shape.dims().begin() + 1, out[k].shape.dims().end());
      row_output_.push_back({out[k].dtype, Shape(std::move(dims))});
    }
  }

  ~BatcherNode() override { end_timer(); }

  const char* kind() const override { return "stage"; }
  std::optional<std::vector<Spec>> input_spec() const override { return options_.input; }
  std::optional<std::vector<Spec>> output_spec() const override { return row_output_; }
  void resolve(const std::vector<Spec>& inputs) override {
    if (inputs != options_.input)
      throw PipelineError(
          error_message(who(), "the specs its inputs produce", specs_str(options_.input), specs_str(inputs)));
    step_.emplace(function_, batch_input_, Tensors{}, options_.device.resolve(), who());
  }
  bool needs_order() const override { return true; }
  bool reorders() const override { return !options_.ordered; }

  NodePorts join(NodeContext& ctx) override {
    ctx_ = &ctx;
    graph_ = &ctx.graph();
    if (ctx.capacity() < static_cast<size_t>(options_.batch.size))
      logger().warn(
          "{}: a source's capacity ({}) is below the batch size ({}): its batches wait for the timeout",
          who(), ctx.capacity(), options_.batch.size);
    out_ = ctx.own(std::make_shared<flow::broadcast_node<Envelope>>(ctx.graph()));
    runner_ = ctx.own(std::make_shared<flow::function_node<std::shared_ptr<Batch>, flow::continue_msg>>(
        ctx.graph(), flow::unlimited, [this](const std::shared_ptr<Batch>& b) {
          run_batch(*b);
          ended();
          return flow::continue_msg();
        }));
    auto* gather = ctx.own(std::make_shared<flow::function_node<Envelope, flow::continue_msg>>(
        ctx.graph(), flow::serial, [this](const Envelope& m) {
          take(m);
          return flow::continue_msg();
        }));
    timer_.emplace([this] { return timed_out(); });
    return {gather, out_};
  }

  // The run is stopping: the pending batch is dropped (its messages were
  // not going to be finished with), and so is what comes later.
  void stop() override {
    std::deque<std::shared_ptr<Batch>> dropped;
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      dropped.swap(queued_);
      if (pending_) dropped.push_back(std::move(pending_));
    }
    for (size_t i = 0; i < dropped.size(); ++i) graph_->release_wait();
    dropped.clear();
    end_timer();
  }
  void finish() override { end_timer(); }

  void update(StageUpdate, bool) override {
    throw PipelineError(error_message("update of " + who(), "a batched stage takes no live updates", "", ""));
  }

  void add_metrics(NodeMetrics& m) const override {
    double batches = static_cast<double>(batches_.load());
    double mean = batches > 0 ? static_cast<double>(batched_.load()) / batches : 0;
    m.figures["batches"] = batches;
    m.figures["batch_size_mean"] = mean;
    m.figures["batch_fill"] = mean / static_cast<double>(options_.batch.size);
    m.figures["queue_wait_p50_us"] = queue_wait_.percentile(0.5);
    m.figures["queue_wait_p99_us"] = queue_wait_.percentile(0.99);
    m.figures["timeouts"] = static_cast<double>(timeouts_.load());
  }

 private:
  // A message waiting for its batch, counted in when it came.
  struct Pending {
    Envelope message;
    Visit visit;
  };
  struct Batch {
    std::vector<Pending> items;
    Clock::time_point first;  // when its first message came
  };

  std::string who() const { return "stage '" + name() + "'"; }

  void take(const Envelope& m) {
    Visit v(counters(), m);
    if (m.skipped) {
      Envelope out = m;
      v.leave(out);
      out_->try_put(out);
      return;
    }
    // A message that does not fit its row fails alone, not its batch.
    std::vector<Spec> found;
    for (const Tensor& t : m.tensors) found.push_back(t.spec());
    if (found != options_.input) {
      ctx_->fail(m.seq, "expected a message of " + specs_str(options_.input) + ", found " + specs_str(found));
      Envelope out{m.seq, {}, true, m.credit, m.born, m.barrier};
      v.leave(out);
      out_->try_put(out);
      return;
    }
    std::shared_ptr<Batch> full;
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;  // dropped, as the pending batch was
      if (!pending_) {
        // Released once the batch is handed to the runner, or dropped by stop().
        graph_->reserve_wait();
        pending_ = std::make_shared<Batch>();
        pending_->items.reserve(static_cast<size_t>(options_.batch.size));
        pending_->first = v.start;
        first = true;
      }
      pending_->items.push_back({m, v});
      if (pending_->items.size() == static_cast<size_t>(options_.batch.size)) {
        if (running_ < options_.concurrency) {
          ++running_;
          full.swap(pending_);
        } else {
          queued_.push_back(std::move(pending_));
        }
      }
    }
    if (full) {
      hand_off(std::move(full));
    } else if (first) {
      timer_->arm(v.start + options_.batch.timeout);
    }
  }

  // The runner's task now keeps the graph's wait open in the batch's place.
  void hand_off(std::shared_ptr<Batch> b) {
    runner_->try_put(std::move(b));
    graph_->release_wait();
  }

  // A batch ended: its runner takes the oldest batch waiting, a full one
  // queued or the pending one once its timeout has passed.
  void ended() {
    std::shared_ptr<Batch> next;
    {
      std::lock_guard lock(mutex_);
      --running_;
      if (!queued_.empty()) {
        next = std::move(queued_.front());
        queued_.pop_front();
      } else if (pending_ && Clock::now() >= pending_->first + options_.batch.timeout) {
        next.swap(pending_);
        timeouts_.fetch_add(1, std::memory_order_relaxed);
      }
      if (next) ++running_;
    }
    if (next) hand_off(std::move(next));
  }

  // The timer's deadline passed: the pending batch goes, if it is due (a
  // batch handed off since leaves a later one, for which it is armed
  // again) and a runner is free (else it fills on, and the first runner to
  // end takes it). Whether it handed one off.
  bool timed_out() {
    std::shared_ptr<Batch> late;
    {
      std::lock_guard lock(mutex_);
      if (!pending_) return false;
      const Clock::time_point due = pending_->first + options_.batch.timeout;
      if (Clock::now() < due) {
        timer_->arm(due);
        return false;
      }
      if (running_ >= options_.concurrency) return false;
      late.swap(pending_);
      ++running_;
      timeouts_.fetch_add(1, std::memory_order_relaxed);
    }
    hand_off(std::move(late));
    return true;
  }

  void end_timer() {
    if (timer_) timer_->stop();
  }

  // The rows of the batch's inputs, zero-padded to `size` rows, on the host.
  Tensors assemble(const std::vector<Pending>& batch) const {
    Tensors in;
    for (size_t k = 0; k < batch_input_.size(); ++k) {
      size_t row = static_cast<size_t>(options_.input[k].bytes());
      Tensor assembled = host_tensor(batch_input_[k], who());
      std::byte* data = host_bytes(assembled);
      for (size_t i = 0; i < batch.size(); ++i) {
        Tensor t = batch[i].message.tensors[k].to_host();
        if (row > 0) std::memcpy(data + i * row, t.host_data(), row);
      }
      in.push_back(std::move(assembled));
    }
    return in;
  }

  // Runs one batch and sends each message on with its rows, or failed.
  void run_batch(Batch& b) {
    std::vector<Pending>& batch = b.items;
    const Clock::time_point start = Clock::now();
    for (const Pending& p : batch)
      queue_wait_.record(std::chrono::duration<double, std::micro>(start - p.visit.start).count());
    batches_.fetch_add(1, std::memory_order_relaxed);
    batched_.fetch_add(batch.size(), std::memory_order_relaxed);
    std::vector<Tensors> rows(batch.size());
    std::string error;
    std::exception_ptr cause;
    try {
      Tensors local;
      Tensors outputs = step_->run(step_->place(assemble(batch)), local);
      for (size_t k = 0; k < outputs.size(); ++k) {
        Tensor host_out = outputs[k].to_host();  // waits: a failure is this batch's
        const auto* data = static_cast<const std::byte*>(host_out.host_data());
        size_t row = static_cast<size_t>(row_output_[k].bytes());
        // Padding rows are never copied out.
        for (size_t i = 0; i < batch.size(); ++i)
          rows[i].push_back(tensor_from_bytes(row_output_[k], data + i * row, host()));
      }
    } catch (const std::exception& e) {
      error = e.what();
      cause = std::current_exception();
    }
    counters().busy_ns.fetch_add(
        static_cast<uint64_t>(std::chrono::nanoseconds(Clock::now() - start).count()),
        std::memory_order_relaxed);
    for (size_t i = 0; i < batch.size(); ++i) {
      const Envelope& in = batch[i].message;
      Envelope out{in.seq, std::move(rows[i]), false, in.credit, in.born, in.barrier};
      // Each message goes on with its own tags, as with its own rows.
      if (error.empty()) {
        try {
          stage_tags(options_.tags, options_.set_tags, in, out);
        } catch (const std::exception& e) {
          ctx_->fail(in.seq, e.what(), std::current_exception());
          out.skipped = true;
          out.tensors.clear();
        }
      } else {
        ctx_->fail(in.seq, error, cause);
        out.skipped = true;
        out.tensors.clear();
      }
      // The batch's time is counted once above, not once per message.
      batch[i].visit.start = Clock::now();
      batch[i].visit.leave(out);
      out_->try_put(out);
    }
  }

  StageOptions options_;
  std::vector<Spec> batch_input_, row_output_;
  Function function_;          // traced for batches of batch_input_
  std::optional<Step> step_;   // compiled when the run starts (resolve)

  NodeContext* ctx_ = nullptr;
  flow::graph* graph_ = nullptr;
  flow::broadcast_node<Envelope>* out_ = nullptr;
  flow::function_node<std::shared_ptr<Batch>, flow::continue_msg>* runner_ = nullptr;

  std::mutex mutex_;                // guards what follows
  std::shared_ptr<Batch> pending_;  // null: none
  std::deque<std::shared_ptr<Batch>> queued_;  // full, waiting for a runner
  int running_ = 0;                            // batches handed to the runner and not ended
  bool stopped_ = false;                       // the run is stopping: nothing more is batched

  std::atomic<uint64_t> batches_{0}, batched_{0}, timeouts_{0};
  LatencyHistogram queue_wait_;  // a message's arrival to its batch's run
  std::optional<DeadlineTimer> timer_;  // last: stopped before what it reads goes
};

}  // namespace

std::unique_ptr<PipelineNode> batched_stage_node(std::string name,
                                                 std::function<Function(const std::vector<Spec>&)> tracer,
                                                 StageOptions options) {
  return std::make_unique<BatcherNode>(std::move(name), std::move(tracer), std::move(options));
}

}  // namespace sluice
