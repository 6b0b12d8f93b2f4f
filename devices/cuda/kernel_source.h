#pragma once
// The CUDA C++ of every kernel the CUDA backend runs, generated from the
// lowered function: a fused region becomes one kernel that reads each input
// once and writes each output once (one pass over memory); shape ops, dot's
// permutations, reductions, iota and eye, integer dot and ifft's scaling
// have one generated kernel each (shape-generic where the kernel reads the
// shape from its parameters, kernel_params.h). Every source starts with the
// prelude (kernels/prelude.cuh) and is compiled at run time by NVRTC
// (nvrtc_compiler.h), once per source and GPU architecture.
// No CUDA here: tests/devices/cuda_kernels_test.cpp generates every variant
// and compiles it with NVRTC on machines without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include <sluice/devices/detail/conv_geometry.h>
#include <sluice/devices/detail/lowering.h>
#include <sluice/ops/dtype.h>

namespace sluice::cuda {

struct KernelSource {
  std::string code;                  // the prelude, then the kernels
  std::vector<std::string> entries;  // names of its __global__ functions (extern "C")
  // Parameter words after the pointers the launcher puts first (a region's
  // element count and broadcast maps): they vary with shapes the code does
  // not, so one compiled kernel serves every shape of the same structure.
  std::vector<uint64_t> words;
};

// The prelude's text, and the templates of kernels/algorithms.cuh (embedded
// at build time).
const std::string& prelude_source();
const std::string& algorithms_source();

// A fused region: a lowered step with `region` set. Its parameter words are
// the step's inputs (its `reads`), then its outputs (its `writes`), then
// `words` (the element count, the broadcast maps).
KernelSource region_kernel(const LoweredUnit& step);
// Box copies of elements of `elem_bytes` (1, 2, 4, 8 or 16): box_words.
KernelSource box_copy_kernel(int elem_bytes);
// A reduction node (sum, product, reduce_max/min, argmax/min, all, any),
// shape-generic: reduce_words.
KernelSource reduce_kernel(const Node& node);
// iota or eye, shape fixed in the source; one word: the output.
KernelSource creation_kernel(const Node& node);
// dot of `dtype` by a thread per result (integers, wrapping in their type,
// and dots too small for cuBLAS's call to pay): dot_words.
KernelSource dot_kernel(DType dtype);
// Multiplies c64 or c128 data by a real scale: scale_words.
KernelSource scale_kernel(DType dtype);

// From the templates of kernels/algorithms.cuh (kernel_source_algorithms.cpp):
// window_sum/product/max/min, entries "window" (a thread per window) and,
// for x of rank 1 or more, "window_tiles" (a block per tile of a line,
// launch_geometry.h's window_tile): window_words.
KernelSource window_kernel(const Node& node);
// window_scatter_max/min: "window_pick" (each window's pick, into the
// scratch), then "window_scatter": window_words.
KernelSource window_scatter_kernel(const Node& node);
// cumulative_sum/product/max/min, entry "cumulative": scan_words.
KernelSource scan_kernel(const Node& node);
// gather of `elem_bytes` elements; indexed_add of `dtype`; indexed_put of
// `elem_bytes` elements ("put_claim", then "put_write"); indices of any
// integer dtype (a word): index_words.
KernelSource gather_kernel(int elem_bytes);
KernelSource scatter_add_kernel(DType dtype);
KernelSource put_kernel(int elem_bytes);
// sort or argsort: "sort_prepare", "sort_step", "sort_tile", "sort_write":
// sort_words.
KernelSource sort_kernel(const Node& node);
// conv's column matrices of `elem_bytes` elements over `spatial` axes,
// entry "im2col": conv_words; `wide`: a channel's offsets need 64 bits
// (conv_offsets_are_wide).
KernelSource im2col_kernel(int elem_bytes, int spatial, bool wide);
// Whether the offsets im2col works out within a channel's input (and the
// coordinates past its edges) may pass 2^31 - 1.
bool conv_offsets_are_wide(const ConvGeometry& g);
// The copies around linear algebra on cuSOLVER, of `dtype` (f32, f64, c64,
// c128): "matrix_copy", "nan_where_failed", "permutation", "qr_signs":
// linalg_words.
KernelSource linalg_kernel(DType dtype);

// C++ names of a dtype's storage and compute types in generated code.
std::string storage_type(DType t);
std::string compute_type(DType t);

}  // namespace sluice::cuda
