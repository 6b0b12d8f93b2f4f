#pragma once
// Generated CUDA C++ to machine code with NVRTC, for one GPU architecture.
// NVRTC needs no GPU and no driver: the tests compile every generated
// kernel on machines without one.

#include <string>
#include <vector>

#include <sluice/devices/cuda/kernel_source.h>

namespace sluice::cuda {

// The CUBIN of `source` for sm_<arch> (80 for sm_80, 90 for sm_90, ...);
// DeviceError with NVRTC's log when it does not compile.
std::vector<char> nvrtc_compile(const KernelSource& source, int arch);

// NVRTC's version, "13.0".
std::string nvrtc_version();

}  // namespace sluice::cuda
