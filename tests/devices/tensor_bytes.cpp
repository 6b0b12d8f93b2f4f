#include "tests/devices/tensor_bytes.h"

#include <cstring>
#include <random>

namespace sluice::test {

std::vector<Spec> round_trip_specs() {
  const std::vector<Shape> shapes = {Shape{},     Shape{5},       Shape{3, 4},       Shape{2, 3, 2}, Shape{2, 1, 3, 2},
                                     Shape{0},    Shape{3, 0},    Shape{2, 0, 4},    Shape{1, 2, 0, 3}};
  std::vector<Spec> out;
  for (int t = 0; t < kDTypeCount; ++t)
    for (const Shape& s : shapes) out.push_back({static_cast<DType>(t), s});
  return out;
}

Tensor random_tensor(const Spec& spec, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(spec.bytes()));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(spec.dtype == DType::Pred ? rng() & 1 : rng());
  return tensor_from_bytes(spec, bytes.data());
}

bool identical(const Tensor& a, const Tensor& b) {
  if (a.spec() != b.spec()) return false;
  Tensor ha = a.to_host(), hb = b.to_host();
  return a.spec().bytes() == 0 || std::memcmp(ha.host_data(), hb.host_data(), static_cast<size_t>(a.spec().bytes())) == 0;
}

}  // namespace sluice::test
