#include <sluice/devices/cuda/cuda_check.h>

#include <fmt/format.h>

#include <sluice/base/error.h>

namespace sluice::cuda {

void check(cudaError_t status, std::string_view where, std::string_view what) {
  if (status == cudaSuccess) return;
  throw DeviceError(error_message(
      where, fmt::format("{} failed: {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status)),
      "", ""));
}

void check_cublas(int status, std::string_view where, std::string_view what) {
  if (status == 0) return;  // CUBLAS_STATUS_SUCCESS
  throw DeviceError(error_message(where, fmt::format("{} failed: cuBLAS status {}", what, status), "", ""));
}

void check_cufft(int status, std::string_view where, std::string_view what) {
  if (status == 0) return;  // CUFFT_SUCCESS
  throw DeviceError(error_message(where, fmt::format("{} failed: cuFFT status {}", what, status), "", ""));
}

void check_cusolver(int status, std::string_view where, std::string_view what) {
  if (status == 0) return;  // CUSOLVER_STATUS_SUCCESS
  throw DeviceError(error_message(where, fmt::format("{} failed: cuSOLVER status {}", what, status), "", ""));
}

}  // namespace sluice::cuda
