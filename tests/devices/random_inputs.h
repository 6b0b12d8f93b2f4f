#pragma once
// Random inputs for the devices tests: the same values for the same seed.

#include <cstdint>
#include <random>
#include <vector>

namespace sluice::test {

// n values drawn uniformly from [lo, hi) in T's own precision.
template <typename T>
std::vector<T> uniform_values(int64_t n, T lo, T hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> u(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = u(rng);
  return v;
}

}  // namespace sluice::test
