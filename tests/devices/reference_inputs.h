#pragma once
// The inputs the numpy scripts in reference/ make (reference/inputs.py), so
// the C++ tests feed their kernels exactly what the reference values came from.

#include <cstdint>
#include <vector>

namespace sluice::test {

// pattern(n, offset)[i] = (((i + offset) * 37) % 101) / 8 - 6: exact in f16, f32 and f64.
inline std::vector<double> pattern(int64_t n, int64_t offset = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(((i + offset) * 37) % 101) / 8.0 - 6.0;
  return v;
}

// v's elements converted to To.
template <typename To, typename From>
std::vector<To> cast(const std::vector<From>& v) {
  std::vector<To> r;
  r.reserve(v.size());
  for (const From& x : v) r.push_back(static_cast<To>(x));
  return r;
}

}  // namespace sluice::test
