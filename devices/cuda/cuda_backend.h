#pragma once
// The CUDA backend: the `cuda` client, one Device per GPU the driver shows.
// Absent (not an error) where there is no driver or no GPU.

#include <memory>

#include <sluice/devices/cuda/cuda_capabilities.h>
#include <sluice/devices/detail/backend_impl.h>

namespace sluice::cuda {

// Null when no GPU can be used here.
std::unique_ptr<Backend> make_cuda_backend(const ClientOptions& options);
// GPUs the driver shows; 0 where there is no driver.
int cuda_device_count();

}  // namespace sluice::cuda
