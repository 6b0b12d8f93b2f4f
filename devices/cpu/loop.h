#pragma once
// A loop node (ops/detail/loop_attrs.h) lowered for the host. Its bodies are made
// into plans once, when the enclosing plan is made; one instruction then runs
// them step after step, never leaving compiled code between steps and
// allocating nothing per step:
//   - the carry is double-buffered: a step reads one buffer and writes the
//     other, the loop's result and a second buffer in its scratch taking
//     turns; a scan chooses which one its first step writes so that its last
//     step writes the result (a while_loop copies once at the end if needed);
//   - step i reads row i of each xs where it lies, and writes each y straight
//     into row i of its stacked result: a body's output slots are pointed at
//     where its outputs go; only outputs a body cannot place there (a
//     parameter or constant passed through, a value returned twice) are
//     copied;
//   - the second carry buffers and the bodies' own scratch are the scratch
//     block the enclosing plan gives the instruction (so nested loops nest
//     their scratch too).

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <sluice/devices/cpu/plan.h>
#include <sluice/devices/detail/pointers.h>

namespace sluice::cpu {

// Thread safety: immutable once made; run may be called from many threads at
// once on different memory.
class CompiledLoop {
 public:
  explicit CompiledLoop(const Node& loop);

  // Bytes of scratch a run needs.
  int64_t scratch_bytes() const { return scratch_bytes_; }
  // Elements one run touches, for the choice between running inline and on
  // the pool: a while_loop's count is unknown, so it counts as large.
  int64_t work() const { return work_; }
  // in: the loop's operands; out: its results, then its scratch block.
  void run(std::span<const void* const> in, std::span<void* const> out) const;

 private:
  // A body's plan, and the byte size of each of its outputs.
  struct Body {
    explicit Body(const Function& f);
    // Runs the body once on `args`, each output ending in dests[j]; `slots`
    // (plan.lowered.slots.size() of them) is made once per loop run, not per step.
    void run(std::span<const void* const> args, std::span<void* const> dests, void* arena,
             Pointers<void*>& slots) const;
    Plan plan;
    std::vector<size_t> output_bytes;
  };

  void run_scan(std::span<const void* const> in, std::span<void* const> out) const;
  void run_while(std::span<const void* const> in, std::span<void* const> out) const;

  Op op_;
  int64_t carries_, xs_, length_;
  bool reverse_;
  Body body_;
  std::optional<Body> cond_;           // while_loop: the condition
  std::vector<size_t> carry_bytes_;    // per carry tensor
  std::vector<size_t> x_row_bytes_;    // per xs: one step's row
  std::vector<size_t> y_row_bytes_;    // per y: one step's row
  std::vector<int64_t> spare_offset_;  // per carry tensor: its second buffer in the scratch block
  int64_t pred_offset_ = 0;            // while_loop: where cond writes its answer
  int64_t arena_offset_ = 0;           // the bodies' scratch
  int64_t scratch_bytes_ = 0, work_ = 0;
};

}  // namespace sluice::cpu
