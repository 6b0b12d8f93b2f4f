#pragma once
// Lowering: a traced Function becomes a Plan the host runs. The graph passes
// run first (common subexpressions, constant folding through the same kernels
// a run uses, fusion into steps); then every step becomes an instruction, every
// value a place in memory:
//   - a fused step is a FusedRegion, built once here; a single node calls its
//     family's kernel (kernels.h);
//   - constants are materialised once, into memory the plan owns;
//   - reshape, bitcast and other layout-preserving ops are no instruction at
//     all: their result is their operand's memory;
//   - intermediates share one arena per run, a value's bytes reused once its
//     last reader has run;
//   - a value a function output shows gets a slot: a buffer made per run, or
//     the buffer of a donated argument when that is safe.
// A Plan is immutable once made and shared by every run of its executable.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <sluice/devices/cpu/kernels/elementwise.h>
#include <sluice/ops/function.h>

namespace sluice::cpu {

class CompiledLoop;  // loop.h

// Where a value's bytes are during a run.
struct Location {
  enum class Kind : uint8_t { Argument, Constant, Arena, Slot };
  Kind kind = Kind::Arena;
  int64_t index = 0;  // argument, constant or slot number; for Arena, the byte offset
};

// One step of a run: an elementwise region, or one node run by its kernel.
struct Instruction {
  std::string what;                     // names the step in errors: "dot", "fused region (add, exp)"
  std::unique_ptr<FusedRegion> region;  // set for an elementwise region
  const Node* node = nullptr;           // otherwise the node, whose operands are `inputs` in order
  std::vector<Location> inputs, outputs;
  // A node with several results has one output per result. Set for a loop
  // node: its bodies, lowered; its outputs are the loop's results, then a
  // scratch block of loop->scratch_bytes().
  std::shared_ptr<const CompiledLoop> loop;
};

// A computed value that function outputs show: it lives in a buffer of its
// own, made per run.
struct Slot {
  int64_t bytes = 0;
  // Arguments whose buffer may hold this value instead, when donated: of the
  // same size, shown by no output, and read by no step after the producing
  // one starts writing (an elementwise region reads element i before writing
  // it, so it may write over an input it reads element by element).
  std::vector<int64_t> donors;
  size_t output = 0;  // the first function output showing it
};

struct Plan {
  Function function;  // after the passes: instructions point into its nodes
  std::vector<Instruction> instructions;
  std::vector<std::shared_ptr<void>> constants;  // kHostAlignment-aligned copies of the literals
  std::vector<Slot> slots;
  std::vector<Location> outputs;  // per function output: an Argument, a Constant or a Slot
  int64_t arena_bytes = 0;        // scratch memory for intermediates, per run
  int64_t work = 0;               // elements read and written by one run, all steps together
};

// Lowers `f` (validated: every op and dtype supported).
Plan make_plan(const Function& f);

// Where one run of a plan reads and writes: each argument's data, each
// slot's, and plan.arena_bytes of scratch (kHostAlignment-aligned).
struct PlanMemory {
  std::span<const void* const> args;
  std::span<void* const> slots;
  void* arena = nullptr;
};
// Runs the plan's instructions in order on the calling thread; an error
// names the step that raised it.
void run_plan(const Plan& plan, const PlanMemory& memory);
// The address of a value at `where` during that run.
void* address(const Plan& plan, const PlanMemory& memory, const Location& where);

// Runs one node through the kernels, as a step of a plan does: in[i] is
// operand i's data, out the result's. Constant folding evaluates with it, so
// every op has one implementation.
void run_node(const Node& node, std::span<const void* const> in, void* out);
// The same for a node with several results other than a loop (qr, lu,
// eigh): out[i] is result i's memory.
void run_node_results(const Node& node, std::span<const void* const> in, std::span<void* const> out);

}  // namespace sluice::cpu
