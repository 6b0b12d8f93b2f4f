#pragma once
// CUDA, cuBLAS, cuFFT, cuSOLVER and NVRTC status codes as DeviceErrors: "cuda:0:
// cudaMalloc of 1024 bytes failed: cudaErrorMemoryAllocation (out of
// memory)". Every call into those libraries goes through one of these.

#include <cuda_runtime_api.h>

#include <string_view>

namespace sluice::cuda {

void check(cudaError_t status, std::string_view where, std::string_view what);
void check_cublas(int status, std::string_view where, std::string_view what);
void check_cufft(int status, std::string_view where, std::string_view what);
void check_cusolver(int status, std::string_view where, std::string_view what);

}  // namespace sluice::cuda
