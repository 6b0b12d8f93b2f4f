#include <sluice/devices/cuda/cuda_device.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <limits>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_libraries.h>
#include <sluice/base/error.h>

namespace sluice::cuda {
namespace {

// Device memory straight from CUDA, for the allocator to cut up.
class CudaMemory final : public DeviceMemory {
 public:
  CudaMemory(int ordinal, size_t total) : ordinal_(ordinal), total_(total) {}
  void* reserve(size_t bytes) override {
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();  // an out-of-memory error is not sticky: clear it
      return nullptr;
    }
    return p;
  }
  void release(void* region) override {
    cudaSetDevice(ordinal_);
    cudaFree(region);
  }
  size_t total() const override { return total_; }

 private:
  int ordinal_;
  size_t total_;
};

}  // namespace

CudaDevice::CudaDevice(Device device, int ordinal, const ClientOptions& options)
    : device_(device), ordinal_(ordinal), who_(device.str()) {
  activate();
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, ordinal_), who_, "cudaGetDeviceProperties");
  arch_ = props.major * 10 + props.minor;
  multiprocessors_ = props.multiProcessorCount;
  memory_ = std::make_unique<CudaMemory>(ordinal_, props.totalGlobalMem);
  allocator_ = std::make_shared<DeviceAllocator>(*memory_, options.memory_fraction, options.preallocate, who_);
  compute_ = std::make_unique<CudaQueue>(device_, ordinal_, "compute");
  upload_ = std::make_unique<CudaQueue>(device_, ordinal_, "upload");
  download_ = std::make_unique<CudaQueue>(device_, ordinal_, "download");
}

CudaDevice::~CudaDevice() {
  for (auto& [key, plan] : fft_plans_) cufft_library().destroy(plan);
  if (cublas_) cublas_library().destroy(cublas_);
  if (cusolver_params_) cusolver_library().destroy_params(cusolver_params_);
  if (cusolver_) cusolver_library().destroy(cusolver_);
}

void CudaDevice::activate() const { check(cudaSetDevice(ordinal_), who_, "cudaSetDevice"); }

std::shared_ptr<void> CudaDevice::allocate(size_t bytes) {
  void* p = allocator_->allocate(bytes);
  // The deleter holds the allocator: a buffer may outlive the device object.
  return std::shared_ptr<void>(p, [allocator = allocator_](void* q) { allocator->free(q); });
}

cublasHandle_t CudaDevice::cublas(cudaStream_t stream) {
  if (!cublas_) check_cublas(cublas_library().create(&cublas_), who_, "cublasCreate");
  check_cublas(cublas_library().set_stream(cublas_, stream), who_, "cublasSetStream");
  return cublas_;
}

cusolverDnHandle_t CudaDevice::cusolver(cudaStream_t stream) {
  if (!cusolver_) check_cusolver(cusolver_library().create(&cusolver_), who_, "cusolverDnCreate");
  check_cusolver(cusolver_library().set_stream(cusolver_, stream), who_, "cusolverDnSetStream");
  return cusolver_;
}

cusolverDnParams_t CudaDevice::cusolver_params() {
  if (!cusolver_params_) check_cusolver(cusolver_library().create_params(&cusolver_params_), who_, "cusolverDnCreateParams");
  return cusolver_params_;
}

cufftHandle CudaDevice::fft_plan(int64_t n, int64_t rows, bool double_precision, cudaStream_t stream) {
  const auto key = std::make_tuple(n, rows, double_precision);
  if (auto it = fft_plans_.find(key); it != fft_plans_.end()) {
    check_cufft(cufft_library().set_stream(it->second, stream), who_, "cufftSetStream");
    return it->second;
  }
  if (n > std::numeric_limits<int>::max() || rows > std::numeric_limits<int>::max())
    throw DeviceError(error_message(
        who_, fmt::format("fft of {} rows of length {}: cuFFT plans take 32-bit sizes", rows, n), "", ""));
  cufftHandle plan = 0;
  int length = static_cast<int>(n);
  check_cufft(cufft_library().plan_many(&plan, 1, &length, nullptr, 1, length, nullptr, 1, length,
                                        double_precision ? CUFFT_Z2Z : CUFFT_C2C, static_cast<int>(rows)),
              who_, fmt::format("cufftPlanMany (length {}, {} rows)", n, rows));
  check_cufft(cufft_library().set_stream(plan, stream), who_, "cufftSetStream");
  fft_plans_.emplace(key, plan);
  return plan;
}

}  // namespace sluice::cuda
