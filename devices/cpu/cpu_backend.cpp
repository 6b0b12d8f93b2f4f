// The host backend: one device, host memory from a pool, plans run by
// CpuExecutable on oneTBB.

#include <sluice/devices/cpu/cpu_backend.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include <sluice/devices/cpu/cpu_executable.h>
#include <sluice/devices/cpu/kernels/fft_wisdom.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/plan.h>
#include <sluice/devices/cpu/thread_pool.h>
#include <sluice/devices/detail/host_memory.h>

namespace sluice::cpu {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const ClientOptions& options) { start_thread_pool(options); }

  int device_count() const override { return 1; }

  // The host has no device memory: default_device_id (always 0),
  // preallocate and memory_fraction do not apply to it.
  std::string options_str(const ClientOptions& o) const override {
    return fmt::format("host_threads {}, raise_worker_limit {}, blas_threads {}", o.host_threads,
                       o.raise_worker_limit, o.blas_threads);
  }

  bool host_memory() const override { return true; }
  std::string plans() const override { return fft_plans(); }
  void use_plans(const std::string& text) override { use_fft_plans(text); }

  Capabilities capabilities() const override { return host_capabilities(); }

  BufferPtr allocate(Device device, size_t bytes) override {
    auto b = std::make_shared<Buffer>();
    b->device = device;
    b->memory = host_allocate(bytes);
    b->data = b->memory.get();
    b->bytes = bytes;
    return b;
  }

  void upload(const void* src, Buffer& dst, std::shared_ptr<const void>) override {
    if (dst.bytes) std::memcpy(dst.data, src, dst.bytes);
  }

  void download(const Buffer& src, void* dst) override {
    src.wait();
    if (src.bytes) std::memcpy(dst, src.data, src.bytes);
  }

  void copy(const Buffer& src, Buffer& dst) override {
    src.wait();
    size_t bytes = std::min(src.bytes, dst.bytes);
    if (bytes) std::memcpy(dst.data, src.data, bytes);
  }

  std::unique_ptr<ExecutableImpl> compile(const Function& f, Device device) override {
    Plan plan = make_plan(f);
    if (auto log = spdlog::get("sluice"))
      log->debug(
          "host: compiled {} steps, {} slots, {} constants, {} bytes of scratch per run, {} elements touched",
          plan.instructions.size(), plan.lowered.slots.size(), plan.constants.size(), plan.lowered.scratch_bytes,
          plan.lowered.work);
    return std::make_unique<CpuExecutable>(f, device, std::move(plan));
  }
};

}  // namespace

Capabilities host_capabilities() {
  Capabilities caps;
  for (int op = 0; op < kOpCount; ++op) caps.ops.push_back(static_cast<Op>(op));
  for (int t = 0; t < kDTypeCount; ++t) caps.dtypes.push_back(static_cast<DType>(t));
  caps.native_blocks = native_block_names();
  return caps;
}

std::unique_ptr<Backend> make_cpu_backend(const ClientOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace sluice::cpu
