#include <sluice/ops/literal.h>

#include <cmath>
#include <limits>

namespace sluice {
namespace {

// as_type's float-to-integer rule: truncate toward zero, saturate, NaN -> 0.
template <typename I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename T>
void put(std::vector<uint8_t>& bytes, T value) {
  bytes.resize(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
}

}  // namespace

Literal Literal::scalar(DType dtype, double v) { return scalar(dtype, complex128(v, 0.0)); }

Literal Literal::scalar(DType dtype, complex128 v) {
  Literal l{{dtype, Shape()}, {}};
  const double re = v.real();
  switch (dtype) {
    case DType::Pred: put<uint8_t>(l.bytes, v != complex128(0.0, 0.0) ? 1 : 0); break;
    case DType::S8: put(l.bytes, saturate<int8_t>(re)); break;
    case DType::S16: put(l.bytes, saturate<int16_t>(re)); break;
    case DType::S32: put(l.bytes, saturate<int32_t>(re)); break;
    case DType::S64: put(l.bytes, saturate<int64_t>(re)); break;
    case DType::U8: put(l.bytes, saturate<uint8_t>(re)); break;
    case DType::U16: put(l.bytes, saturate<uint16_t>(re)); break;
    case DType::U32: put(l.bytes, saturate<uint32_t>(re)); break;
    case DType::U64: put(l.bytes, saturate<uint64_t>(re)); break;
    case DType::F16: put(l.bytes, float_to_f16(static_cast<float>(re))); break;
    case DType::BF16: put(l.bytes, float_to_bf16(static_cast<float>(re))); break;
    case DType::F32: put(l.bytes, static_cast<float>(re)); break;
    case DType::F64: put(l.bytes, re); break;
    case DType::C64: put(l.bytes, complex64(v)); break;
    case DType::C128: put(l.bytes, v); break;
  }
  return l;
}

}  // namespace sluice
