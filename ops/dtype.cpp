#include <sluice/ops/dtype.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

struct DTypeInfo {
  std::string_view name;
  DTypeKind kind;
  int bits;
};

constexpr std::array<DTypeInfo, kDTypeCount> kInfo{{
    {"pred", DTypeKind::Pred, 8},
    {"s8", DTypeKind::Signed, 8},
    {"s16", DTypeKind::Signed, 16},
    {"s32", DTypeKind::Signed, 32},
    {"s64", DTypeKind::Signed, 64},
    {"u8", DTypeKind::Unsigned, 8},
    {"u16", DTypeKind::Unsigned, 16},
    {"u32", DTypeKind::Unsigned, 32},
    {"u64", DTypeKind::Unsigned, 64},
    {"f16", DTypeKind::Float, 16},
    {"bf16", DTypeKind::Float, 16},
    {"f32", DTypeKind::Float, 32},
    {"f64", DTypeKind::Float, 64},
    {"c64", DTypeKind::Complex, 64},
    {"c128", DTypeKind::Complex, 128},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

DType make(DTypeKind kind, int bits) {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (kInfo[i].kind == kind && kInfo[i].bits == bits && static_cast<DType>(i) != DType::BF16) {
      return static_cast<DType>(i);
    }
  }
  throw TypeError(error_message(
      "promote", "", fmt::format("a dtype of kind {} with {} bits", static_cast<int>(kind), bits), "none"));
}

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }

DType dtype_from_name(std::string_view name, std::string_view where) {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  throw TypeError(error_message(where, "",
                                "a dtype name (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128)",
                                fmt::format("\"{}\"", name)));
}

DTypeKind dtype_kind(DType t) { return info(t).kind; }
int dtype_bits(DType t) { return info(t).bits; }

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Pred) return b;
  if (b == DType::Pred) return a;
  DTypeKind ka = dtype_kind(a), kb = dtype_kind(b);
  int ba = dtype_bits(a), bb = dtype_bits(b);
  // Order the pair by kind so each mixed case below is written once.
  if (ka > kb) {
    std::swap(a, b);
    std::swap(ka, kb);
    std::swap(ba, bb);
  }
  if (ka == kb) {
    // Only f16 with bf16 has equal kind and bits but different types.
    if (a == DType::BF16 || b == DType::BF16) return ba == bb ? DType::F32 : make(ka, std::max(ba, bb));
    return make(ka, std::max(ba, bb));
  }
  if (ka == DTypeKind::Signed && kb == DTypeKind::Unsigned) {
    return make(DTypeKind::Signed, std::max(ba, std::min(2 * bb, 64)));
  }
  if (kb == DTypeKind::Complex && ka == DTypeKind::Float)
    return make(DTypeKind::Complex, std::max(bb, 2 * ba));
  // Integers with floats or complex take the inexact type.
  return b;
}

DType to_floating(DType t) { return is_inexact(t) ? t : DType::F32; }

DType to_real(DType t) {
  if (t == DType::C64) return DType::F32;
  if (t == DType::C128) return DType::F64;
  return t;
}

DType to_complex(DType t) {
  if (t == DType::F64 || t == DType::C128) return DType::C128;
  return DType::C64;
}

// Conversions after F. Giesen's "float_to_half_fast3_rtne" and
// "half_to_float": exact, branch-light, no tables.
float f16_to_float(uint16_t bits) {
  constexpr uint32_t kShiftedExp = 0x7c00u << 13;
  uint32_t o = static_cast<uint32_t>(bits & 0x7fffu) << 13;
  uint32_t exp = kShiftedExp & o;
  o += (127u - 15u) << 23;
  if (exp == kShiftedExp) {
    o += (128u - 16u) << 23;  // Inf and NaN
  } else if (exp == 0) {
    o += 1u << 23;  // zero and subnormals: renormalise through the FPU
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23));
  }
  o |= static_cast<uint32_t>(bits & 0x8000u) << 16;
  return std::bit_cast<float>(o);
}

uint16_t float_to_f16(float v) {
  constexpr uint32_t kF32Inf = 255u << 23;
  constexpr uint32_t kF16Max = (127u + 16u) << 23;
  constexpr uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t u = std::bit_cast<uint32_t>(v);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= kF16Max) {
    // Too large becomes Inf. A NaN keeps its payload's upper 10 bits, and
    // so its quiet bit: a signalling NaN stays signalling, as bitcasts
    // through f16 need; one whose payload lay in the lower bits becomes quiet.
    const uint32_t payload = (u >> 13) & 0x3ffu;
    o = u > kF32Inf ? 0x7c00u | (payload != 0 ? payload : 0x200u) : 0x7c00u;
  } else if (u < (113u << 23)) {
    // Subnormal or zero: adding the magic number lets the FPU round to
    // nearest even at the right bit.
    float f = std::bit_cast<float>(u) + std::bit_cast<float>(kDenormMagic);
    o = std::bit_cast<uint32_t>(f) - kDenormMagic;
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu;
    u += mant_odd;
    o = u >> 13;
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_bf16(float v) {
  uint32_t u = std::bit_cast<uint32_t>(v);
  // A NaN keeps its payload's upper 7 bits (a signalling NaN stays one, as
  // bitcasts through bf16 need); one whose payload lay in the lower bits
  // becomes quiet.
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | ((u & 0x7f0000u) ? 0 : 0x40u));
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace sluice
