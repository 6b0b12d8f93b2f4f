#pragma once
// A Function compiled for the host: the devices layer's lowering (liveness,
// scratch reuse, aliases, donation: lowering.h) after the host's passes
// (common subexpressions, constant folding through the same kernels a run
// uses), with what only the host adds:
//   - a region step becomes a FusedRegion of vector kernels, built once here;
//     a single node calls its family's kernel (kernels.h);
//   - a loop step becomes a CompiledLoop (loop.h), its bodies lowered too;
//   - constants are materialised once, into memory the plan owns.
// A Plan is immutable once made and shared by every run of its executable.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <sluice/devices/cpu/kernels/elementwise.h>
#include <sluice/devices/detail/lowering.h>

namespace sluice::cpu {

class CompiledLoop;  // loop.h

// What the host runs for one lowered step: its region, its loop, or (both
// null) its node's kernel.
struct Instruction {
  std::unique_ptr<FusedRegion> region;
  std::shared_ptr<const CompiledLoop> loop;
};

struct Plan {
  LoweredFunction lowered;
  std::vector<Instruction> instructions;         // one per lowered step
  std::vector<std::shared_ptr<void>> constants;  // kHostAlignment-aligned copies of the literals
};

// Lowers `f` (validated: every op and dtype supported).
Plan make_plan(const Function& f);

// Where one run of a plan reads and writes: each argument's data, each
// slot's, and lowered.scratch_bytes of scratch (kHostAlignment-aligned).
struct PlanMemory {
  std::span<const void* const> args;
  std::span<void* const> slots;
  void* arena = nullptr;
};
// Runs the plan's instructions in order on the calling thread; an error
// names the step that raised it.
void run_plan(const Plan& plan, const PlanMemory& memory);
// The address of a value at `where` during that run.
void* address(const Plan& plan, const PlanMemory& memory, const ValueLocation& where);

// Runs one node through the kernels, as a step of a plan does: in[i] is
// operand i's data, out the result's. Constant folding evaluates with it, so
// every op has one implementation.
void run_node(const Node& node, std::span<const void* const> in, void* out);
// The same for a node with several results other than a loop (qr, lu,
// eigh): out[i] is result i's memory.
void run_node_results(const Node& node, std::span<const void* const> in, std::span<void* const> out);

}  // namespace sluice::cpu
