#include <cstring>

#include <sluice/devices/detail/backend_impl.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

Tensor::Tensor(Spec spec, BufferPtr buffer) : spec_(std::move(spec)), buffer_(std::move(buffer)) {
  if (buffer_ && static_cast<int64_t>(buffer_->bytes) < spec_.bytes())
    throw DeviceError(error_message("tensor", "buffer", fmt::format("{} bytes for {}", spec_.bytes(), spec_),
                                    fmt::format("{} bytes", buffer_->bytes)));
}

namespace detail {

void tensor_value_count_error(const Spec& spec, size_t found) {
  throw ShapeError(
      error_message("tensor", "values", fmt::format("{} values for {}", spec.size(), spec), found));
}

}  // namespace detail

void Tensor::check_live(const char* what) const {
  if (!buffer_)
    throw DeviceError(error_message(what, "the tensor is empty (default-constructed or moved from)", "", ""));
  switch (buffer_->state.load(std::memory_order_acquire)) {
    case Buffer::State::Live: return;
    case Buffer::State::Donated:
      throw DeviceError(error_message(
          what, fmt::format("the {} tensor was donated to a run and is no longer valid", spec_), "", ""));
    case Buffer::State::Deallocated:
      throw DeviceError(error_message(what, fmt::format("the {} tensor was deallocated", spec_), "", ""));
  }
}

void Tensor::check_access(DType t, const char* what, bool any_device) const {
  check_live(what);
  if (t != spec_.dtype && !(spec_.dtype == DType::Pred && t == DType::U8))
    throw TypeError(error_message(what, "", fmt::format("element type {} of {}", spec_.dtype, spec_),
                                  fmt::format("a request for {}", t)));
  if (!any_device && !device().host_memory())
    throw DeviceError(error_message(what, "", "a host tensor",
                                    fmt::format("one on {} (use to_vector or to_host)", device().str())));
}

Device Tensor::device() const {
  check_live("device");
  return buffer_->device;
}

bool Tensor::is_ready() const { return !buffer_ || buffer_->is_ready(); }

void Tensor::wait() const {
  check_live("wait");
  buffer_->wait();
}

const void* Tensor::host_data() const {
  check_live("host_data");
  if (!buffer_->device.host_memory())
    throw DeviceError(
        error_message("host_data", "", "a tensor in host memory",
                      fmt::format("one on {} (use to_vector or to_host)", buffer_->device.str())));
  buffer_->wait();
  return buffer_->data;
}

void Tensor::copy_to_host(void* dst) const {
  check_live("copy_to_host");
  buffer_->device.backend().download(*buffer_, dst);
}

Tensor Tensor::to_host() const {
  check_live("to_host");
  if (buffer_->device == host()) return *this;
  return to(host());
}

Tensor Tensor::to(Device target) const {
  check_live("to");
  Backend& dst_backend = target.backend();
  BufferPtr out = dst_backend.allocate(target, static_cast<size_t>(spec_.bytes()));
  Backend& src_backend = buffer_->device.backend();
  if (&src_backend == &dst_backend) {
    dst_backend.copy(*buffer_, *out);
  } else if (src_backend.host_memory()) {
    dst_backend.upload(host_data(), *out, buffer_->memory);
  } else if (dst_backend.host_memory()) {
    src_backend.download(*buffer_, out->data);
  } else {
    // Between two devices of different backends: through the host.
    Tensor staged = to(host());
    dst_backend.upload(staged.host_data(), *out, staged.buffer()->memory);
  }
  return Tensor(spec_, std::move(out));
}

Tensor Tensor::transfer(Device target) {
  check_live("transfer");
  if (buffer_->device == target) return std::exchange(*this, Tensor());
  Tensor moved = to(target);
  deallocate();
  return moved;
}

void Tensor::deallocate() {
  check_live("deallocate");
  // A computation may still be writing the buffer: let it finish first. Its
  // error, if any, belongs to whoever reads the result, not to deallocate.
  if (buffer_->ready) {
    try {
      buffer_->ready->wait();
    } catch (...) {
    }
  }
  buffer_->state.store(Buffer::State::Deallocated, std::memory_order_release);
  buffer_->memory.reset();
  buffer_->data = nullptr;
}

Tensor tensor_from_bytes(const Spec& spec, const void* bytes, Device device) {
  Backend& backend = device.backend();
  BufferPtr buffer = backend.allocate(device, static_cast<size_t>(spec.bytes()));
  if (spec.bytes() > 0) backend.upload(bytes, *buffer, nullptr);
  return Tensor(spec, std::move(buffer));
}

Tensor wrap_host(Spec spec, void* data, std::shared_ptr<void> owner) {
  if (!data && spec.bytes() > 0)
    throw DeviceError(error_message("wrap_host", "", fmt::format("a pointer to {}", spec), "null"));
  auto buffer = std::make_shared<Buffer>();
  buffer->device = host();
  buffer->data = data;
  buffer->bytes = static_cast<size_t>(spec.bytes());
  buffer->memory = std::move(owner);
  return Tensor(std::move(spec), std::move(buffer));
}

namespace {

// Fills a host vector of `spec` with value(i) for element i, then places it.
template <typename Value>
Tensor filled(const Spec& spec, Device device, Value value) {
  std::vector<uint8_t> bytes(static_cast<size_t>(spec.bytes()));
  visit_dtype(spec.dtype, [&]<typename T>() {
    T* p = reinterpret_cast<T*>(bytes.data());
    for (int64_t i = 0; i < spec.size(); ++i) {
      double v = value(i);
      if constexpr (std::is_same_v<T, half>) p[i] = half{float_to_f16(static_cast<float>(v))};
      else if constexpr (std::is_same_v<T, bfloat16>) p[i] = bfloat16{float_to_bf16(static_cast<float>(v))};
      else p[i] = static_cast<T>(v);
    }
  });
  return tensor_from_bytes(spec, bytes.data(), device);
}

}  // namespace

Tensor zeros(const Spec& spec, Device device) { return filled(spec, device, [](int64_t) { return 0.0; }); }
Tensor ones(const Spec& spec, Device device) { return filled(spec, device, [](int64_t) { return 1.0; }); }
Tensor iota(const Spec& spec, Device device) {
  if (spec.dtype == DType::Pred) throw TypeError(error_message("iota", "", "a numeric dtype", spec.dtype));
  return filled(spec, device, [](int64_t i) { return static_cast<double>(i); });
}

}  // namespace sluice
