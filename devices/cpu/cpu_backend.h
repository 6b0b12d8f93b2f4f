#pragma once
// The host backend: oneDNN, OpenBLAS, LAPACK, FFTW, SIMD kernels, oneTBB.

#include <memory>

#include <sluice/devices/detail/backend_impl.h>

namespace sluice::cpu {

std::unique_ptr<Backend> make_cpu_backend(const ClientOptions& options);
// The host is one device, whatever its cores (they are the device's threads).
inline int host_device_count() { return 1; }
// The whole catalogue, in every dtype.
Capabilities host_capabilities();

}  // namespace sluice::cpu
