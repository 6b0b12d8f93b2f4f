// Constant, Iota, Eye: the leaves that make data from attributes alone.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>

#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

// Count i as an element of storage type T: integers convert as a C++ cast
// does, f32/f64 hold i rounded once, f16/bf16 go through f32 (exact below
// 2^24, far beyond where they stop holding integers).
template <typename T>
T from_count(int64_t i) {
  return static_cast<T>(i);
}
template <>
half from_count<half>(int64_t i) {
  return {float_to_f16(static_cast<float>(i))};
}
template <>
bfloat16 from_count<bfloat16>(int64_t i) {
  return {float_to_bf16(static_cast<float>(i))};
}

void run_constant(const Node& node, void* out) {
  const Literal* literal = node.attrs.literal.get();
  const auto bytes = static_cast<size_t>(node.spec.bytes());
  if (literal == nullptr || literal->bytes.size() != bytes) {
    throw DeviceError(error_message("constant", "literal", fmt::format("{} bytes for {}", bytes, node.spec),
                                    literal ? fmt::format("{} bytes", literal->bytes.size()) : "none"));
  }
  if (bytes > 0) std::memcpy(out, literal->bytes.data(), bytes);
}

// The result as [outer][n][inner]: element (o, i, k) is i. attrs.axis -1
// counts through all elements: outer = inner = 1.
void run_iota(const Node& node, void* out) {
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  int64_t outer = 1, n = shape.size(), inner = 1;
  if (node.attrs.axis >= 0) {
    const int axis = static_cast<int>(node.attrs.axis);
    n = shape.dim(axis);
    for (int j = 0; j < axis; ++j) outer *= shape.dim(j);
    for (int j = axis + 1; j < shape.rank(); ++j) inner *= shape.dim(j);
  }
  visit_dtype(node.spec.dtype, [&]<typename T>() {
    T* data = static_cast<T*>(out);
    split_work(outer * n, inner, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end;) {
        const int64_t i = item % n, len = std::min(end - item, n - i);
        T* dst = data + item * inner;
        if (inner == 1) {
          for (int64_t k = 0; k < len; ++k) dst[k] = from_count<T>(i + k);
        } else {
          for (int64_t k = 0; k < len; ++k) std::fill_n(dst + k * inner, inner, from_count<T>(i + k));
        }
        item += len;
      }
    });
  });
}

// 1 where the last two indices are equal, else 0 (all-zero bytes in every
// dtype); the builder guarantees rank >= 2.
void run_eye(const Node& node, void* out) {
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  const int64_t rows = shape.dim(shape.rank() - 2), cols = shape.dim(shape.rank() - 1);
  const auto size = static_cast<size_t>(dtype_size(node.spec.dtype));
  std::array<std::byte, 16> one{};
  visit_dtype(node.spec.dtype, [&]<typename T>() {
    const T v = from_count<T>(1);
    std::memcpy(one.data(), &v, sizeof(T));
  });
  auto* data = static_cast<std::byte*>(out);
  split_work(shape.size() / cols, cols, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      std::byte* dst = data + static_cast<size_t>(row * cols) * size;
      std::memset(dst, 0, static_cast<size_t>(cols) * size);
      const int64_t i = row % rows;
      if (i < cols) std::memcpy(dst + static_cast<size_t>(i) * size, one.data(), size);
    }
  });
}

}  // namespace

void run_creation(const Node& node, void* out) {
  switch (node.op) {
    case Op::Constant: return run_constant(node, out);
    case Op::Iota: return run_iota(node, out);
    case Op::Eye: return run_eye(node, out);
    default: break;
  }
  throw DeviceError(error_message("run_creation", "", "constant, iota or eye", op_name(node.op)));
}

}  // namespace sluice::cpu
