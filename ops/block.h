#pragma once
// Blocks (Nx.Backend's block/4): a named op with a traced fallback. A
// backend with a native kernel for the name runs the kernel; every other
// backend runs the fallback, as if it were written in place. So a model can
// use a fused kernel where there is one (`sluice devices` lists each
// backend's native blocks) and stay portable everywhere else:
//
//   Function fallback = sluice::trace({x.spec()}, [](Expr v) { return my_softmax(v); });
//   Expr y = sluice::block("softmax", fallback, {x})[0];
//
// The name promises what the fallback computes: a native kernel answers for
// the name, and must compute what the fallback would (within rounding).
// Names in use: "softmax" (one input, f32 or f64; softmax along its last
// axis, shifted by its maximum where that is finite, as nn.h's softmax; the
// host's kernel is one pass per row held in cache).
//
// The gradient of a block is its fallback's, unless a rule is registered
// for the name (register_block_gradient): the rule takes the block's
// arguments, its outputs and their cotangents (an empty Expr where an
// output has none) and returns one cotangent per argument (empty: none).
// Thread safety: block as tracing; registering while other threads trace
// is safe.

#include <functional>
#include <string>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice {

// The block's outputs: fallback's outputs' specs, computed from args (which
// must match fallback's inputs, as call's). An empty name is a TypeError.
Tuple block(const std::string& name, const Function& fallback, const std::vector<Expr>& args);

using BlockGradient =
    std::function<std::vector<Expr>(const Tuple& args, const Tuple& outputs, const Tuple& output_cotangents)>;
// The rule grad uses for every block of `name` from now on (a later one replaces it).
void register_block_gradient(const std::string& name, BlockGradient rule);

}  // namespace sluice
