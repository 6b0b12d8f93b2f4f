#pragma once
// What the linear algebra kernels share: the batch of matrices an op runs
// over, how they are spread across cores, and the NaN a failed matrix is
// filled with. Private to the linear algebra kernels.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include <sluice/devices/cpu/kernels/lapack.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>
#include <sluice/ops/expr.h>

namespace sluice::cpu::linalg {

// A batch of `count` matrices [rows][cols]: an operand's leading axes, then its last two.
struct Matrices {
  int64_t count = 1, rows = 0, cols = 0;
  int64_t size() const { return rows * cols; }
};
inline Matrices matrices_of(const Shape& s) {
  Matrices m;
  for (int i = 0; i + 2 < s.rank(); ++i) m.count *= s[i];
  m.rows = s[s.rank() - 2];
  m.cols = s[s.rank() - 1];
  return m;
}

// Calls body(i) for each of `count` matrices; when their work (about
// `flops` each) is large, on several cores at once. Each matrix is
// independent, so matrices are the unit of parallel work, and LAPACK is
// fastest run single-threaded on each (ClientOptions::blas_threads = 1,
// devices/backend.h: oneTBB then owns the cores).
template <typename Body>
void for_each_matrix(int64_t count, int64_t flops, const Body& body) {
  split_work(count, flops, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

// What a matrix LAPACK could not factor or solve becomes (ops.h: NaNs, as EXLA).
template <typename T>
void fill_nan(T* p, int64_t count) {
  if constexpr (std::is_floating_point_v<T>) {
    std::fill(p, p + count, std::numeric_limits<T>::quiet_NaN());
  } else {
    const typename T::value_type nan = std::numeric_limits<typename T::value_type>::quiet_NaN();
    std::fill(p, p + count, T(nan, nan));
  }
}

// Calls f.template operator()<T>() with the storage type of `t`, one of
// LAPACK's four (the builders allow no other).
template <typename F>
void visit_lapack(DType t, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (lapack::Type<T>)
      f.template operator()<T>();
    else
      throw TypeError(error_message("host: linear algebra in " + std::string(dtype_name(t)),
                                    "no LAPACK routine computes in it", "", ""));
  });
}

// One function per op (linalg_solve.cpp, linalg_factor.cpp); in and out as run_linalg's.
void cholesky(const Node& node, std::span<const void* const> in, std::span<void* const> out);
void triangular_solve(const Node& node, std::span<const void* const> in, std::span<void* const> out);
void solve(const Node& node, std::span<const void* const> in, std::span<void* const> out);
void qr(const Node& node, std::span<const void* const> in, std::span<void* const> out);
void lu(const Node& node, std::span<const void* const> in, std::span<void* const> out);
void eigh(const Node& node, std::span<const void* const> in, std::span<void* const> out);

}  // namespace sluice::cpu::linalg
