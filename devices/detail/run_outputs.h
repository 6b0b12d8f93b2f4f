#pragma once
// The buffers one run of a lowered function writes and returns, made the same
// way by every backend: each slot in a donated argument's buffer where the
// lowering allows it and nothing else holds that memory, else in fresh memory
// from the backend; a donated argument an output shows is copied by the run;
// outputs showing another output, a non-donated argument or a constant share
// that memory. Internal to the devices layer.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/detail/lowering.h>
#include <sluice/devices/detail/pointers.h>

namespace sluice {

struct RunOutputs {
  std::vector<BufferPtr> buffers;  // per function output
  Pointers<void*> slots;           // where the run writes each slot
  // (argument, destination): donated arguments an output shows; the run
  // copies each at its end, after every step has read it.
  std::vector<std::pair<size_t, void*>> copies;
};

// Memory of `bytes` on the run's device: what keeps it alive, whose get() is
// its address.
using AllocateFn = std::function<std::shared_ptr<void>(size_t bytes)>;

// `constants`: the memory of f.constants, in order, on the run's device.
RunOutputs make_run_outputs(const LoweredFunction& f, Device device, std::span<const BufferPtr> args,
                            std::span<const bool> donated, std::span<const std::shared_ptr<void>> constants,
                            const AllocateFn& allocate);

// Gives `done` to the outputs the run computes (slots, copies of donated
// arguments); those showing a non-donated argument keep its event, constants
// are ready.
void set_run_event(const LoweredFunction& f, std::span<const bool> donated, std::vector<BufferPtr>& outputs,
                   const EventPtr& done);

// Whether no one but this buffer holds its memory: no other tensor, view or
// run in flight reads it, so a run it is donated to may write over it.
inline bool is_exclusive(const Buffer& b) { return b.memory && b.memory.use_count() == 1; }

// The first error among the arguments' events, or null.
std::exception_ptr first_error(std::span<const BufferPtr> args);

}  // namespace sluice
