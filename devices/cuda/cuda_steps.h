#pragma once
// What the CUDA backend queues for each lowered step: one class per op
// family (as ggml's backends dispatch), each in a file of its own
// (cuda_step_<family>.cpp), made once when a function is compiled (kernels
// compiled, plans made, launches sized) and queued on every run.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <sluice/devices/cuda/cuda_device.h>
#include <sluice/devices/detail/lowering.h>
#include <sluice/devices/detail/shape_copies.h>

namespace sluice::cuda {

// Where one run's step queues its work, and what it must keep alive until
// the work is done (temporaries it allocates).
struct StepContext {
  CudaDevice& device;
  cudaStream_t stream;
  std::vector<std::shared_ptr<void>>& keep;
};

class CudaUnit {
 public:
  virtual ~CudaUnit() = default;
  // in[i], out[j]: device addresses of the step's inputs and outputs.
  virtual void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const = 0;
};

// The step for `step`, its kernels compiled for `device`.
std::unique_ptr<CudaUnit> make_step(const LoweredUnit& step, CudaDevice& device);

// One per family, in their files.
std::unique_ptr<CudaUnit> make_region_step(const LoweredUnit& step, CudaDevice& device);
std::unique_ptr<CudaUnit> make_shape_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_reduce_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_creation_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_dot_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_fft_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_window_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_scan_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_index_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_sort_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_loop_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_conv_step(const Node& node, CudaDevice& device);
std::unique_ptr<CudaUnit> make_linalg_step(const Node& node, CudaDevice& device);

// Row-major C = A B for `batch` matrices: A [m][k] (stored [k][m] when
// a_transposed), B [k][n] (stored [n][k] when b_transposed), each lda / ldb
// / ldc elements between rows and stride_* between matrices (0: one matrix
// for all). Floating dtypes, on cuBLAS; `what` names the step in errors.
struct RowMajorGemm {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  bool a_transposed = false;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  bool b_transposed = false;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
};
void enqueue_gemm(StepContext& ctx, DType dtype, const RowMajorGemm& g, std::string_view what);

// Queues the copy of `box` (normalised here) of `elem_bytes` elements from
// `source` to `result` (device addresses of element 0 of each view), moved by
// dynamic starts read on the device when `dynamic` is given (its operands'
// addresses in `starts`).
void enqueue_box_copy(StepContext& ctx, int elem_bytes, const void* source, void* result, Box box,
                      const DynamicStarts* dynamic = nullptr, std::span<void* const> starts = {});

}  // namespace sluice::cuda
