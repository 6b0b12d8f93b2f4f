#include <sluice/devices/cuda/cuda_program.h>

#include <fmt/format.h>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::cuda {
namespace {

// Scratch values start at multiples of this: a segment one warp loads in
// one transaction, and every dtype's alignment.
constexpr int64_t kScratchAlignment = 256;

// Rethrows the exception being handled with the step that raised it named,
// keeping DeviceError's type (the only one a step throws).
[[noreturn]] void rethrow_naming(const std::string& who, const std::string& step) {
  try {
    throw;
  } catch (const Error& e) {
    throw DeviceError(error_message(who, fmt::format("{} failed: {}", step, e.what()), "", ""));
  } catch (const std::exception& e) {
    throw DeviceError(error_message(who, fmt::format("{} failed: {}", step, e.what()), "", ""));
  }
}

}  // namespace

CudaProgram::CudaProgram(const Function& f, CudaDevice& device)
    // No block has a native kernel here: each runs its fallback.
    : lowered_(lower(passes::eliminate_common_subexpressions(passes::inline_blocks(f)),
                     {.alignment = kScratchAlignment})) {
  device.activate();
  for (const LoweredUnit& step : lowered_.steps) {
    try {
      steps_.push_back(make_step(step, device));
    } catch (...) { rethrow_naming(device.who(), step.what); }
  }
  for (const Node* c : lowered_.constants) {
    const Literal& lit = *c->attrs.literal;
    std::shared_ptr<void> memory = device.allocate(lit.bytes.size());
    if (!lit.bytes.empty())
      check(cudaMemcpy(memory.get(), lit.bytes.data(), lit.bytes.size(), cudaMemcpyHostToDevice), device.who(),
            "uploading a constant");
    constants_.push_back(std::move(memory));
  }
  for (const Spec& s : f.output_specs()) output_bytes_.push_back(static_cast<size_t>(s.bytes()));
}

void CudaProgram::enqueue(StepContext& ctx, const std::function<void*(const ValueLocation&)>& address) const {
  std::vector<void*> in, out;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const LoweredUnit& step = lowered_.steps[s];
    in.clear();
    out.clear();
    for (const ValueLocation& l : step.inputs) in.push_back(address(l));
    for (const ValueLocation& l : step.outputs) out.push_back(address(l));
    try {
      steps_[s]->enqueue(ctx, in, out);
    } catch (...) { rethrow_naming(ctx.device.who(), step.what); }
  }
}

void CudaProgram::enqueue_into(StepContext& ctx, std::span<void* const> args, std::span<void* const> dests,
                               void* scratch) const {
  auto address = [&](const ValueLocation& where) -> void* {
    const auto i = static_cast<size_t>(where.index);
    switch (where.kind) {
      case ValueLocation::Kind::Argument: return args[i];
      case ValueLocation::Kind::Constant: return constants_[i].get();
      case ValueLocation::Kind::Scratch: return static_cast<char*>(scratch) + where.index;
      case ValueLocation::Kind::Slot: return dests[lowered_.slots[i].output];
    }
    return nullptr;
  };
  enqueue(ctx, address);
  for (size_t j = 0; j < dests.size(); ++j) {
    const void* value = address(lowered_.outputs[j]);
    if (value != dests[j] && output_bytes_[j] != 0)
      check(cudaMemcpyAsync(dests[j], value, output_bytes_[j], cudaMemcpyDeviceToDevice, ctx.stream), ctx.device.who(),
            "copying a value a function passes through");
  }
}

}  // namespace sluice::cuda
