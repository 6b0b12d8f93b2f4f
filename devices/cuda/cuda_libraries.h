#pragma once
// NVRTC, cuBLAS and cuFFT, loaded (dlopen) when the CUDA backend first needs
// each: linked at build time, they cost every sluice program about 0.2 s and
// 250 MB of memory when it starts, with a GPU or without one. Only the CUDA
// runtime is linked (statically); it loads the driver itself. A library that
// cannot be loaded is a DeviceError naming it.
// Thread safety: every function may be called from any thread.

#include <cublas_v2.h>
#include <cufft.h>
#include <nvrtc.h>

namespace sluice::cuda {

struct NvrtcLibrary {
  decltype(&::nvrtcCreateProgram) create_program;
  decltype(&::nvrtcCompileProgram) compile_program;
  decltype(&::nvrtcDestroyProgram) destroy_program;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size;
  decltype(&::nvrtcGetProgramLog) get_program_log;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size;
  decltype(&::nvrtcGetCUBIN) get_cubin;
  decltype(&::nvrtcGetErrorString) get_error_string;
  decltype(&::nvrtcVersion) version;
};
const NvrtcLibrary& nvrtc_library();

struct CublasLibrary {
  decltype(&::cublasCreate_v2) create;
  decltype(&::cublasDestroy_v2) destroy;
  decltype(&::cublasSetStream_v2) set_stream;
  // The C entry point (the header overloads it for C++ with another compute type).
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t);
};
const CublasLibrary& cublas_library();

struct CufftLibrary {
  decltype(&::cufftPlanMany) plan_many;
  decltype(&::cufftSetStream) set_stream;
  decltype(&::cufftExecC2C) exec_c2c;
  decltype(&::cufftExecZ2Z) exec_z2z;
  decltype(&::cufftDestroy) destroy;
};
const CufftLibrary& cufft_library();

}  // namespace sluice::cuda
