#include <sluice/devices/cuda/cuda_libraries.h>

#include <dlfcn.h>
#include <fmt/format.h>

#include <sluice/base/error.h>

namespace sluice::cuda {
namespace {

// A library loaded for the life of the process (never closed: its functions
// may be called until the process ends). Its name is the soname found at
// build time (SLUICE_*_LIBRARY, devices/CMakeLists.txt).
class Library {
 public:
  explicit Library(const char* name) : name_(name), handle_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_)
      throw DeviceError(
          error_message("cuda",
                        fmt::format("cannot load {} ({}): the CUDA toolkit's libraries must be where "
                                    "the dynamic loader finds them (ldconfig, LD_LIBRARY_PATH)",
                                    name_, dlerror()),
                        "", ""));
  }
  template <typename F>
  void bind(F& function, const char* symbol) const {
    function = reinterpret_cast<F>(dlsym(handle_, symbol));
    if (!function)
      throw DeviceError(error_message(
          "cuda", fmt::format("{} has no {}: a CUDA toolkit older than sluice's", name_, symbol), "", ""));
  }

 private:
  const char* name_;
  void* handle_;
};

}  // namespace

const NvrtcLibrary& nvrtc_library() {
  static const NvrtcLibrary library = [] {
    const Library l(SLUICE_NVRTC_LIBRARY);
    NvrtcLibrary f;
    l.bind(f.create_program, "nvrtcCreateProgram");
    l.bind(f.compile_program, "nvrtcCompileProgram");
    l.bind(f.destroy_program, "nvrtcDestroyProgram");
    l.bind(f.get_program_log_size, "nvrtcGetProgramLogSize");
    l.bind(f.get_program_log, "nvrtcGetProgramLog");
    l.bind(f.get_cubin_size, "nvrtcGetCUBINSize");
    l.bind(f.get_cubin, "nvrtcGetCUBIN");
    l.bind(f.get_error_string, "nvrtcGetErrorString");
    l.bind(f.version, "nvrtcVersion");
    return f;
  }();
  return library;
}

const CublasLibrary& cublas_library() {
  static const CublasLibrary library = [] {
    const Library l(SLUICE_CUBLAS_LIBRARY);
    CublasLibrary f;
    l.bind(f.create, "cublasCreate_v2");
    l.bind(f.destroy, "cublasDestroy_v2");
    l.bind(f.set_stream, "cublasSetStream_v2");
    l.bind(f.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
    l.bind(f.strsm, "cublasStrsm_v2");
    l.bind(f.dtrsm, "cublasDtrsm_v2");
    l.bind(f.ctrsm, "cublasCtrsm_v2");
    l.bind(f.ztrsm, "cublasZtrsm_v2");
    return f;
  }();
  return library;
}

const CufftLibrary& cufft_library() {
  static const CufftLibrary library = [] {
    const Library l(SLUICE_CUFFT_LIBRARY);
    CufftLibrary f;
    l.bind(f.plan_many, "cufftPlanMany");
    l.bind(f.set_stream, "cufftSetStream");
    l.bind(f.exec_c2c, "cufftExecC2C");
    l.bind(f.exec_z2z, "cufftExecZ2Z");
    l.bind(f.destroy, "cufftDestroy");
    return f;
  }();
  return library;
}

const CusolverLibrary& cusolver_library() {
  static const CusolverLibrary library = [] {
    const Library l(SLUICE_CUSOLVER_LIBRARY);
    CusolverLibrary f;
    l.bind(f.create, "cusolverDnCreate");
    l.bind(f.destroy, "cusolverDnDestroy");
    l.bind(f.set_stream, "cusolverDnSetStream");
    l.bind(f.create_params, "cusolverDnCreateParams");
    l.bind(f.destroy_params, "cusolverDnDestroyParams");
    l.bind(f.potrf_buffer_size, "cusolverDnXpotrf_bufferSize");
    l.bind(f.potrf, "cusolverDnXpotrf");
    l.bind(f.getrf_buffer_size, "cusolverDnXgetrf_bufferSize");
    l.bind(f.getrf, "cusolverDnXgetrf");
    l.bind(f.getrs, "cusolverDnXgetrs");
    l.bind(f.geqrf_buffer_size, "cusolverDnXgeqrf_bufferSize");
    l.bind(f.geqrf, "cusolverDnXgeqrf");
    l.bind(f.syevd_buffer_size, "cusolverDnXsyevd_bufferSize");
    l.bind(f.syevd, "cusolverDnXsyevd");
    l.bind(f.sorgqr_buffer_size, "cusolverDnSorgqr_bufferSize");
    l.bind(f.dorgqr_buffer_size, "cusolverDnDorgqr_bufferSize");
    l.bind(f.cungqr_buffer_size, "cusolverDnCungqr_bufferSize");
    l.bind(f.zungqr_buffer_size, "cusolverDnZungqr_bufferSize");
    l.bind(f.sorgqr, "cusolverDnSorgqr");
    l.bind(f.dorgqr, "cusolverDnDorgqr");
    l.bind(f.cungqr, "cusolverDnCungqr");
    l.bind(f.zungqr, "cusolverDnZungqr");
    return f;
  }();
  return library;
}

}  // namespace sluice::cuda
