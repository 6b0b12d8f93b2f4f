#pragma once
// Calling a generic lambda with the C++ storage type of a runtime DType:
//   visit_dtype(t, [&]<typename T>() { ... });
// pred is stored as uint8_t (0 or 1), f16/bf16 as their bit patterns.

#include <cstdint>
#include <utility>

#include <sluice/ops/dtype.h>

namespace sluice {

template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Pred: return f.template operator()<uint8_t>();
    case DType::S8: return f.template operator()<int8_t>();
    case DType::S16: return f.template operator()<int16_t>();
    case DType::S32: return f.template operator()<int32_t>();
    case DType::S64: return f.template operator()<int64_t>();
    case DType::U8: return f.template operator()<uint8_t>();
    case DType::U16: return f.template operator()<uint16_t>();
    case DType::U32: return f.template operator()<uint32_t>();
    case DType::U64: return f.template operator()<uint64_t>();
    case DType::F16: return f.template operator()<half>();
    case DType::BF16: return f.template operator()<bfloat16>();
    case DType::F32: return f.template operator()<float>();
    case DType::F64: return f.template operator()<double>();
    case DType::C64: return f.template operator()<complex64>();
    case DType::C128: return f.template operator()<complex128>();
  }
  return f.template operator()<uint8_t>();  // unreachable: every DType is handled above
}

}  // namespace sluice
