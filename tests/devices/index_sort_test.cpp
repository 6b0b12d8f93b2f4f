// sort, argsort, gather and indexed_add on the host at sizes the
// conformance suite does not reach: one long row (oneTBB's parallel_sort),
// many rows along an inner axis, and large gathers split across threads,
// each against std:: algorithms.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

std::vector<float> random_floats(size_t n, unsigned seed, int nans) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-100, 100);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  for (int k = 0; k < nans; ++k) x[rng() % n] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

// Ascending with NaNs last, ties by index: what argsort promises.
std::vector<int64_t> reference_order(const std::vector<float>& x, bool descending) {
  std::vector<int64_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank = [](float v) { return std::isnan(v) ? 1 : 0; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const float u = x[static_cast<size_t>(a)], v = x[static_cast<size_t>(b)];
    if (rank(u) != rank(v)) return descending ? rank(u) > rank(v) : rank(u) < rank(v);
    return descending ? u > v : u < v;
  });
  return order;
}

TEST(Sort, OneLongRowWithNansMatchesStdSortBothWays) {
  const int64_t n = 300000;
  const std::vector<float> x = random_floats(static_cast<size_t>(n), 1, 50);
  for (const SortDirection d : {SortDirection::Ascending, SortDirection::Descending}) {
    const bool descending = d == SortDirection::Descending;
    Executable exe = compile(trace({f32({n})}, [&](Expr v) {
      return tuple(sort(v, {.direction = d}), argsort(v, {.direction = d}));
    }));
    const std::vector<Tensor> out = exe.run({tensor(x, Shape{n})});
    const std::vector<int64_t> want = reference_order(x, descending);
    std::span<const float> values = out[0].data<float>();
    std::span<const int64_t> order = out[1].data<int64_t>();
    for (size_t i = 0; i < want.size(); ++i) {
      const float w = x[static_cast<size_t>(want[i])];
      ASSERT_TRUE(std::isnan(w) ? std::isnan(values[i]) : values[i] == w)
          << (descending ? "descending" : "ascending") << " value " << i << ": " << values[i] << " vs " << w;
      ASSERT_EQ(order[i], want[i]) << (descending ? "descending" : "ascending") << " index " << i;
    }
  }
}

// Sort is stable as argsort is: values that compare equal but differ in
// their bits (-0.0 and 0.0, NaNs of other payloads) keep their order, so
// sort(x) is take_along_axis(x, argsort(x)) bit for bit, both ways, for each
// floating dtype, in one long row (oneTBB's sort) and in short ones. Sort
// used to give the zeros of the row below as -0, 0, -0, 0.
TEST(Sort, ValuesEqualButForTheirBitsKeepTheirOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float other_nan = -std::numeric_limits<float>::quiet_NaN();
  std::vector<float> row = {nan, 1, -0.0f, 0, -inf, inf, other_nan, 1, -1, 0, -0.0f, 2};
  std::vector<float> long_row;
  for (int k = 0; k < 4000; ++k) long_row.insert(long_row.end(), row.begin(), row.end());
  for (const std::vector<float>& x : {row, long_row}) {
    const auto n = static_cast<int64_t>(x.size());
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
      for (const SortDirection d : {SortDirection::Ascending, SortDirection::Descending}) {
        Executable exe = compile(trace({f32({n})}, [&](Expr v) {
          Expr y = as_type(v, t);
          return tuple(bitcast(sort(y, {.direction = d}), dtype_bits(t) == 64 ? DType::U64 : dtype_bits(t) == 32 ? DType::U32 : DType::U16),
                       bitcast(take_along_axis(y, argsort(y, {.direction = d}), 0),
                               dtype_bits(t) == 64 ? DType::U64 : dtype_bits(t) == 32 ? DType::U32 : DType::U16));
        }));
        const std::vector<Tensor> out = exe.run({tensor(x, Shape{n})});
        std::vector<uint8_t> sorted(static_cast<size_t>(out[0].spec().bytes())), picked(sorted.size());
        out[0].copy_to_host(sorted.data());
        out[1].copy_to_host(picked.data());
        EXPECT_TRUE(sorted == picked) << dtype_name(t) << (d == SortDirection::Descending ? " descending" : " ascending")
                                      << ", a row of " << n;
      }
  }
}

TEST(Sort, ManyRowsAlongAnInnerAxisMatchStdSort) {
  const int64_t rows = 64, n = 1000, inner = 3;
  const std::vector<float> x = random_floats(static_cast<size_t>(rows * n * inner), 2, 10);
  Executable exe = compile(trace({f32({rows, n, inner})}, [](Expr v) {
    return tuple(sort(v, {.axis = 1}), argsort(v, {.axis = 1, .index_dtype = DType::S32}));
  }));
  const std::vector<Tensor> out = exe.run({tensor(x, Shape{rows, n, inner})});
  std::span<const float> values = out[0].data<float>();
  std::span<const int32_t> order = out[1].data<int32_t>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < inner; ++c) {
      std::vector<float> row(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = x[static_cast<size_t>((r * n + j) * inner + c)];
      const std::vector<int64_t> want = reference_order(row, false);
      for (int64_t j = 0; j < n; ++j) {
        const auto at = static_cast<size_t>((r * n + j) * inner + c);
        const float w = row[static_cast<size_t>(want[static_cast<size_t>(j)])];
        ASSERT_TRUE(std::isnan(w) ? std::isnan(values[at]) : values[at] == w) << "row " << r << " col " << c;
        ASSERT_EQ(order[at], want[static_cast<size_t>(j)]) << "row " << r << " col " << c << " place " << j;
      }
    }
}

TEST(Gather, ManyRowsSplitAcrossThreadsThenScatteredBack) {
  const int64_t table_rows = 5000, width = 37, picked = 20000;
  const std::vector<float> table = random_floats(static_cast<size_t>(table_rows * width), 3, 0);
  std::vector<int64_t> rows(static_cast<size_t>(picked));
  std::mt19937 rng(4);
  for (int64_t& r : rows) r = static_cast<int64_t>(rng() % (table_rows + 100)) - 50;  // some clamp
  Executable exe = compile(trace({f32({table_rows, width}), s64({picked})}, [&](Expr t, Expr i) {
    const Expr g = take(t, i);
    return tuple(g, indexed_add(broadcast(constant(0.0, DType::F32), t.shape()), reshape(i, Shape{picked, 1}), g));
  }));
  const std::vector<Tensor> out = exe.run({tensor(table, Shape{table_rows, width}), tensor(rows, Shape{picked})});
  std::span<const float> got = out[0].data<float>();
  std::vector<double> counts(static_cast<size_t>(table_rows), 0);
  for (int64_t i = 0; i < picked; ++i) {
    const int64_t r = std::clamp<int64_t>(rows[static_cast<size_t>(i)], 0, table_rows - 1);
    counts[static_cast<size_t>(r)] += 1;
    for (int64_t c = 0; c < width; ++c)
      ASSERT_EQ(got[static_cast<size_t>(i * width + c)], table[static_cast<size_t>(r * width + c)]) << "row " << i;
  }
  std::span<const float> summed = out[1].data<float>();
  for (int64_t r = 0; r < table_rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const double want = counts[static_cast<size_t>(r)] * table[static_cast<size_t>(r * width + c)];
      ASSERT_NEAR(summed[static_cast<size_t>(r * width + c)], want, 1e-4 * (1 + std::abs(want))) << "row " << r;
    }
}

}  // namespace
}  // namespace sluice
