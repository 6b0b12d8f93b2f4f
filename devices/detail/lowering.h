#pragma once
// Lowering: what every backend does between a traced Function (after the
// graph passes it chose) and its own instructions. The schedule's steps
// become LoweredSteps and every value a place in memory:
//   - reshape, bitcast and other layout-preserving ops are no step at all:
//     their value is their operand's memory (aliases);
//   - intermediates share one scratch block per run, a value's bytes reused
//     once its last reader has run (liveness, first fit);
//   - a value a function output shows gets a slot: a buffer made per run, or
//     the buffer of a donated argument when that is safe (donors);
//   - constants are listed once; the backend places them in its memory.
// A backend then turns each step into what it runs (the host: a fused region
// of vector kernels or a kernel call; CUDA: a generated kernel or a library
// call) and, per run, makes its output buffers with run_outputs.h.
// Internal to the devices layer: not installed.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice {

// Where a value's bytes are during a run.
struct ValueLocation {
  enum class Kind : uint8_t { Argument, Constant, Scratch, Slot };
  Kind kind = Kind::Scratch;
  int64_t index = 0;  // argument, constant or slot number; for Scratch, the byte offset
};

// One unit of work: an elementwise region, or one node.
struct LoweredUnit {
  std::string what;  // names the step in errors: "dot", "fused region (add, exp)"
  bool region = false;
  // A region: its nodes in topological order (elementwise ops of one shape,
  // and broadcasts loading values from outside), what it reads from outside
  // (`inputs` in this order) and the nodes it writes (`outputs` in order).
  // Otherwise nodes is the one node, whose operands are `inputs` in order.
  std::vector<const Node*> nodes, reads, writes;
  std::vector<ValueLocation> inputs, outputs;

  const Node& node() const { return *nodes.front(); }
};

// A computed value that function outputs show: it lives in a buffer of its
// own, made per run.
struct OutputSlot {
  int64_t bytes = 0;
  // Arguments whose buffer may hold this value instead, when donated: of the
  // same size, shown by no output, and read by no step after the producing
  // one starts writing (an elementwise region reads element i before writing
  // it, so it may write over an input it reads element by element).
  std::vector<int64_t> donors;
  size_t output = 0;  // the first function output showing it
};

struct LoweredFunction {
  Function function;  // steps point into its nodes
  std::vector<LoweredUnit> steps;
  std::vector<const Node*> constants;  // ValueLocation::Kind::Constant indexes this list
  std::vector<OutputSlot> slots;
  std::vector<ValueLocation> outputs;  // per function output: an Argument, a Constant or a Slot
  int64_t scratch_bytes = 0;           // per run, for intermediates
  int64_t work = 0;                    // elements read and written by one run, all steps together
};

// What a backend adds to a step of a node with several results (a loop, qr):
// scratch of its own, after its results' places, and the work it does.
struct StepNeeds {
  int64_t scratch_bytes = 0;
  int64_t work = 0;
};

struct LoweringRules {
  // Every value in scratch starts at a multiple of this (a cache line on the
  // host, a segment a GPU loads in one transaction).
  int64_t alignment = 64;
  // Asked once per node with several results; null: it needs nothing more.
  std::function<StepNeeds(const Node&)> several_results;
};

// `bytes` rounded up to whole blocks of `alignment`, at least one.
int64_t aligned_size(int64_t bytes, int64_t alignment);

// Ops whose result is exactly the operand's bytes read as another spec.
bool is_alias(const Node& node);

// Lowers `f`, on which the backend has run its passes; its steps are
// passes::schedule(f). Every op and dtype is one the backend supports.
LoweredFunction lower(Function f, const LoweringRules& rules);

}  // namespace sluice
