// Running a plan's instructions: what every run of an executable and every
// step of a loop body does.
#include <new>
#include <string>

#include <sluice/devices/cpu/loop.h>
#include <sluice/devices/cpu/plan.h>
#include <sluice/devices/detail/pointers.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

// Rethrows the exception being handled, its message prefixed with the step
// that raised it; sluice errors keep their type.
// clang-format off
[[noreturn]] void rethrow_naming(const std::string& step) {
  const std::string failed = step + " failed: ";
  try {
    throw;
  } catch (const ShapeError& e) {
    throw ShapeError(error_message("host", failed + e.what(), "", ""));
  } catch (const TypeError& e) {
    throw TypeError(error_message("host", failed + e.what(), "", ""));
  } catch (const ValueError& e) {
    throw ValueError(error_message("host", failed + e.what(), "", ""));
  } catch (const DeviceError& e) {
    throw DeviceError(error_message("host", failed + e.what(), "", ""));
  } catch (const ConfigError& e) {
    throw ConfigError(error_message("host", failed + e.what(), "", ""));
  } catch (const Error& e) {  // the rest are not a kernel's to throw
    throw InternalError(error_message("host", failed + e.what(), "", ""));
  } catch (const std::bad_alloc&) {
    throw DeviceError(error_message("host", failed + "out of host memory", "", ""));
  } catch (const std::exception& e) {
    throw DeviceError(error_message("host", failed + e.what(), "", ""));
  } catch (...) {
    throw DeviceError(error_message("host", failed + "unknown exception", "", ""));
  }
}
// clang-format on

}  // namespace

void* address(const Plan& plan, const PlanMemory& memory, const ValueLocation& where) {
  auto i = static_cast<size_t>(where.index);
  switch (where.kind) {
    case ValueLocation::Kind::Argument: return const_cast<void*>(memory.args[i]);
    case ValueLocation::Kind::Constant: return plan.constants[i].get();
    case ValueLocation::Kind::Scratch: return static_cast<uint8_t*>(memory.arena) + where.index;
    case ValueLocation::Kind::Slot: return memory.slots[i];
  }
  return nullptr;
}

void run_plan(const Plan& plan, const PlanMemory& memory) {
  const std::vector<LoweredUnit>& steps = plan.lowered.steps;
  for (size_t s = 0; s < steps.size(); ++s) {
    const LoweredUnit& step = steps[s];
    const Instruction& ins = plan.instructions[s];
    Pointers<const void*> in(step.inputs.size());
    Pointers<void*> out(step.outputs.size());
    for (size_t i = 0; i < step.inputs.size(); ++i) in[i] = address(plan, memory, step.inputs[i]);
    for (size_t i = 0; i < step.outputs.size(); ++i) out[i] = address(plan, memory, step.outputs[i]);
    try {
      if (ins.region)
        ins.region->run(in.span(), out.span());
      else if (ins.loop)
        ins.loop->run(in.span(), out.span());
      else if (has_several_results(step.node().op))
        run_node_results(step.node(), in.span(), out.span());
      else
        run_node(step.node(), in.span(), out[0]);
    } catch (...) { rethrow_naming(step.what); }
  }
}

}  // namespace sluice::cpu
