#pragma once
// One GPU as the CUDA backend holds it: its memory (the caching allocator),
// its three queues (kernels and library calls; uploads; downloads, so that
// chunk k+1 uploads while chunk k computes), its cuBLAS and cuSOLVER handles
// and cuFFT plans, and what kernels are compiled for (its architecture).
// Thread safety: every member may be called from any thread; work for one
// run is queued under `enqueue`, which also guards the library handles.

#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <sluice/devices/cuda/cuda_queue.h>
#include <sluice/devices/cuda/device_allocator.h>

namespace sluice::cuda {

class CudaDevice {
 public:
  CudaDevice(Device device, int ordinal, const ClientOptions& options);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  Device device() const { return device_; }
  const std::string& who() const { return who_; }
  int ordinal() const { return ordinal_; }
  int arch() const { return arch_; }  // 90 for sm_90
  int multiprocessors() const { return multiprocessors_; }

  // Device memory that goes back to the allocator when the last holder lets
  // go; its get() is the device address.
  std::shared_ptr<void> allocate(size_t bytes);
  AllocatorStats memory_stats() const { return allocator_->stats(); }
  const DeviceAllocator& allocator() const { return *allocator_; }

  // Makes this device current on the calling thread (CUDA's state is per thread).
  void activate() const;

  CudaQueue& compute() { return *compute_; }
  CudaQueue& uploads() { return *upload_; }
  CudaQueue& downloads() { return *download_; }
  std::mutex& enqueue() { return enqueue_; }

  // The libraries' handles, each bound to `stream` where it is asked for:
  // the step's (the compute queue's, or a loop body's being captured into
  // its graph). Callers hold enqueue().
  cublasHandle_t cublas(cudaStream_t stream);
  // cuSOLVER's dense handle, and its default parameters.
  cusolverDnHandle_t cusolver(cudaStream_t stream);
  cusolverDnParams_t cusolver_params();
  // A C2C (c64) or Z2Z (c128) plan for `rows` transforms of length n, made once.
  cufftHandle fft_plan(int64_t n, int64_t rows, bool double_precision, cudaStream_t stream);

 private:
  Device device_;
  int ordinal_;
  std::string who_;
  int arch_ = 0, multiprocessors_ = 0;
  std::unique_ptr<DeviceMemory> memory_;
  std::shared_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<CudaQueue> compute_, upload_, download_;
  std::mutex enqueue_;
  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
  cusolverDnParams_t cusolver_params_ = nullptr;
  std::map<std::tuple<int64_t, int64_t, bool>, cufftHandle> fft_plans_;
};

}  // namespace sluice::cuda
