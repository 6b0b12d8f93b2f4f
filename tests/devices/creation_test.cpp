// constant, iota and eye on the host through the public API, in every kind
// of dtype. Expected values are hand-computed; f16/bf16 bit patterns are
// worked out in the comments beside them.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

// Compiles and runs a function of no arguments returning make(); T is the
// storage type (f16/bf16 read as their bit patterns).
template <typename T, typename F>
std::vector<T> create(F make) {
  const Tensor out = compile(trace({}, [&](const std::vector<Expr>&) { return make(); })).run({}).at(0);
  std::vector<T> values(static_cast<size_t>(out.size()));
  out.copy_to_host(values.data());
  return values;
}

template <typename T>
std::vector<T> iota_of(const Spec& spec, std::optional<int64_t> axis = std::nullopt) {
  return create<T>([&] { return iota(spec, axis); });
}

template <typename T>
std::vector<T> eye_of(const Spec& spec) {
  return create<T>([&] { return eye(spec); });
}

TEST(Constant, CopiesTheLiteral) {
  const auto f = create<float>([] { return constant<float>({1.5f, -2, 3, 4.25f}, {2, 2}); });
  EXPECT_EQ(f, (std::vector<float>{1.5f, -2, 3, 4.25f}));
  const auto c = create<complex64>([] { return constant<complex64>({{1, -1}}, {}); });
  EXPECT_EQ(c, (std::vector<complex64>{{1, -1}}));
  std::vector<int16_t> big(3000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int16_t>(i * 7);
  EXPECT_EQ(create<int16_t>([&] { return constant(big, {3000}); }), big) << "larger than constants fold";
}

TEST(Iota, CountsThroughAllElements) {
  EXPECT_EQ(iota_of<float>(f32({2, 3})), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(iota_of<int64_t>(s64({5})), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(iota_of<double>(f64()), (std::vector<double>{0})) << "rank 0";
  EXPECT_EQ(iota_of<float>(f32({3, 0})), std::vector<float>{}) << "zero-size";
}

TEST(Iota, CountsAlongAnAxis) {
  EXPECT_EQ(iota_of<int32_t>(s32({2, 3}), 0), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(iota_of<int32_t>(s32({2, 3}), 1), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(iota_of<uint8_t>(u8({2, 3, 2}), 1), (std::vector<uint8_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(iota_of<int16_t>(s16({1, 2, 1, 2}), 3), (std::vector<int16_t>{0, 1, 0, 1})) << "rank 4";
}

TEST(Iota, FloatsAreExactOrRoundedOnce) {
  // f16: 0 -> 0x0000, 1 -> 0x3C00, 2 -> 0x4000, 3 -> 0x4200.
  EXPECT_EQ(iota_of<uint16_t>(f16({4})), (std::vector<uint16_t>{0x0000, 0x3C00, 0x4000, 0x4200}));
  // f16 steps by 2 in [2048, 4096): 2048 = 0x6800; 2049 ties to even 2048;
  // 2050 = 0x6801; 2051 ties to even 2052 = 0x6802.
  auto h = iota_of<uint16_t>(f16({2052}));
  EXPECT_EQ((std::vector<uint16_t>(h.end() - 4, h.end())),
            (std::vector<uint16_t>{0x6800, 0x6800, 0x6801, 0x6802}));
  // bf16 steps by 2 in [256, 512): 256 = 0x4380, 257 ties to 256, 258 = 0x4381,
  // 259 ties to even 260 = 0x4382.
  auto b = iota_of<uint16_t>(bf16({260}));
  EXPECT_EQ((std::vector<uint16_t>(b.end() - 4, b.end())),
            (std::vector<uint16_t>{0x4380, 0x4380, 0x4381, 0x4382}));
  EXPECT_EQ(b[1], 0x3F80) << "bf16 1.0";
  EXPECT_EQ(iota_of<complex128>(c128({2, 2}), 1), (std::vector<complex128>{{0, 0}, {1, 0}, {0, 0}, {1, 0}}));
}

TEST(Iota, LargeOutputsSplitAcrossCores) {
  const auto all = iota_of<float>(f32({300, 400}));
  int64_t wrong = 0;
  for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != static_cast<float>(i);
  EXPECT_EQ(wrong, 0) << "iota f32[300][400]";
  const auto rows = iota_of<int64_t>(s64({300, 400}), 0);
  wrong = 0;
  for (size_t i = 0; i < rows.size(); ++i) wrong += rows[i] != static_cast<int64_t>(i / 400);
  EXPECT_EQ(wrong, 0) << "iota s64[300][400] along axis 0";
  const auto cols = iota_of<int32_t>(s32({300, 400}), 1);
  wrong = 0;
  for (size_t i = 0; i < cols.size(); ++i) wrong += cols[i] != static_cast<int32_t>(i % 400);
  EXPECT_EQ(wrong, 0) << "iota s32[300][400] along axis 1";
}

TEST(Eye, OnesOnTheDiagonalOfTheLastTwoAxes) {
  EXPECT_EQ(eye_of<float>(f32({3, 3})), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(eye_of<int8_t>(s8({2, 3})), (std::vector<int8_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(eye_of<int32_t>(s32({3, 2})), (std::vector<int32_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(eye_of<double>(f64({2, 2, 2})), (std::vector<double>{1, 0, 0, 1, 1, 0, 0, 1}))
      << "broadcast over the batch axis";
  EXPECT_EQ(eye_of<uint8_t>(pred({2, 2})), (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(eye_of<complex128>(c128({2, 2})), (std::vector<complex128>{{1, 0}, {0, 0}, {0, 0}, {1, 0}}));
  EXPECT_EQ(eye_of<uint16_t>(f16({2, 2})), (std::vector<uint16_t>{0x3C00, 0, 0, 0x3C00})) << "f16 1.0";
  EXPECT_EQ(eye_of<uint16_t>(bf16({2, 2})), (std::vector<uint16_t>{0x3F80, 0, 0, 0x3F80})) << "bf16 1.0";
  EXPECT_EQ(eye_of<float>(f32({0, 3})), std::vector<float>{}) << "zero-size";
}

TEST(Eye, LargeOutputsSplitAcrossCores) {
  const int64_t n = 400;
  const auto e = eye_of<float>(f32({2, n, n}));
  int64_t wrong = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i) / n % n, c = static_cast<int64_t>(i) % n;
    wrong += e[i] != (r == c ? 1.0f : 0.0f);
  }
  EXPECT_EQ(wrong, 0) << "eye f32[2][400][400]";
}

}  // namespace
}  // namespace sluice
