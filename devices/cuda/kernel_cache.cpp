#include <sluice/devices/cuda/kernel_cache.h>

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <utility>

#include <sluice/base/detail/cache_path.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/nvrtc_compiler.h>
#include <sluice/base/detail/log.h>

namespace sluice::cuda {
namespace {

struct Loaded {
  cudaLibrary_t library = nullptr;
  std::vector<cudaKernel_t> kernels;
};

struct Cache {
  std::mutex mutex;  // held while compiling: one compile of each source
  std::map<std::pair<int, std::string>, Loaded> loaded;
  std::string folder = cache_path("SLUICE_CUDA_CACHE", "cuda-kernels");
  bool warned = false;
};

Cache& cache() {
  // Never destroyed: libraries stay loaded until the process ends, and CUDA
  // may already be torn down when static destructors run.
  static Cache* c = new Cache;
  return *c;
}

// FNV-1a, 64 bits, from `seed`: two seeds make the 128-bit name.
uint64_t fnv1a(const std::string& text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string cache_file(const Cache& c, const std::string& code, int arch) {
  static const std::string version = nvrtc_version();
  return fmt::format("{}/{:016x}{:016x}-sm{}-nvrtc{}.cubin", c.folder, fnv1a(code, 0xcbf29ce484222325ULL),
                     fnv1a(code, 0x84222325cbf29ce4ULL), arch, version);
}

void warn_once(Cache& c, const std::string& what) {
  if (c.warned) return;
  c.warned = true;
  logger().warn("cuda kernel cache: {}; kernels are compiled in this process (SLUICE_CUDA_CACHE=off: no cache)", what);
}

std::optional<std::vector<char>> read_cached(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return std::nullopt;
  return bytes;
}

void write_cached(Cache& c, const std::string& path, const std::vector<char>& cubin) {
  std::error_code error;
  std::filesystem::create_directories(c.folder, error);
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out) {
      warn_once(c, fmt::format("cannot write {}", temporary));
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    warn_once(c, fmt::format("cannot write {}: {}", path, error.message()));
    std::filesystem::remove(temporary, error);
  }
}

// Loads the kernels of `cubin` into `l`; CUDA's error when it cannot (a
// damaged file).
cudaError_t load(const std::vector<char>& cubin, const KernelSource& source, Loaded& l) {
  const cudaError_t status = cudaLibraryLoadData(&l.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return status;
  }
  for (const std::string& entry : source.entries) {
    cudaKernel_t k = nullptr;
    check(cudaLibraryGetKernel(&k, l.library, entry.c_str()), "cuda", "cudaLibraryGetKernel " + entry);
    l.kernels.push_back(k);
  }
  return cudaSuccess;
}

}  // namespace

std::string kernel_cache_folder() { return cache().folder; }

const std::vector<cudaKernel_t>& load_kernels(const KernelSource& source, int arch) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  auto key = std::make_pair(arch, source.code);
  if (auto it = c.loaded.find(key); it != c.loaded.end()) return it->second.kernels;
  const std::string path = c.folder.empty() ? std::string() : cache_file(c, source.code, arch);
  Loaded l;
  bool loaded = false;
  if (!path.empty())
    if (std::optional<std::vector<char>> cached = read_cached(path)) loaded = load(*cached, source, l) == cudaSuccess;
  if (!loaded) {
    l = {};
    const std::vector<char> cubin = nvrtc_compile(source, arch);
    check(load(cubin, source, l), "cuda", "loading a kernel NVRTC compiled");
    logger().debug("cuda: compiled kernel '{}' for sm_{} ({} bytes of code)", source.entries.front(), arch,
                   cubin.size());
    if (!path.empty()) write_cached(c, path, cubin);
  }
  return c.loaded.emplace(std::move(key), std::move(l)).first->second.kernels;
}

void launch(cudaKernel_t kernel, Launch geometry, const std::vector<Word>& words, cudaStream_t stream,
            std::string_view who, std::string_view what) {
  // The kernel takes one struct of words by value: its bytes are the array.
  void* args[] = {const_cast<Word*>(words.data())};
  check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(geometry.grid), dim3(geometry.block), args, 0,
                         stream),
        who, fmt::format("launching the kernel of {}", what));
}

}  // namespace sluice::cuda
