#pragma once
// DType: the element type of a tensor, printed as Nx prints it (f32, s64, c64).

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

enum class DType : uint8_t {
  Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128,
};
inline constexpr int kDTypeCount = 15;

enum class DTypeKind : uint8_t { Pred, Signed, Unsigned, Float, Complex };

// "f32", "s64", "pred", ...
std::string_view dtype_name(DType t);
// Inverse of dtype_name; throws TypeError naming `where` for an unknown name.
DType dtype_from_name(std::string_view name, std::string_view where = "dtype");

DTypeKind dtype_kind(DType t);
int dtype_bits(DType t);  // pred counts as 8 bits: it is stored as one byte
inline int dtype_size(DType t) { return dtype_bits(t) / 8; }
inline bool is_float(DType t) { return dtype_kind(t) == DTypeKind::Float; }
inline bool is_complex(DType t) { return dtype_kind(t) == DTypeKind::Complex; }
inline bool is_integer(DType t) {
  return dtype_kind(t) == DTypeKind::Signed || dtype_kind(t) == DTypeKind::Unsigned;
}
inline bool is_inexact(DType t) { return is_float(t) || is_complex(t); }

// Nx's type promotion (Nx.Type.merge): same kind keeps the wider; signed with
// unsigned widens the signed to hold the unsigned; integers with floats take
// the float; f16 with bf16 is f32; real with complex is the complex wide
// enough for both. pred promotes like a 1-bit unsigned integer.
DType promote(DType a, DType b);
// The float type an integer is computed in by float ops (Nx.Type.to_floating):
// integers and pred -> f32, floats and complex unchanged.
DType to_floating(DType t);
// The real type of a complex type (c64 -> f32); real types unchanged.
DType to_real(DType t);
// The complex type holding a real type (f32 -> c64, f64 -> c128; others c64).
DType to_complex(DType t);

// Two-byte floats are stored as their bit patterns; arithmetic converts.
// (Named half/bfloat16 and complex64/complex128 because f16(), c64(), ...
// are the Spec makers of shape.h.)
struct half { uint16_t bits; };
struct bfloat16 { uint16_t bits; };
float f16_to_float(uint16_t bits);
uint16_t float_to_f16(float v);  // round to nearest even
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float v);  // round to nearest even

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// The DType of a C++ element type: dtype_of<float>() == DType::F32.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Pred; }
template <> constexpr DType dtype_of<int8_t>() { return DType::S8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::S16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::S32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::S64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::U8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::U16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::U32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::U64; }
template <> constexpr DType dtype_of<half>() { return DType::F16; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::BF16; }
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<complex64>() { return DType::C64; }
template <> constexpr DType dtype_of<complex128>() { return DType::C128; }

}  // namespace sluice
