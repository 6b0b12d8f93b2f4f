// while_loop and scan (and so fori_loop): the body, and a while_loop's
// condition, are programs of their own (cuda_program.h), queued step after
// step on the loop's stream, as the host runs its loops (devices/cpu/loop.h):
// the carry double-buffered between the loop's results and spare buffers,
// step i reading row i of each xs in place and writing each y straight into
// row i of its stacked result.
//
// A scan's steps are known when it is queued, so all of them are queued at
// once and the GPU runs them back to back: no step waits for the host. A
// while_loop's next step depends on its condition, which the host reads
// after each step (a copy of one byte and a wait for the stream): its steps
// are separated by a round trip to the host.

#include <fmt/format.h>

#include <algorithm>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_program.h>
#include <sluice/ops/detail/loop_attrs.h>

namespace sluice::cuda {
namespace {

constexpr size_t kAlignment = 256;
size_t aligned(int64_t bytes) { return (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + kAlignment - 1) / kAlignment * kAlignment; }

char* row(void* base, size_t row_bytes, int64_t i) { return static_cast<char*>(base) + row_bytes * static_cast<size_t>(i); }

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
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
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

 private:
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
};

}  // namespace

std::unique_ptr<CudaUnit> make_loop_step(const Node& node, CudaDevice& device) {
  return std::make_unique<LoopStep>(node, device);
}

}  // namespace sluice::cuda
