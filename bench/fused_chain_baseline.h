#pragma once
// The hand-written baseline of the fused chain benchmark.

#include <cstddef>

namespace sluice::bench {

// y[i] = tanh(x[i] * 2 + 1) * x[i] - exp(-x[i]) for i < n, split across
// oneTBB's threads (the ones sluice runs on). Its source is compiled alone
// with -O3 -march=native -ffast-math, so the loop is vectorized and calls
// glibc's vector tanhf/expf: the best a plain loop gets from the compiler.
void fused_chain_baseline(const float* x, float* y, size_t n);

}  // namespace sluice::bench
