// The CUDA backend: device memory from the caching allocator, transfers on
// their own queues (uploads of chunk k+1 overlap the computation of chunk
// k), functions compiled by CudaExecutable.
//
// Host memory that sluice allocates in large blocks is pinned once a GPU is
// used (devices/detail/host_memory.h), so uploads from it run at the bus's speed
// without staging; other host memory is staged by the driver.

#include <sluice/devices/cuda/cuda_backend.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include <sluice/base/detail/log.h>
#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_capabilities.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_device.h>
#include <sluice/devices/cuda/cuda_executable.h>
#include <sluice/devices/cuda/cuda_ipc.h>
#include <sluice/devices/detail/host_memory.h>

namespace sluice::cuda {
namespace {

// Copies from host memory below this size are staged by the driver (the
// call returns once it holds the bytes); asking whether memory is pinned
// costs more than they do.
constexpr size_t kPinnedCheckBytes = size_t{64} << 10;

bool is_pinned(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int count, const ClientOptions& options)
      : count_(count), options_(options), devices_(static_cast<size_t>(count), nullptr) {
    for (int i = 0; i < count; ++i) {
      // Host threads waiting on the device sleep rather than spin (the
      // device's context takes this when it is made, so before anything else).
      cudaSetDevice(i);
      if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) cudaGetLastError();
    }
  }

  int device_count() const override { return count_; }

  std::string options_str(const ClientOptions& o) const override {
    return fmt::format("default_device_id {}, preallocate {}, memory_fraction {}", o.default_device_id, o.preallocate,
                       o.memory_fraction);
  }

  Capabilities capabilities() const override { return cuda_capabilities(); }
  std::optional<std::string> declines(const Node& node) const override { return cuda_declines(node); }

  BufferPtr allocate(Device device, size_t bytes) override {
    CudaDevice& d = of(device);
    auto b = std::make_shared<Buffer>();
    b->device = device;
    b->memory = d.allocate(bytes);
    b->data = b->memory.get();
    b->bytes = bytes;
    return b;
  }

  void upload(const void* src, Buffer& dst, std::shared_ptr<const void> src_owner) override {
    if (dst.bytes == 0) return;
    CudaDevice& d = of(dst.device);
    d.activate();
    CudaQueue& q = d.uploads();
    const bool pinned = dst.bytes >= kPinnedCheckBytes && is_pinned(src);
    check(cudaMemcpyAsync(dst.data, src, dst.bytes, cudaMemcpyHostToDevice, q.stream()), d.who(),
          fmt::format("uploading {} bytes", dst.bytes));
    // From pinned memory the copy reads src while it runs (pageable memory
    // is staged by the driver before the call returns): src's owner is held
    // until the copy is done, or, when the caller owns src, the copy is
    // waited for. Either way the device's compute queue goes on meanwhile.
    std::vector<std::shared_ptr<void>> keep{dst.memory};
    if (pinned && src_owner) keep.push_back(std::const_pointer_cast<void>(src_owner));
    dst.ready = q.record(std::move(keep));
    if (pinned && !src_owner) dst.ready->wait();
  }

  void download(const Buffer& src, void* dst) override {
    if (src.bytes == 0) return;
    CudaDevice& d = of(src.device);
    d.activate();
    CudaQueue& q = d.downloads();
    q.wait_for({&src});
    check(cudaMemcpyAsync(dst, src.data, src.bytes, cudaMemcpyDeviceToHost, q.stream()), d.who(),
          fmt::format("downloading {} bytes", src.bytes));
    q.synchronize();
  }

  void copy(const Buffer& src, Buffer& dst) override {
    const size_t bytes = std::min(src.bytes, dst.bytes);
    if (bytes == 0) return;
    CudaDevice& d = of(dst.device);
    d.activate();
    CudaQueue& q = d.compute();
    std::lock_guard lock(d.enqueue());
    q.wait_for({&src});
    if (src.device == dst.device)
      check(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice, q.stream()), d.who(),
            "a device-to-device copy");
    else
      check(cudaMemcpyPeerAsync(dst.data, d.ordinal(), src.data, of(src.device).ordinal(), bytes, q.stream()), d.who(),
            "a copy between GPUs");
    dst.ready = q.record({src.memory, dst.memory});
  }

  std::string ipc_handle(const BufferPtr& buffer, std::shared_ptr<void>& keep) override {
    buffer->wait();
    return export_ipc(of(buffer->device), buffer, keep);
  }

  BufferPtr open_ipc(std::string_view text, size_t bytes, std::span<const Device> devices) override {
    const CudaIpcHandle handle = CudaIpcHandle::parse(text);
    for (const Device& device : devices)
      if (gpu_uuid(device.id()) == handle.device) return cuda::open_ipc(of(device), handle, bytes);
    throw DeviceError(error_message("from_pointer", "handle", "one of a GPU of this machine",
                                    fmt::format("one of GPU {}", text.substr(0, text.find(":memory=")))));
  }

  std::optional<IpcDeviceId> ipc_device(int id) override { return gpu_uuid(id); }

  std::unique_ptr<ExecutableImpl> compile(const Function& f, Device device) override {
    auto exe = std::make_unique<CudaExecutable>(f, of(device));
    logger().debug("{}: compiled a function of {} nodes", device.str(), f.outputs().size());
    return exe;
  }

 private:
  // The device's state, made when it is first used (its memory reserved
  // then, when preallocating). Never freed: buffers and queues may be in use
  // while static objects are destroyed at exit, when CUDA may be gone.
  CudaDevice& of(Device device) {
    std::lock_guard lock(mutex_);
    CudaDevice*& d = devices_.at(static_cast<size_t>(device.id()));
    if (!d) {
      d = new CudaDevice(device, device.id(), options_);
      // From the first GPU used on: a process whose client is made but whose
      // GPUs are never used pins nothing (pinning makes a CUDA context).
      pin_host_memory({[](void* p, size_t bytes) {
                         if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) cudaGetLastError();
                       },
                       [](void* p) {
                         if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
                       }});
    }
    return *d;
  }

  int count_;
  ClientOptions options_;
  std::mutex mutex_;  // guards devices_
  std::vector<CudaDevice*> devices_;
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver, no GPU: not available, not an error
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(const ClientOptions& options) {
  const int n = cuda_device_count();
  if (n == 0) return nullptr;
  return std::make_unique<CudaBackend>(n, options);
}

}  // namespace sluice::cuda
