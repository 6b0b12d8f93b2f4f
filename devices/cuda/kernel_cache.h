#pragma once
// Generated kernels, compiled once per (source, architecture) for the life
// of the process and loaded as a CUDA library (a library is not tied to one
// device's context: every device of that architecture runs it).
//
// Compiled kernels are also kept on disk, so that the processes of a
// pipeline and later runs do not compile them again (NVRTC takes about 0.1 s
// a kernel): SLUICE_CUDA_CACHE names the folder (default
// $XDG_CACHE_HOME/sluice/cuda-kernels or ~/.cache/sluice/cuda-kernels;
// "off": none). A file is named by a 128-bit hash of the source, the
// architecture and NVRTC's version, and written whole or not at all (a
// temporary renamed); a folder that cannot be read or written is one
// warning, never an error: kernels are then compiled as without it.
// Thread safety: every function may be called from any thread.

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>
#include <vector>

#include <sluice/devices/cuda/kernel_params.h>
#include <sluice/devices/cuda/kernel_source.h>
#include <sluice/devices/cuda/launch_geometry.h>

namespace sluice::cuda {

// The entry points of `source` (source.entries, in order), compiled for sm_<arch>.
const std::vector<cudaKernel_t>& load_kernels(const KernelSource& source, int arch);

// The folder in use; empty with SLUICE_CUDA_CACHE=off.
std::string kernel_cache_folder();

// Queues `kernel` on `stream` with its parameter words; `what` names it in errors.
void launch(cudaKernel_t kernel, Launch geometry, const std::vector<Word>& words, cudaStream_t stream,
            std::string_view who, std::string_view what);

}  // namespace sluice::cuda
