#include <sluice/devices/cpu/kernels/blas_library.h>

#include <dlfcn.h>

#include <string_view>
#include <type_traits>

#include <sluice/base/detail/error_format.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

// By soname, as the linker would have recorded them: Debian's alternatives
// choose which OpenBLAS build (pthread, openmp, serial) answers.
constexpr const char* kOpenBlas = "libopenblas.so.0";
constexpr const char* kLapacke = "liblapacke.so.3";

void* open_library(const char* soname) {
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw DeviceError(error_message("host backend", fmt::format("library {}", soname),
                                    "one this process loads (Debian's libopenblas0 and liblapacke)",
                                    why ? why : "no reason given"));
  }
  return handle;  // kept for the life of the process, as a linked library is
}

BlasLibrary load() {
  void* openblas = open_library(kOpenBlas);
  void* lapacke = open_library(kLapacke);
  BlasLibrary library;
  auto resolve = [&](auto& pointer, std::string_view name) {
    const bool from_lapacke = name.starts_with("LAPACKE_");
    const char* soname = from_lapacke ? kLapacke : kOpenBlas;
    void* symbol = ::dlsym(from_lapacke ? lapacke : openblas, name.data());
    if (!symbol)
      throw DeviceError(error_message("host backend", fmt::format("function {}", name),
                                      fmt::format("one that {} exports", soname), "none"));
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(symbol);
  };
#define SLUICE_BLAS_RESOLVE(name) resolve(library.name, #name);
  SLUICE_BLAS_FUNCTIONS(SLUICE_BLAS_RESOLVE)
#undef SLUICE_BLAS_RESOLVE
  return library;
}

}  // namespace

const BlasLibrary& blas() {
  static const BlasLibrary library = load();
  return library;
}

}  // namespace sluice::cpu
