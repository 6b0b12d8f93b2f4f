// while_loop and scan (and so fori_loop): the body, and a while_loop's
// condition, are programs of their own (cuda_program.h).
//
// A loop is a CUDA graph with a conditional WHILE node, so that the GPU runs
// step after step with no host in between. Its body graph holds the body's
// steps (and a while_loop's condition, computed on the new carry), then a
// kernel of loop_graph.h that moves the new carry back to where the body
// reads it (and a scan's y out to its row, the next x in) and sets the
// node's condition on the device (a scan's: a row left; a while_loop's: its
// condition's result). The graph is
// made where the loop is queued, by capturing what it queues: on a capture
// of the loop's stream that this step opens, then instantiates and
// launches, or, for a loop inside another loop's body, on the capture of
// that body, whose graph gets the inner loop as a node.
//
// A scan of few steps, a loop with more than kMaxLoopCopies carries and
// rows, and a loop whose body holds work that capture refuses (the log
// says so, once per loop) have their steps queued from the host instead,
// as the host runs its loops (devices/cpu/loop.h): the carry
// double-buffered between the loop's results and spare buffers, step i
// reading row i of each xs in place and writing each y straight into row i
// of its stacked result; a scan's steps all queued at once, a while_loop's
// each after its condition is read on the host (a copy of one byte and a
// wait for the stream).

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include <sluice/base/detail/log.h>
#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_program.h>
#include <sluice/devices/cuda/loop_graph.h>
#include <sluice/ops/detail/loop_attrs.h>

namespace sluice::cuda {
namespace {

constexpr size_t kAlignment = 256;
size_t aligned(int64_t bytes) { return (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + kAlignment - 1) / kAlignment * kAlignment; }

char* row(void* base, size_t row_bytes, int64_t i) { return static_cast<char*>(base) + row_bytes * static_cast<size_t>(i); }

// Scans shorter than this queue their steps: making and launching a graph
// costs about what queuing this many small steps does.
constexpr int64_t kGraphMinimumSteps = 16;

// A graph made for one run of a loop, destroyed once the run is done.
struct RunGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~RunGraph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

class LoopStep final : public CudaUnit {
 public:
  LoopStep(const Node& node, CudaDevice& device)
      : while_(node.op == Op::WhileLoop),
        carries_(static_cast<size_t>(node.attrs.loop->carries)),
        xs_(static_cast<size_t>(node.attrs.loop->xs)),
        length_(node.attrs.loop->length),
        reverse_(node.attrs.loop->reverse),
        body_(node.attrs.loop->body, device) {
    const LoopAttrs& attrs = *node.attrs.loop;
    if (while_) cond_.emplace(attrs.cond, device);
    const std::vector<Spec> results = attrs.result_specs();
    for (size_t c = 0; c < carries_; ++c) {
      carry_bytes_.push_back(static_cast<size_t>(results[c].bytes()));
      spare_offset_.push_back(spare_bytes_);
      spare_bytes_ += aligned(results[c].bytes());
    }
    const std::vector<Spec>& params = attrs.body.inputs();
    for (size_t j = carries_; j < carries_ + xs_; ++j) x_row_bytes_.push_back(static_cast<size_t>(params[j].bytes()));
    const std::vector<Spec> outputs = attrs.body.output_specs();
    for (size_t j = carries_; j < outputs.size(); ++j) y_row_bytes_.push_back(static_cast<size_t>(outputs[j].bytes()));
    scratch_bytes_ = aligned(body_.lowered().scratch_bytes);
    if (cond_) scratch_bytes_ = std::max(scratch_bytes_, aligned(cond_->lowered().scratch_bytes));
    // A graph's rows: each x and y of the step runs through a buffer of its own.
    for (size_t row_bytes : x_row_bytes_) {
      stage_offset_.push_back(stage_bytes_);
      stage_bytes_ += aligned(static_cast<int64_t>(row_bytes));
    }
    for (size_t row_bytes : y_row_bytes_) {
      stage_offset_.push_back(stage_bytes_);
      stage_bytes_ += aligned(static_cast<int64_t>(row_bytes));
    }
    const size_t copies = carries_ + x_row_bytes_.size() + y_row_bytes_.size();
    graphs_ = copies >= 1 && copies <= static_cast<size_t>(kMaxLoopCopies) &&
              (while_ || length_ >= kGraphMinimumSteps);
    if (graphs_)
      check(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking), device.who(),
            "loop: a stream");
  }
  ~LoopStep() override {
    if (capture_stream_) cudaStreamDestroy(capture_stream_);
  }
  LoopStep(const LoopStep&) = delete;
  LoopStep& operator=(const LoopStep&) = delete;

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (graphs_ && !graph_refused_.load(std::memory_order_relaxed) && enqueue_graph(ctx, in, out)) return;
    enqueue_steps(ctx, in, out);
  }

