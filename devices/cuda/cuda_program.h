#pragma once
// A function lowered and made into steps for one GPU, its constants
// uploaded: what an executable runs, and what a loop runs step after step
// (its body and its condition). Queuing it only launches work on the
// stream it is given; nothing waits for the GPU.
// Thread safety: immutable once made; enqueue may be called from many
// threads at once (under the device's enqueue lock, as every queuing).

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <sluice/devices/cuda/cuda_steps.h>

namespace sluice::cuda {

class CudaProgram {
 public:
  CudaProgram(const Function& f, CudaDevice& device);

  const LoweredFunction& lowered() const { return lowered_; }
  std::span<const std::shared_ptr<void>> constants() const { return constants_; }

  // Queues every step, each value where `address` says it lives.
  void enqueue(StepContext& ctx, const std::function<void*(const ValueLocation&)>& address) const;
  // Queues one run on `args` (the function's parameters) whose outputs end
  // in `dests`: computed ones are written there, others (a parameter or a
  // constant passed through, a value shown twice) copied. `scratch` holds
  // lowered().scratch_bytes.
  void enqueue_into(StepContext& ctx, std::span<void* const> args, std::span<void* const> dests, void* scratch) const;

 private:
  LoweredFunction lowered_;
  std::vector<std::unique_ptr<CudaUnit>> steps_;
  std::vector<std::shared_ptr<void>> constants_;  // device memory, per lowered.constants
  std::vector<size_t> output_bytes_;
};

}  // namespace sluice::cuda
