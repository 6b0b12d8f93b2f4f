#include <sluice/ops/dtype.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include <sluice/base/error.h>

namespace sluice {
namespace {

constexpr DType kAll[] = {DType::Pred, DType::S8,  DType::S16, DType::S32, DType::S64,
                          DType::U8,   DType::U16, DType::U32, DType::U64, DType::F16,
                          DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};

TEST(DType, NamesAsNxPrintsThem) {
  EXPECT_EQ(dtype_name(DType::Pred), "pred");
  EXPECT_EQ(dtype_name(DType::S64), "s64");
  EXPECT_EQ(dtype_name(DType::U8), "u8");
  EXPECT_EQ(dtype_name(DType::BF16), "bf16");
  EXPECT_EQ(dtype_name(DType::F32), "f32");
  EXPECT_EQ(dtype_name(DType::C128), "c128");
  for (DType t : kAll) EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << "round trip of " << dtype_name(t);
}

TEST(DType, UnknownNameIsATypeErrorNamingWhere) {
  try {
    dtype_from_name("f8", "npy descr");
    FAIL() << "f8 is not a dtype";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("npy descr"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f8"), std::string::npos) << e.what();
  }
}

TEST(DType, KindsBitsAndSizes) {
  EXPECT_EQ(dtype_kind(DType::Pred), DTypeKind::Pred);
  EXPECT_EQ(dtype_kind(DType::S16), DTypeKind::Signed);
  EXPECT_EQ(dtype_kind(DType::U32), DTypeKind::Unsigned);
  EXPECT_EQ(dtype_kind(DType::BF16), DTypeKind::Float);
  EXPECT_EQ(dtype_kind(DType::C64), DTypeKind::Complex);
  EXPECT_EQ(dtype_bits(DType::Pred), 8) << "pred is stored as one byte";
  EXPECT_EQ(dtype_bits(DType::F16), 16);
  EXPECT_EQ(dtype_bits(DType::C128), 128);
  EXPECT_EQ(dtype_size(DType::C64), 8);
  EXPECT_TRUE(is_integer(DType::U64));
  EXPECT_FALSE(is_integer(DType::Pred));
  EXPECT_TRUE(is_inexact(DType::BF16));
  EXPECT_TRUE(is_inexact(DType::C64));
}

struct PromoteCase {
  DType a, b, expected;
};

TEST(DType, PromoteFollowsNxTypeMerge) {
  const PromoteCase cases[] = {
      {DType::S8, DType::S32, DType::S32},    {DType::U8, DType::S8, DType::S16},
      {DType::U32, DType::S32, DType::S64},   {DType::U64, DType::S64, DType::S64},
      {DType::U16, DType::S64, DType::S64},   {DType::U8, DType::U32, DType::U32},
      {DType::S64, DType::F16, DType::F16},   {DType::U64, DType::BF16, DType::BF16},
      {DType::F16, DType::BF16, DType::F32},  {DType::BF16, DType::F64, DType::F64},
      {DType::F16, DType::F32, DType::F32},   {DType::F64, DType::C64, DType::C128},
      {DType::F32, DType::C64, DType::C64},   {DType::S64, DType::C64, DType::C64},
      {DType::C64, DType::C128, DType::C128}, {DType::Pred, DType::S8, DType::S8},
      {DType::Pred, DType::F16, DType::F16},  {DType::Pred, DType::Pred, DType::Pred},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(promote(c.a, c.b), c.expected) << dtype_name(c.a) << " with " << dtype_name(c.b);
    EXPECT_EQ(promote(c.b, c.a), c.expected)
        << "promote is symmetric: " << dtype_name(c.b) << " with " << dtype_name(c.a);
  }
}

TEST(DType, FloatingRealComplexCounterparts) {
  EXPECT_EQ(to_floating(DType::S32), DType::F32);
  EXPECT_EQ(to_floating(DType::Pred), DType::F32);
  EXPECT_EQ(to_floating(DType::F16), DType::F16);
  EXPECT_EQ(to_floating(DType::C128), DType::C128);
  EXPECT_EQ(to_real(DType::C64), DType::F32);
  EXPECT_EQ(to_real(DType::C128), DType::F64);
  EXPECT_EQ(to_real(DType::S8), DType::S8);
  EXPECT_EQ(to_complex(DType::F32), DType::C64);
  EXPECT_EQ(to_complex(DType::F64), DType::C128);
  EXPECT_EQ(to_complex(DType::S64), DType::C64);
  EXPECT_EQ(to_complex(DType::C128), DType::C128);
}

// Reference bit patterns from numpy: np.float32(v).astype(np.float16).view(np.uint16).
TEST(DType, FloatToF16RoundsToNearestEven) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.5f), 0xc100);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff) << "largest f16";
  EXPECT_EQ(float_to_f16(65519.0f), 0x7bff) << "below the halfway point to 65536";
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00) << "halfway rounds to even: infinity";
  EXPECT_EQ(float_to_f16(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(float_to_f16(0.1f), 0x2e66);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001) << "smallest subnormal";
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000) << "half the smallest subnormal ties to even 0";
  EXPECT_EQ(float_to_f16(3 * std::ldexp(1.0f, -25)), 0x0002) << "1.5 subnormal steps ties to even 2";
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00) << "tie between 1 and 1+2^-10 goes to even";
  EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02) << "tie goes up to the even mantissa";
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, F16RoundTripsEveryBitPattern) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_EQ(bits & 0x7c00u, 0x7c00u) << "only all-ones exponents are NaN: " << bits;
      continue;
    }
    ASSERT_EQ(float_to_f16(f), bits) << "f16 bits " << bits << " -> " << f;
  }
  EXPECT_EQ(f16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80) << "tie goes to even";
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82) << "tie goes up to even";
  EXPECT_EQ(float_to_bf16(0.1f), 0x3dcd) << "0x3dcccccd rounds up";
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80) << "overflows to infinity";
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xc020), -2.5f);
}

}  // namespace
}  // namespace sluice
