// Tensor::to_pointer, to_shared and from_pointer: a tensor's memory handed to
// code in this process or mapped by another one (devices/shared_memory.h for
// host memory; a device's memory through its backend, cuda/cuda_ipc.h).

#include <cstring>
#include <vector>

#include <sluice/devices/detail/backend_impl.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

Tensor Tensor::to_shared() const {
  check_live("to_shared");
  const auto bytes = static_cast<size_t>(spec_.bytes());
  if (buffer_->device.host_memory()) {
    buffer_->wait();
    if (find_shared(buffer_->data, bytes)) return *this;
  }
  std::shared_ptr<void> memory = shared_allocate(bytes);
  copy_to_host(memory.get());
  auto buffer = std::make_shared<Buffer>();
  buffer->device = host();
  buffer->data = memory.get();
  buffer->bytes = bytes;
  buffer->memory = std::move(memory);
  return Tensor(spec_, std::move(buffer));
}

TensorPointer Tensor::to_pointer(const PointerOptions& options) const {
  check_live("to_pointer");
  buffer_->wait();
  const auto bytes = static_cast<size_t>(spec_.bytes());
  if (options.mode == PointerMode::Local)
    return {PointerMode::Local, buffer_->device, buffer_->data, "", bytes, buffer_->memory};
  if (!buffer_->device.host_memory()) {  // the device's own handle (a GPU's: cuda/cuda_ipc.h)
    std::shared_ptr<void> keep;
    std::string handle = buffer_->device.backend().ipc_handle(buffer_, keep);
    return {PointerMode::Ipc, buffer_->device, nullptr, std::move(handle), bytes, std::move(keep)};
  }
  if (options.require_shared && !find_shared(buffer_->data, bytes))
    throw DeviceError(error_message("to_pointer", "mode ipc with require_shared",
                                    "a tensor in shared memory (to_shared, OutputMemory::Shared)",
                                    fmt::format("a {} tensor in private memory", spec_)));
  const Tensor shared = to_shared();
  const std::optional<SharedHandle> handle = find_shared(shared.buffer()->data, bytes);
  if (!handle)
    throw InternalError(
        error_message("to_pointer", "a tensor to_shared made is not in shared memory", "", ""));
  return {PointerMode::Ipc, host(), nullptr, handle->str(), bytes, shared.buffer()->memory};
}

std::string Backend::ipc_handle(const BufferPtr& buffer, std::shared_ptr<void>& /*keep*/) {
  throw DeviceError(
      error_message("to_pointer", "mode ipc", "a tensor whose device shares its memory",
                    fmt::format("one on {}, which shares none: to_host first", buffer->device.str())));
}

BufferPtr Backend::open_ipc(std::string_view handle, size_t /*bytes*/, std::span<const Device> /*devices*/) {
  throw DeviceError(error_message("from_pointer", "handle", "one of a platform that opens them",
                                  fmt::format("'{}'", handle)));
}

std::optional<IpcDeviceId> Backend::ipc_device(int /*id*/) { return std::nullopt; }

std::optional<IpcDeviceId> ipc_device_id(const Device& device) {
  return device.backend().ipc_device(device.id());
}

Tensor from_pointer(const TensorPointer& pointer, const Spec& spec) {
  const auto needed = static_cast<size_t>(spec.bytes());
  auto buffer = std::make_shared<Buffer>();
  buffer->bytes = needed;
  if (pointer.mode == PointerMode::Local) {
    if (!pointer.address && needed > 0)
      throw ValueError(error_message("from_pointer", "address", fmt::format("the data of {}", spec), "null"));
    if (pointer.bytes != 0 && pointer.bytes < needed)
      throw ValueError(error_message("from_pointer", "bytes", fmt::format("at least {} for {}", needed, spec),
                                     pointer.bytes));
    buffer->device = pointer.device;
    buffer->data = pointer.address;
    buffer->memory = pointer.owner;
    buffer->device.backend();  // DeviceError for a default-constructed device, before the tensor exists
    return Tensor(spec, std::move(buffer));
  }
  // "sluice-<platform>-ipc:...": that platform's device memory, opened by its backend.
  if (!pointer.handle.starts_with("sluice-shm:")) {
    for (const std::string& platform : known_platforms()) {
      if (!pointer.handle.starts_with(fmt::format("sluice-{}-ipc:", platform))) continue;
      const Client& c = client(platform);
      std::vector<Device> devices;
      for (int id = 0; id < c.device_count(); ++id) devices.push_back(c.device(id));
      return Tensor(spec, c.backend().open_ipc(pointer.handle, needed, devices));
    }
  }
  const SharedHandle handle = SharedHandle::parse(pointer.handle);
  if (handle.bytes < needed)
    throw ValueError(error_message("from_pointer", "handle", fmt::format("at least {} bytes for {}", needed, spec),
                                   fmt::format("{} bytes", handle.bytes)));
  buffer->memory = map_shared(handle);
  buffer->read_only = true;  // mapped read-only
  buffer->device = host();
  buffer->data = buffer->memory.get();
  return Tensor(spec, std::move(buffer));
}

}  // namespace sluice