 private:
  // The loop as a graph (the file's comment); false where capture refused
  // it in a capture of its own, so that nothing was queued.
  bool enqueue_graph(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(ctx.stream, &status), ctx.device.who(), "loop: asking about capture");
    const bool own = status == cudaStreamCaptureStatusNone;
    if (own)
      check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeRelaxed), ctx.device.who(),
            "loop: capturing");
    auto run = std::make_shared<RunGraph>();
    try {
      capture(ctx, in, out);
      if (own) {
        check(cudaStreamEndCapture(ctx.stream, &run->graph), ctx.device.who(), "loop: ending its capture");
        check(cudaGraphInstantiate(&run->exec, run->graph, 0), ctx.device.who(),
              "loop: instantiating its graph");
      }
    } catch (const Error& e) {
      if (!own) throw;  // the enclosing loop's capture fails, and it queues its steps
      if (!run->graph) {
        cudaGraph_t partial = nullptr;
        cudaStreamEndCapture(ctx.stream, &partial);
        if (partial) cudaGraphDestroy(partial);
      }
      cudaGetLastError();  // capture's errors are not the next step's
      graph_refused_.store(true, std::memory_order_relaxed);
      logger().warn("{}: a {} whose body CUDA graph capture refuses ({}): its steps are queued from the host",
                    ctx.device.who(), while_ ? "while_loop" : "scan", e.what());
      return false;
    }
    if (own) {
      check(cudaGraphLaunch(run->exec, ctx.stream), ctx.device.who(), "loop: launching its graph");
      ctx.keep.push_back(std::move(run));
    }
    return true;
  }

  // Queues, on ctx.stream's capture, the loop's start and its conditional
  // node, whose body is captured from capture_stream_.
  void capture(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const {
    const std::string& who = ctx.device.who();
    // The spare carries, the rows' buffers, the bodies' scratch, a
    // while_loop's condition and the step counter.
    std::shared_ptr<void> memory =
        ctx.device.allocate(spare_bytes_ + stage_bytes_ + scratch_bytes_ + 2 * kAlignment);
    ctx.keep.push_back(memory);
    char* const spare = static_cast<char*>(memory.get());
    char* const stages = spare + spare_bytes_;
    char* const scratch = stages + stage_bytes_;
    auto* const pred = reinterpret_cast<uint8_t*>(scratch + scratch_bytes_);
    auto* const state = reinterpret_cast<int64_t*>(scratch + scratch_bytes_ + kAlignment);
    const size_t xs = x_row_bytes_.size(), ys = y_row_bytes_.size();

    // The body reads the carry from the results and x from its buffers, and
    // writes the new carry to the spare buffers and y to its buffers.
    std::vector<void*> args(in.begin(), in.end()), dests(carries_ + ys), cond_args(in.begin(), in.end());
    LoopCopies copies;
    auto add = [&](LoopCopy::Kind kind, void* to, const void* from, size_t bytes) {
      copies.copy[copies.count++] = {kind, to, from, static_cast<int64_t>(bytes)};
      copies.largest = std::max(copies.largest, static_cast<int64_t>(bytes));
    };
    for (size_t c = 0; c < carries_; ++c) {
      args[c] = out[c];
      dests[c] = spare + spare_offset_[c];
      cond_args[c] = dests[c];
      add(LoopCopy::Kind::Carry, out[c], in[c],
          carry_bytes_[c]);  // before the first step: from the loop's input
    }
    for (size_t j = 0; j < xs; ++j) {
      args[carries_ + j] = stages + stage_offset_[j];
      add(LoopCopy::Kind::FromNextRow, args[carries_ + j], in[carries_ + j], x_row_bytes_[j]);
    }
    for (size_t j = 0; j < ys; ++j) {
      dests[carries_ + j] = stages + stage_offset_[xs + j];
      add(LoopCopy::Kind::ToRow, out[carries_ + j], dests[carries_ + j], y_row_bytes_[j]);
    }
    void* const pred_dest[] = {pred};

    // The start: the counters at 0, the carry and the first row in place, the first decision.
    cudaGraph_t graph = nullptr;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamGetCaptureInfo(ctx.stream, &status, nullptr, &graph), who, "loop: its capture");
    cudaGraphConditionalHandle handle = 0;
    check(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0), who, "loop: its condition");
    check(enqueue_loop_start(state, ctx.stream), who, "loop: its start");
    const LoopDecision first{nullptr, false, handle}, next{while_ ? pred : nullptr, !while_, handle};
    check(enqueue_loop_copies(copies, state, length_, reverse_, true, while_ ? nullptr : &first, ctx.stream),
          who, "loop: its start");
    if (while_) {
      cond_->enqueue_into(ctx, args, pred_dest, scratch);
      check(enqueue_loop_decision(state, length_, {pred, false, handle}, ctx.stream), who, "loop: its start");
    }

    // The conditional node, after the start.
    const cudaGraphNode_t* after = nullptr;
    size_t count = 0;
    check(cudaStreamGetCaptureInfo(ctx.stream, &status, nullptr, &graph, &after, nullptr, &count), who,
          "loop: its capture");
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node = nullptr;
    check(cudaGraphAddNode(&node, graph, after, nullptr, count, &params), who, "loop: its conditional node");
    check(
        cudaStreamUpdateCaptureDependencies(ctx.stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies),
        who, "loop: its capture");

    // The body graph: a step, then the copies and the next decision.
    check(cudaStreamBeginCaptureToGraph(capture_stream_, params.conditional.phGraph_out[0], nullptr, nullptr,
                                        0, cudaStreamCaptureModeRelaxed),
          who, "loop: capturing its body");
    StepContext body{ctx.device, capture_stream_, ctx.keep};
    try {
      body_.enqueue_into(body, args, dests, scratch);
      if (while_) cond_->enqueue_into(body, cond_args, pred_dest, scratch);
      for (size_t c = 0; c < carries_; ++c) copies.copy[c].from = dests[c];  // the new carry back
      check(enqueue_loop_copies(copies, state, length_, reverse_, false, &next, capture_stream_), who,
            "loop: a step");
    } catch (...) {
      cudaGraph_t body_graph = nullptr;
      cudaStreamEndCapture(capture_stream_, &body_graph);  // the conditional node owns it
      throw;
    }
    cudaGraph_t body_graph = nullptr;
    check(cudaStreamEndCapture(capture_stream_, &body_graph), who, "loop: ending its body's capture");
  }

  // The loop's steps queued from the host (the file's comment).
  void enqueue_steps(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const {
    // The spare carries, the bodies' scratch and a while_loop's condition.
    std::shared_ptr<void> memory = ctx.device.allocate(spare_bytes_ + scratch_bytes_ + kAlignment);
    ctx.keep.push_back(memory);
    char* const spare = static_cast<char*>(memory.get());
    char* const scratch = spare + spare_bytes_;
    char* const pred = scratch + scratch_bytes_;
    std::vector<void*> args(in.begin(), in.end());  // the carry, one row of each xs, the captured values
    std::vector<void*> dests(carries_ + y_row_bytes_.size());
    auto carry_dest = [&](size_t c, bool to_result) -> void* { return to_result ? out[c] : spare + spare_offset_[c]; };
    if (!while_) {
      if (length_ == 0) {
        for (size_t c = 0; c < carries_; ++c) copy(ctx, out[c], in[c], carry_bytes_[c]);
        return;
      }
      // Steps alternate between the result and the spare buffer: the last one writes the result.
      bool to_result = (length_ - 1) % 2 == 0;
      for (int64_t step = 0; step < length_; ++step) {
        const int64_t i = reverse_ ? length_ - 1 - step : step;
        for (size_t j = 0; j < xs_; ++j) args[carries_ + j] = row(in[carries_ + j], x_row_bytes_[j], i);
        for (size_t c = 0; c < carries_; ++c) dests[c] = carry_dest(c, to_result);
        for (size_t j = 0; j < y_row_bytes_.size(); ++j) dests[carries_ + j] = row(out[carries_ + j], y_row_bytes_[j], i);
        body_.enqueue_into(ctx, args, dests, scratch);
        for (size_t c = 0; c < carries_; ++c) args[c] = dests[c];
        to_result = !to_result;
      }
      return;
    }
    void* const pred_dest[] = {pred};
    bool to_result = true;
    for (;;) {
      cond_->enqueue_into(ctx, args, pred_dest, scratch);
      uint8_t go = 0;
      check(cudaMemcpyAsync(&go, pred, 1, cudaMemcpyDeviceToHost, ctx.stream), ctx.device.who(),
            "while_loop: reading its condition");
      check(cudaStreamSynchronize(ctx.stream), ctx.device.who(), "while_loop: waiting for its condition");
      if (!go) break;
      for (size_t c = 0; c < carries_; ++c) dests[c] = carry_dest(c, to_result);
      body_.enqueue_into(ctx, args, std::span(dests).first(carries_), scratch);
      for (size_t c = 0; c < carries_; ++c) args[c] = dests[c];
      to_result = !to_result;
    }
    for (size_t c = 0; c < carries_; ++c)
      if (args[c] != out[c]) copy(ctx, out[c], args[c], carry_bytes_[c]);
  }

  static void copy(StepContext& ctx, void* to, const void* from, size_t bytes) {
    if (bytes != 0 && to != from)
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, ctx.stream), ctx.device.who(),
            "copying a loop's carry");
  }

  bool while_;
  size_t carries_, xs_;
  int64_t length_;
  bool reverse_;
  CudaProgram body_;
  std::optional<CudaProgram> cond_;
  std::vector<size_t> carry_bytes_, spare_offset_, x_row_bytes_, y_row_bytes_;
  size_t spare_bytes_ = 0, scratch_bytes_ = 0;
  std::vector<size_t> stage_offset_;  // each x's buffer, then each y's
  size_t stage_bytes_ = 0;
  bool graphs_ = false;                        // whether the loop is tried as a graph
  mutable std::atomic<bool> graph_refused_{};  // capture refused its body once: its steps are queued
  cudaStream_t capture_stream_ = nullptr;      // where its body is captured
};

}  // namespace

std::unique_ptr<CudaUnit> make_loop_step(const Node& node, CudaDevice& device) {
  return std::make_unique<LoopStep>(node, device);
}

}  // namespace sluice::cuda
