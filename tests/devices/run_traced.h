#pragma once
// Compiles a callable for the specs of its arguments and runs it on the
// default device: what the devices tests do to check one op or a few.

#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::testing {

// f traced over the specs of `args`, compiled, run; its outputs.
template <typename F>
std::vector<Tensor> run(F&& f, const std::vector<Tensor>& args) {
  std::vector<Spec> specs;
  for (const Tensor& a : args) specs.push_back(a.spec());
  return compile(trace(specs, f)).run(args);
}
// Its first output.
template <typename F>
Tensor run1(F&& f, const std::vector<Tensor>& args) {
  return run(f, args).at(0);
}

}  // namespace sluice::testing
