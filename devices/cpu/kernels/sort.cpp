// Sort and Argsort along attrs.axis (descending when attrs.reverse). The
// input is viewed as [outer][n][inner]; each of the outer * inner rows is
// copied out contiguous (unless inner == 1), sorted, and written back. Rows
// are spread across cores; one long row is sorted by oneTBB's parallel_sort.
//
// Orders (ops.h): ascending puts NaNs last, descending is ascending
// reversed with ties in index order. Sort reorders values only, so it
// partitions NaNs out and sorts the rest with plain `<`, then puts the
// zeros and the NaNs back in the row's order (their signs and payloads
// differ: stable, as argsort); f16/bf16 rows sort as f32 (exact both ways).
// Argsort compares (value, index) pairs, so it is stable and its result
// does not depend on the algorithm or the number of threads.

#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <type_traits>
#include <vector>

#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/dtype_dispatch.h>

namespace sluice::cpu {
namespace {

// One row at least this long, alone, is sorted in parallel.
constexpr int64_t kParallelRow = int64_t{1} << 15;

struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  // Offset of row r's first element; its elements are `inner` apart.
  int64_t base(int64_t r) const { return (r / inner) * n * inner + r % inner; }
};

Rows rows_of(const Node& node) {
  const Shape& s = node.operands[0]->spec.shape;
  const int axis = static_cast<int>(node.attrs.axis);
  Rows r;
  for (int k = 0; k < axis; ++k) r.outer *= s[k];
  r.n = s[axis];
  for (int k = axis + 1; k < s.rank(); ++k) r.inner *= s[k];
  return r;
}

// The type a stored element is compared as.
template <typename T>
using Key = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

template <typename T>
Key<T> key(T v) {
  if constexpr (std::is_same_v<T, half>)
    return f16_to_float(v.bits);
  else if constexpr (std::is_same_v<T, bfloat16>)
    return bf16_to_float(v.bits);
  else
    return v;
}

template <typename T>
T stored(Key<T> v) {
  if constexpr (std::is_same_v<T, half>)
    return T{float_to_f16(v)};
  else if constexpr (std::is_same_v<T, bfloat16>)
    return T{float_to_bf16(v)};
  else
    return v;
}

template <typename K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>)
    return std::isnan(v);
  else
    return false;
}

// Strict ascending order with NaNs last.
template <typename K>
bool ascending(K a, K b) {
  if constexpr (std::is_floating_point_v<K>)
    return a < b || (!std::isnan(a) && std::isnan(b));
  else
    return a < b;
}

template <typename K>
void sort_keys(K* row, int64_t n, bool descending, bool parallel) {
  K* end = row + n;
  if constexpr (std::is_floating_point_v<K>) end = std::partition(row, end, [](K v) { return !std::isnan(v); });
  if (parallel)
    tbb::parallel_sort(row, end);
  else
    std::sort(row, end);
  if (descending) std::reverse(row, row + n);
}

