#pragma once
// The pieces the kernel generators of the CUDA backend share
// (kernel_source.cpp, kernel_source_algorithms.cpp): how a dtype's storage
// becomes its compute type and back, a kernel's head, and the parts of a
// reduction (what the reduce, window and scan kernels combine with).

#include <string>

#include <sluice/ops/dtype.h>
#include <sluice/ops/expr.h>
#include <sluice/ops/op.h>

namespace sluice::cuda {

bool is_narrow(DType t);  // f16, bf16: stored as 16 bits, computed in f32
// The expression e of storage type converted to t's compute type, and back.
std::string load(DType t, const std::string& e);
std::string store(DType t, const std::string& e);
// A result of an op that is not exact, rounded to f16/bf16 precision.
std::string rounded(DType t, const std::string& e);

// The head of a kernel taking `words` parameter words, through to its "{".
// `resident_blocks`: blocks a multiprocessor must hold at once (the
// compiler caps the kernel's registers to fit them); 0: no such bound.
std::string head(const std::string& name, int words, int resident_blocks = 0);

// A reduction of values of `in` into `out`: its accumulator type, identity,
// how an element (compute type of `in`) enters it, how two combine, and
// what is stored. `op`: sum, product, reduce_max/min, all, any, argmax/min.
struct Reduction {
  std::string acc, identity, lift, combine, finish;
};
Reduction reduction(Op op, DType in, DType out, TieBreak tie_break = TieBreak::Low);

}  // namespace sluice::cuda
