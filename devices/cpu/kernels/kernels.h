#pragma once
// The CPU kernels the planner calls: one entry per op family. Every buffer is
// host memory, row-major, laid out as the node's specs say (operands'
// specs are node.operands[i]->spec, the result's is node.spec). Kernels split
// large work across cores with oneTBB and stay on the calling thread for
// small work. Each entry dispatches with one switch on node.op.

#include <span>
#include <string>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

// Constant, Iota, Eye.
void run_creation(const Node& node, void* out);
// Reshape, Broadcast, Transpose, Pad, Reverse, Slice, PutSlice, Concatenate.
// in[i] is operand i (dynamic start indices are scalar operands too).
void run_shape(const Node& node, std::span<const void* const> in, void* out);
// Sum, Product, ReduceMax, ReduceMin, Argmax, Argmin, All, Any.
void run_reduce(const Node& node, const void* in, void* out);
// Dot: oneDNN's sgemm for f32 (f16, bf16 widened), OpenBLAS gemm for
// f64/c64/c128, own loops for the rest.
void run_dot(const Node& node, const void* a, const void* b, void* out);
// WindowSum, WindowMax, WindowMin, WindowProduct (in[0]: x), and
// WindowScatterMax, WindowScatterMin (window_scatter.cpp; in: x, source, init).
void run_window(const Node& node, std::span<const void* const> in, void* out);
void run_window_scatter(const Node& node, std::span<const void* const> in, void* out);
// CumulativeSum, CumulativeProduct, CumulativeMax, CumulativeMin.
void run_scan(const Node& node, const void* in, void* out);
// Fft, Ifft: FFTW, plans made once per (length, direction, dtype) and reused.
void run_fft(const Node& node, const void* in, void* out);

// ---- indexing: Gather, IndexedAdd, IndexedPut (in[i] is operand i).
void run_index(const Node& node, std::span<const void* const> in, void* out);
// ---- sorting: Sort, Argsort.
void run_sort(const Node& node, const void* in, void* out);
// ---- convolution: Conv (conv.h: oneDNN for f32, im2col + gemm for the rest).
void run_conv(const Node& node, const void* input, const void* kernel, void* out);

// ---- linear algebra: Cholesky, TriangularSolve, Solve, Qr, Lu, Eigh
// (LAPACKE and cblas), batched matrices spread across cores. in[i] is
// operand i; out[i] is result i (one for the ops of one result).
void run_linalg(const Node& node, std::span<const void* const> in, std::span<void* const> out);

// Blocks (ops/block.h) the host runs natively (native_blocks.cpp): whether
// one runs this block node (its name, and the specs it is given), the names
// of them all, and running one (one pointer per result).
bool has_native_block(const Node& node);
std::vector<std::string> native_block_names();
void run_native_block(const Node& node, std::span<const void* const> in, std::span<void* const> out);

}  // namespace sluice::cpu
