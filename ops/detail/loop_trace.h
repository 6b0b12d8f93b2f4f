#pragma once
// Tracing a loop's bodies. The bodies are traced once over fresh parameters;
// what they capture from the enclosing function (a model's weights, values
// computed before the loop) is lifted out: each outermost captured value that
// depends on a parameter of the enclosing function becomes one more parameter
// of the bodies and one more operand of the loop node. Captured values made
// of constants alone stay in the bodies, where constant folding sees them.
// Private to ops/.

#include <unordered_map>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice::detail {

class LoopTrace {
 public:
  // Parameters 0..n-1 of the bodies, one per spec (the carry, then x).
  explicit LoopTrace(std::vector<Spec> specs);

  const Tuple& params() const { return params_; }
  // Each body's traced outputs as a Function over the specs and then the
  // values captured by any of the bodies (so several bodies share one list).
  std::vector<Function> close(const std::vector<Tuple>& bodies);
  // The captured outer values, in the order of their parameters.
  const Tuple& captured() const { return captured_; }

 private:
  NodePtr lift(const NodePtr& outer);

  std::vector<Spec> specs_;
  Tuple params_;
  Tuple captured_;
  std::unordered_map<const Node*, NodePtr> lifted_;  // outer value -> its parameter
};

}  // namespace sluice::detail
