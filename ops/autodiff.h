#pragma once
// Reverse-mode differentiation of traced Functions (JAX's grad and
// value_and_grad, Nx's grad). The result is an ordinary Function: a backend
// runs CSE and constant folding over it as over any other, so the gradient
// costs what a backward pass written by hand costs.
//
//   auto loss = sluice::trace({sluice::f64({3}), sluice::f64({3})},
//       [](sluice::Expr w, sluice::Expr x) { return sluice::sum(w * x * w); });
//   auto dloss = sluice::grad(loss, {0});  // (w, x) -> d loss / d w, f64[3]
//
// Every op whose catalogue entry names a gradient rule (op_list.def) passes
// gradients; the others (integer results, comparisons, floor, sign, argmax,
// stop_gradient) pass none. Complex parameters follow JAX: the gradient of a
// real loss L(z) is dL/dx - i dL/dy. Thread safety: as tracing.

#include <utility>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice {

// The Function mapping f's inputs to the gradient of f's first output, which
// must be a real floating scalar, with respect to each parameter listed in
// `wrt` (indices into f's inputs), in that order, each of its parameter's
// spec. Throws TypeError naming the parameter for a wrt parameter that is not
// floating or complex, or naming the output for a first output that is not a
// real floating scalar (ShapeError when it is not a scalar); Error for an
// index out of range.
Function grad(const Function& f, std::vector<int> wrt = {0});
// f's outputs, then the gradients grad(f, wrt) computes.
Function value_and_grad(const Function& f, std::vector<int> wrt = {0});

// As above, tracing `f` over `specs` first (as trace does).
template <typename F>
Function grad(std::vector<Spec> specs, F&& f, std::vector<int> wrt = {0}) {
  return grad(trace(std::move(specs), std::forward<F>(f)), std::move(wrt));
}
template <typename F>
Function value_and_grad(std::vector<Spec> specs, F&& f, std::vector<int> wrt = {0}) {
  return value_and_grad(trace(std::move(specs), std::forward<F>(f)), std::move(wrt));
}

}  // namespace sluice
