#pragma once
// Element arithmetic shared by the kernels that combine elements (reduce,
// window, scan): the type a storage type computes in, wrapping integer sums,
// max/min that propagate NaN, and the identities of max and min.

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <sluice/ops/dtype.h>

namespace sluice::cpu {

template <typename T>
inline constexpr bool kIsComplex = false;
template <typename T>
inline constexpr bool kIsComplex<std::complex<T>> = true;

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// f16 and bf16 compute in f32; every other storage type computes in itself.
template <typename T>
using Arith = std::conditional_t<kIsHalf<T>, float, T>;

// The type sums of T run in: integers as the unsigned type of their width,
// whose wrapping gives signed sums' bits as well (and signed overflow would
// be undefined); other types as themselves.
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using WrapType = typename Wrapping<T>::type;

// a + b, wrapping for integers (signed overflow would be undefined).
template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// a * b, wrapping for integers: narrow unsigned types would be promoted to
// int, where 65535 * 65535 overflows, so they multiply as unsigned int.
template <typename T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// max and min where a NaN in either argument wins, as XLA and Nx compute them.
template <typename T>
inline T max_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a > b || a != a) ? a : b;
  } else {
    return a > b ? a : b;
  }
}
template <typename T>
inline T min_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a < b || a != a) ? a : b;
  } else {
    return a < b ? a : b;
  }
}

// The identities of max and min: -inf/+inf for floats, the type's extremes
// for integers.
template <typename A>
inline constexpr A lowest() {
  if constexpr (std::is_floating_point_v<A>) {
    return -std::numeric_limits<A>::infinity();
  } else {
    return std::numeric_limits<A>::lowest();
  }
}
template <typename A>
inline constexpr A highest() {
  if constexpr (std::is_floating_point_v<A>) {
    return std::numeric_limits<A>::infinity();
  } else {
    return std::numeric_limits<A>::max();
  }
}

}  // namespace sluice::cpu
