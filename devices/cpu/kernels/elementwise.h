#pragma once
// Fused elementwise regions on the CPU: a region's nodes are compiled once
// into a short program of vector kernels, run tile by tile so that every
// intermediate stays in cache: one pass over memory for the whole region.
// Tiles are split across cores with oneTBB when the region is large. The
// vector kernels come from the widest ISA the running CPU has (isa.h).

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

class FusedRegion {
 public:
  // nodes: the region in topological order, all elementwise ops of one shape,
  //   plus Broadcasts whose operand is one of `inputs` (loaded broadcast);
  // inputs: values from outside, in the order run() receives them;
  // outputs: nodes of the region that run() writes, in order.
  FusedRegion(std::vector<const Node*> nodes, std::vector<const Node*> inputs,
              std::vector<const Node*> outputs);
  ~FusedRegion();
  FusedRegion(FusedRegion&&) noexcept;
  FusedRegion& operator=(FusedRegion&&) noexcept;

  // Thread safety: may run concurrently on different buffers.
  void run(std::span<const void* const> inputs, std::span<void* const> outputs) const;

 private:
  struct Program;
  std::unique_ptr<Program> program_;
};

}  // namespace sluice::cpu
