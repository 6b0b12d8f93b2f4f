#include <sluice/devices/cuda/nvrtc_compiler.h>

#include <fmt/format.h>

#include <memory>

#include <sluice/devices/cuda/cuda_libraries.h>
#include <sluice/base/error.h>

namespace sluice::cuda {
namespace {

void check(nvrtcResult status, const char* what) {
  if (status != NVRTC_SUCCESS)
    throw DeviceError(error_message(
        "cuda", fmt::format("NVRTC {} failed: {}", what, nvrtc_library().get_error_string(status)), "", ""));
}

// The first lines of a log: a kernel that does not compile says why early.
std::string head_of(const std::string& log, size_t lines) {
  size_t at = 0;
  for (size_t i = 0; i < lines && at != std::string::npos; ++i) at = log.find('\n', at + 1);
  return at == std::string::npos ? log : log.substr(0, at) + "\n...";
}

}  // namespace

std::vector<char> nvrtc_compile(const KernelSource& source, int arch) {
  const NvrtcLibrary& nvrtc = nvrtc_library();
  nvrtcProgram program = nullptr;
  check(nvrtc.create_program(&program, source.code.c_str(), "sluice_kernel.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(
      &program, [](nvrtcProgram* p) { nvrtc_library().destroy_program(p); });
  const std::string gpu = fmt::format("--gpu-architecture=sm_{}", arch);
  const char* options[] = {gpu.c_str(), "--std=c++17", "--device-as-default-execution-space"};
  const nvrtcResult compiled = nvrtc.compile_program(program, 3, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtc.get_program_log_size(program, &size);
    std::string log(size, '\0');
    if (size) nvrtc.get_program_log(program, log.data());
    const std::string entry = source.entries.empty() ? std::string("kernel") : source.entries.front();
    throw DeviceError(
        error_message("cuda",
                      fmt::format("the generated kernel '{}' did not compile for sm_{}: {}\n{}", entry, arch,
                                  nvrtc.get_error_string(compiled), head_of(log, 20)),
                      "", ""));
  }
  size_t size = 0;
  check(nvrtc.get_cubin_size(program, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtc.get_cubin(program, cubin.data()), "nvrtcGetCUBIN");
  return cubin;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtc_library().version(&major, &minor), "nvrtcVersion");
  return fmt::format("{}.{}", major, minor);
}

}  // namespace sluice::cuda
