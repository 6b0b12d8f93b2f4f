#pragma once
// Run-time SIMD dispatch for the elementwise kernels. Every *_isa.cpp file is
// compiled three times (sse4, avx2 + fma + f16c, avx512 f/dq/bw/vl), each copy
// in a namespace named after its ISA; each copy fills one KernelTable. The
// widest table the running CPU supports is chosen once, at first use, with
// __builtin_cpu_supports, so a build made on one x86-64 machine runs
// correctly on any other.
//
// The environment variable SLUICE_ISA=sse4|avx2|avx512, read once at that
// first use, caps the choice (tests use it, and it pins a narrower ISA when
// measuring). A cap above what the CPU supports has no effect.

#include <cstdint>
#include <string_view>

#include <sluice/ops/dtype.h>
#include <sluice/ops/op.h>

namespace sluice::cpu {

enum class Isa : uint8_t { Sse4, Avx2, Avx512 };
std::string_view isa_name(Isa isa);  // "sse4", "avx2", "avx512"

// One elementwise kernel over n elements of compute representation (see
// below): out[i] = f(a[i], b[i], c[i]). Unused operands are null. out never
// overlaps a, b or c unless the kernel's entry says it works in place.
using Kernel = void (*)(void* out, const void* a, const void* b, const void* c, int64_t n);

// Values are computed in their compute representation: f16 and bf16 as f32
// holding a value exactly representable in the narrow type, every other
// dtype as stored (pred as one byte 0/1, complex as interleaved parts).
inline DType compute_dtype(DType t) {
  return t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
}

// A kernel over `rows` rows of n elements each, row after row (in and out
// row-major, not overlapping): the fused row kernels of native blocks.
using RowKernel = void (*)(void* out, const void* in, int64_t rows, int64_t n);

struct KernelTable {
  Isa isa = Isa::Sse4;
  // op[op][d]: the elementwise op on operands of compute dtype d (select:
  // the dtype of operands 1 and 2). Null where the op does not apply. Result
  // dtypes are the operand's except comparisons, logical ops, is_nan and
  // is_infinity (pred), abs/real/imag of complex (the real type) and
  // conjugate of a real (the complex type).
  Kernel op[kOpCount][kDTypeCount] = {};
  // affine[op][d], for unary f32/f64 math: op(a[i] * b[0] + c[0]), b and c
  // pointing to one scalar each; the multiply and the add round as separate
  // ops do. Null where not provided.
  Kernel affine[kOpCount][kDTypeCount] = {};
  // as_type[from][to] and bitcast[from][to] on compute representations;
  // a result of f16/bf16 is rounded (to nearest even) to that precision.
  Kernel as_type[kDTypeCount][kDTypeCount] = {};
  Kernel bitcast[kDTypeCount][kDTypeCount] = {};
  // f16 and bf16 only: stored bits -> compute representation (widen), back
  // (narrow), and rounding an f32 result to the narrow precision, in place
  // (round may be called with out == a).
  Kernel widen[kDTypeCount] = {};
  Kernel narrow[kDTypeCount] = {};
  Kernel round[kDTypeCount] = {};
  // The block "softmax" (ops/block.h) of f32 and f64 rows: native_blocks.cpp.
  RowKernel softmax[kDTypeCount] = {};
};

// The table of the widest ISA this CPU supports, capped by SLUICE_ISA.
const KernelTable& kernel_table();
// The table of `isa`, or null when this CPU cannot run it.
const KernelTable* kernel_table(Isa isa);

// Complex transcendental functions: scalar std::complex code that gains
// nothing from the ISA, compiled once (elementwise_complex.cpp) and shared
// by every table. Keeping std:: templates out of the *_isa.cpp files also
// keeps the linker from merging an AVX-512 copy of one into SSE4 code.
void fill_complex_kernels(KernelTable& t);

// One getter per compiled copy of the kernels.
namespace sse4 { const KernelTable& kernel_table(); }
namespace avx2 { const KernelTable& kernel_table(); }
namespace avx512 { const KernelTable& kernel_table(); }

}  // namespace sluice::cpu
