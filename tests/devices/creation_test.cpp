// The CPU creation kernels: constant, iota, eye, in every kind of dtype.
// Expected values are hand-computed; f16/bf16 bit patterns are worked out
// in the comments beside them.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "ops/error.h"
#include "ops/function.h"

namespace sluice {
namespace {

template <typename T>
std::vector<T> create(Op op, const Spec& spec, Attrs attrs = {}) {
  NodePtr node = Node::make(op, spec, {}, std::move(attrs));
  std::vector<T> out(static_cast<size_t>(spec.size()));
  cpu::run_creation(*node, out.data());
  return out;
}

Attrs iota_axis(int64_t axis) { return {.axis = axis}; }

TEST(Constant, CopiesTheLiteral) {
  auto literal = std::make_shared<const Literal>(Literal::of<float>({1.5f, -2, 3, 4.25f}, Shape{2, 2}));
  EXPECT_EQ(create<float>(Op::Constant, f32({2, 2}), {.literal = literal}), (std::vector<float>{1.5f, -2, 3, 4.25f}));
  auto scalar = std::make_shared<const Literal>(Literal::of<complex64>({{1, -1}}, Shape{}));
  EXPECT_EQ(create<complex64>(Op::Constant, c64(), {.literal = scalar}), (std::vector<complex64>{{1, -1}}));
}

TEST(Constant, RejectsALiteralOfAnotherSize) {
  auto literal = std::make_shared<const Literal>(Literal::of<float>({1, 2, 3}, Shape{3}));
  EXPECT_THROW(create<float>(Op::Constant, f32({4}), {.literal = literal}), DeviceError);
}

TEST(Iota, CountsThroughAllElements) {
  EXPECT_EQ(create<float>(Op::Iota, f32({2, 3}), iota_axis(-1)), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(create<int64_t>(Op::Iota, s64({5}), iota_axis(-1)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(create<double>(Op::Iota, f64(), iota_axis(-1)), (std::vector<double>{0})) << "rank 0";
  EXPECT_EQ(create<float>(Op::Iota, f32({3, 0}), iota_axis(-1)), std::vector<float>{}) << "zero-size";
}

TEST(Iota, CountsAlongAnAxis) {
  EXPECT_EQ(create<int32_t>(Op::Iota, s32({2, 3}), iota_axis(0)), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(create<int32_t>(Op::Iota, s32({2, 3}), iota_axis(1)), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(create<uint8_t>(Op::Iota, u8({2, 3, 2}), iota_axis(1)),
            (std::vector<uint8_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(create<int16_t>(Op::Iota, s16({1, 2, 1, 2}), iota_axis(3)), (std::vector<int16_t>{0, 1, 0, 1}))
      << "rank 4";
}

TEST(Iota, FloatsAreExactOrRoundedOnce) {
  // f16: 0 -> 0x0000, 1 -> 0x3C00, 2 -> 0x4000, 3 -> 0x4200.
  EXPECT_EQ(create<uint16_t>(Op::Iota, f16({4}), iota_axis(-1)), (std::vector<uint16_t>{0x0000, 0x3C00, 0x4000, 0x4200}));
  // f16 steps by 2 in [2048, 4096): 2048 = 0x6800; 2049 ties to even 2048;
  // 2050 = 0x6801; 2051 ties to even 2052 = 0x6802.
  auto h = create<uint16_t>(Op::Iota, f16({2052}), iota_axis(-1));
  EXPECT_EQ((std::vector<uint16_t>(h.end() - 4, h.end())), (std::vector<uint16_t>{0x6800, 0x6800, 0x6801, 0x6802}));
  // bf16 steps by 2 in [256, 512): 256 = 0x4380, 257 ties to 256, 258 = 0x4381,
  // 259 ties to even 260 = 0x4382.
  auto b = create<uint16_t>(Op::Iota, bf16({260}), iota_axis(-1));
  EXPECT_EQ((std::vector<uint16_t>(b.end() - 4, b.end())), (std::vector<uint16_t>{0x4380, 0x4380, 0x4381, 0x4382}));
  EXPECT_EQ(b[1], 0x3F80) << "bf16 1.0";
  EXPECT_EQ(create<complex128>(Op::Iota, c128({2, 2}), iota_axis(1)),
            (std::vector<complex128>{{0, 0}, {1, 0}, {0, 0}, {1, 0}}));
}

TEST(Iota, PredIsZeroThenOne) {
  EXPECT_EQ(create<uint8_t>(Op::Iota, pred({3}), iota_axis(-1)), (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Iota, LargeOutputsSplitAcrossCores) {
  const auto all = create<float>(Op::Iota, f32({300, 400}), iota_axis(-1));
  int64_t wrong = 0;
  for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != static_cast<float>(i);
  EXPECT_EQ(wrong, 0) << "iota f32[300][400]";
  const auto rows = create<int64_t>(Op::Iota, s64({300, 400}), iota_axis(0));
  wrong = 0;
  for (size_t i = 0; i < rows.size(); ++i) wrong += rows[i] != static_cast<int64_t>(i / 400);
  EXPECT_EQ(wrong, 0) << "iota s64[300][400] along axis 0";
  const auto cols = create<int32_t>(Op::Iota, s32({300, 400}), iota_axis(1));
  wrong = 0;
  for (size_t i = 0; i < cols.size(); ++i) wrong += cols[i] != static_cast<int32_t>(i % 400);
  EXPECT_EQ(wrong, 0) << "iota s32[300][400] along axis 1";
}

TEST(Eye, OnesOnTheDiagonalOfTheLastTwoAxes) {
  EXPECT_EQ(create<float>(Op::Eye, f32({3, 3})), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(create<int8_t>(Op::Eye, s8({2, 3})), (std::vector<int8_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(create<int32_t>(Op::Eye, s32({3, 2})), (std::vector<int32_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(create<double>(Op::Eye, f64({2, 2, 2})), (std::vector<double>{1, 0, 0, 1, 1, 0, 0, 1}))
      << "broadcast over the batch axis";
  EXPECT_EQ(create<uint8_t>(Op::Eye, pred({2, 2})), (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(create<complex128>(Op::Eye, c128({2, 2})), (std::vector<complex128>{{1, 0}, {0, 0}, {0, 0}, {1, 0}}));
  EXPECT_EQ(create<uint16_t>(Op::Eye, f16({2, 2})), (std::vector<uint16_t>{0x3C00, 0, 0, 0x3C00})) << "f16 1.0";
  EXPECT_EQ(create<uint16_t>(Op::Eye, bf16({2, 2})), (std::vector<uint16_t>{0x3F80, 0, 0, 0x3F80})) << "bf16 1.0";
  EXPECT_EQ(create<float>(Op::Eye, f32({0, 3})), std::vector<float>{}) << "zero-size";
}

TEST(Eye, LargeOutputsSplitAcrossCores) {
  const int64_t n = 400;
  const auto e = create<float>(Op::Eye, f32({2, n, n}));
  int64_t wrong = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i) / n % n, c = static_cast<int64_t>(i) % n;
    wrong += e[i] != (r == c ? 1.0f : 0.0f);
  }
  EXPECT_EQ(wrong, 0) << "eye f32[2][400][400]";
}

TEST(Creation, RejectsOtherOps) {
  NodePtr node = Node::make(Op::Negate, f32({2}), {parameter(0, f32({2})).node()});
  float out[2];
  EXPECT_THROW(cpu::run_creation(*node, out), DeviceError);
}

}  // namespace
}  // namespace sluice
