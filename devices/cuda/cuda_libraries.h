#pragma once
// NVRTC, cuBLAS, cuFFT and cuSOLVER, loaded (dlopen) when the CUDA backend first needs
// each: linked at build time, they cost every sluice program about 0.2 s and
// 250 MB of memory when it starts, with a GPU or without one. Only the CUDA
// runtime is linked (statically); it loads the driver itself. A library that
// cannot be loaded is a DeviceError naming it.
// Thread safety: every function may be called from any thread.

#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>
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
  decltype(&::cublasStrsm_v2) strsm;
  decltype(&::cublasDtrsm_v2) dtrsm;
  decltype(&::cublasCtrsm_v2) ctrsm;
  decltype(&::cublasZtrsm_v2) ztrsm;
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

// The dense solvers: the 64-bit generic API where it has the routine, the
// typed orgqr/ungqr where it has not.
struct CusolverLibrary {
  decltype(&::cusolverDnCreate) create;
  decltype(&::cusolverDnDestroy) destroy;
  decltype(&::cusolverDnSetStream) set_stream;
  decltype(&::cusolverDnCreateParams) create_params;
  decltype(&::cusolverDnDestroyParams) destroy_params;
  decltype(&::cusolverDnXpotrf_bufferSize) potrf_buffer_size;
  decltype(&::cusolverDnXpotrf) potrf;
  decltype(&::cusolverDnXgetrf_bufferSize) getrf_buffer_size;
  decltype(&::cusolverDnXgetrf) getrf;
  decltype(&::cusolverDnXgetrs) getrs;
  decltype(&::cusolverDnXgeqrf_bufferSize) geqrf_buffer_size;
  decltype(&::cusolverDnXgeqrf) geqrf;
  decltype(&::cusolverDnXsyevd_bufferSize) syevd_buffer_size;
  decltype(&::cusolverDnXsyevd) syevd;
  decltype(&::cusolverDnSorgqr_bufferSize) sorgqr_buffer_size;
  decltype(&::cusolverDnDorgqr_bufferSize) dorgqr_buffer_size;
  decltype(&::cusolverDnCungqr_bufferSize) cungqr_buffer_size;
  decltype(&::cusolverDnZungqr_bufferSize) zungqr_buffer_size;
  decltype(&::cusolverDnSorgqr) sorgqr;
  decltype(&::cusolverDnDorgqr) dorgqr;
  decltype(&::cusolverDnCungqr) cungqr;
  decltype(&::cusolverDnZungqr) zungqr;
};
const CusolverLibrary& cusolver_library();

}  // namespace sluice::cuda