// Values that compare equal but differ in their bits (-0.0 and 0.0, NaNs of
// other payloads) end up in a run of their own, in any order: a stable sort
// keeps them in the row's order. Where a run mixes bits, it is rewritten
// from the row (original(j): the key of its element j). Found by binary
// search in a sorted row, so a row without such a run costs nothing more.
template <typename K, typename Original>
void keep_order_of_equals(K* row, int64_t n, bool descending, const Original& original) {
  if constexpr (std::is_floating_point_v<K>) {
    auto rewrite = [&](K* first, K* last, auto belongs) {
      const bool mixed = std::any_of(first, last, [&](K v) { return std::memcmp(&v, first, sizeof(K)) != 0; });
      if (!mixed) return;
      for (int64_t j = 0; j < n && first != last; ++j)
        if (const K v = original(j); belongs(v)) *first++ = v;
    };
    auto is_nan = [](K v) { return std::isnan(v); };
    // NaNs last (ascending) or first (descending); the numbers sorted between.
    K* numbers = descending ? std::partition_point(row, row + n, is_nan) : row;
    K* numbers_end = descending ? row + n : std::partition_point(row, row + n, [](K v) { return !std::isnan(v); });
    rewrite(descending ? row : numbers_end, descending ? numbers : row + n, is_nan);
    const auto zeros = descending ? std::equal_range(numbers, numbers_end, K(0), std::greater<K>())
                                  : std::equal_range(numbers, numbers_end, K(0));
    rewrite(zeros.first, zeros.second, [](K v) { return v == 0; });
  }
}
template <typename T>
void sort_rows(const Rows& rows, const T* in, T* out, bool descending) {
  using K = Key<T>;
  const bool parallel = rows.count() == 1 && rows.n >= kParallelRow;
  split_work(rows.count(), rows.n, [&](int64_t begin, int64_t end) {
    std::vector<K> keys;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = rows.base(r);
      auto original = [&](int64_t j) { return key(in[base + j * rows.inner]); };
      if constexpr (std::is_same_v<K, T>) {
        if (rows.inner == 1) {
          std::copy(in + base, in + base + rows.n, out + base);
          sort_keys(out + base, rows.n, descending, parallel);
          keep_order_of_equals(out + base, rows.n, descending, original);
          continue;
        }
      }
      keys.resize(static_cast<size_t>(rows.n));
      for (int64_t j = 0; j < rows.n; ++j) keys[static_cast<size_t>(j)] = original(j);
      sort_keys(keys.data(), rows.n, descending, parallel);
      keep_order_of_equals(keys.data(), rows.n, descending, original);
      for (int64_t j = 0; j < rows.n; ++j) out[base + j * rows.inner] = stored<T>(keys[static_cast<size_t>(j)]);
    }
  });
}

// Writes a row's order as `index` (any integer dtype) at out[base + j * stride].
void store_order(DType index, void* out, int64_t base, int64_t stride, const std::vector<int64_t>& order) {
  visit_dtype(index, [&]<typename I>() {
    if constexpr (std::is_integral_v<I>) {
      I* o = static_cast<I*>(out) + base;
      for (size_t j = 0; j < order.size(); ++j) o[static_cast<int64_t>(j) * stride] = static_cast<I>(order[j]);
    }
  });
}

template <typename T>
void argsort_rows(const Rows& rows, const T* in, DType index, void* out, bool descending) {
  using K = Key<T>;
  const bool parallel = rows.count() == 1 && rows.n >= kParallelRow;
  split_work(rows.count(), rows.n, [&](int64_t begin, int64_t end) {
    std::vector<K> keys(static_cast<size_t>(rows.n));
    std::vector<int64_t> order(static_cast<size_t>(rows.n));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = rows.base(r);
      for (int64_t j = 0; j < rows.n; ++j) keys[static_cast<size_t>(j)] = key(in[base + j * rows.inner]);
      std::iota(order.begin(), order.end(), int64_t{0});
      const K* k = keys.data();
      auto before = [k, descending](int64_t a, int64_t b) {
        const K u = k[a], v = k[b];
        if (descending ? ascending(v, u) : ascending(u, v)) return true;
        if (descending ? ascending(u, v) : ascending(v, u)) return false;
        return a < b;
      };
      if (parallel)
        tbb::parallel_sort(order.begin(), order.end(), before);
      else
        std::sort(order.begin(), order.end(), before);
      store_order(index, out, base, rows.inner, order);
    }
  });
}

}  // namespace

void run_sort(const Node& node, const void* in, void* out) {
  if (node.spec.size() == 0) return;
  const Rows rows = rows_of(node);
  const bool descending = node.attrs.reverse;
  visit_dtype(node.operands[0]->spec.dtype, [&]<typename T>() {
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      const T* x = static_cast<const T*>(in);
      if (node.op == Op::Sort) return sort_rows(rows, x, static_cast<T*>(out), descending);
      argsort_rows(rows, x, node.spec.dtype, out, descending);
    }
  });
}

}  // namespace sluice::cpu
