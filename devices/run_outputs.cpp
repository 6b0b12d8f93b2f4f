#include <sluice/devices/detail/run_outputs.h>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

BufferPtr make_buffer(Device device, void* data, size_t bytes, std::shared_ptr<void> memory, EventPtr ready) {
  auto b = std::make_shared<Buffer>();
  b->device = device;
  b->data = data;
  b->bytes = bytes;
  b->memory = std::move(memory);
  b->ready = std::move(ready);
  return b;
}

constexpr size_t kNone = ~size_t{0};

// The first output showing argument k, or kNone.
size_t argument_output(const LoweredFunction& f, size_t k) {
  for (size_t j = 0; j < f.outputs.size(); ++j)
    if (f.outputs[j].kind == ValueLocation::Kind::Argument && static_cast<size_t>(f.outputs[j].index) == k)
      return j;
  return kNone;
}

size_t output_bytes(const LoweredFunction& f, size_t j) {
  return static_cast<size_t>(f.function.outputs()[j].spec().bytes());
}

}  // namespace

RunOutputs make_run_outputs(const LoweredFunction& f, Device device, std::span<const BufferPtr> args,
                            std::span<const bool> donated, std::span<const std::shared_ptr<void>> constants,
                            const AllocateFn& allocate) {
  RunOutputs run{std::vector<BufferPtr>(f.outputs.size()), Pointers<void*>(f.slots.size()), {}};
  std::vector<BufferPtr>& outputs = run.buffers;
  for (size_t s = 0; s < f.slots.size(); ++s) {
    const size_t j = f.slots[s].output;
    std::shared_ptr<void> memory;
    void* data = nullptr;
    for (int64_t d : f.slots[s].donors) {
      auto k = static_cast<size_t>(d);
      if (!donated[k] || !is_exclusive(*args[k])) continue;
      // The donated buffer is dead: its memory now belongs to the output
      // alone, so the run this output is donated to next finds it exclusive
      // even while this one is in flight.
      memory = std::move(args[k]->memory);
      data = args[k]->data;
      break;
    }
    if (!memory) {
      memory = allocate(static_cast<size_t>(f.slots[s].bytes));
      data = memory.get();
    }
    run.slots[s] = data;
    outputs[j] = make_buffer(device, data, output_bytes(f, j), std::move(memory), nullptr);
  }
  Pointers<size_t> arg_output(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    arg_output[k] = argument_output(f, k);
    const size_t j = arg_output[k];
    if (!donated[k] || j == kNone) continue;
    std::shared_ptr<void> memory = allocate(args[k]->bytes);
    void* data = memory.get();
    run.copies.emplace_back(k, data);
    outputs[j] = make_buffer(device, data, output_bytes(f, j), std::move(memory), nullptr);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (outputs[j]) continue;
    const ValueLocation& out = f.outputs[j];
    auto i = static_cast<size_t>(out.index);
    const BufferPtr* shared = nullptr;
    switch (out.kind) {
      case ValueLocation::Kind::Slot: shared = &outputs[f.slots[i].output]; break;
      case ValueLocation::Kind::Argument: shared = donated[i] ? &outputs[arg_output[i]] : &args[i]; break;
      case ValueLocation::Kind::Constant:
        outputs[j] = make_buffer(device, constants[i].get(), output_bytes(f, j), constants[i], nullptr);
        continue;
      case ValueLocation::Kind::Scratch:
        throw InternalError(error_message(device.str(), fmt::format("output {}", j), "a buffer that outlives the run",
                                          "one planned in a run's scratch memory"));
    }
    const Buffer& b = **shared;
    outputs[j] = make_buffer(device, b.data, output_bytes(f, j), b.memory, b.ready);
  }
  return run;
}

void set_run_event(const LoweredFunction& f, std::span<const bool> donated, std::vector<BufferPtr>& outputs,
                   const EventPtr& done) {
  for (size_t j = 0; j < outputs.size(); ++j) {
    const ValueLocation& out = f.outputs[j];
    if (out.kind == ValueLocation::Kind::Slot ||
        (out.kind == ValueLocation::Kind::Argument && donated[static_cast<size_t>(out.index)]))
      outputs[j]->ready = done;
  }
}

std::exception_ptr first_error(std::span<const BufferPtr> args) {
  for (const BufferPtr& a : args)
    if (a->ready)
      if (std::exception_ptr e = a->ready->error()) return e;
  return nullptr;
}

}  // namespace sluice
