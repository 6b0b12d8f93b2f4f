// The shape ops on the host through the public API: reshape, broadcast,
// transpose, pad, reverse, slice, put_slice, concatenate. They move bytes, so
// each case runs once per element size (1, 2, 4, 8, 16 bytes) on arguments
// holding distinct ids, and expects the ids, hand-computed, that land at each
// result position. Large cases (split across cores, tiled transposes) are
// checked against naive index loops.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

using Ids = std::vector<int64_t>;
using Xs = std::vector<Expr>;

template <typename T, DType D>
struct Elem {
  using type = T;
  static constexpr DType dtype = D;
};
// f16 elements hold their ids as bit patterns: shape ops never look inside.
using ElemTypes =
    ::testing::Types<Elem<int8_t, DType::S8>, Elem<uint16_t, DType::F16>, Elem<float, DType::F32>,
                     Elem<int64_t, DType::S64>, Elem<complex128, DType::C128>>;

template <typename T>
T value_of(int64_t id) {
  if constexpr (std::is_same_v<T, complex128>) {
    return {static_cast<double>(id), -static_cast<double>(id)};
  } else {
    return static_cast<T>(id);
  }
}

// -1 when a complex element's halves did not travel together.
template <typename T>
int64_t id_of(T v) {
  if constexpr (std::is_same_v<T, complex128>) {
    return v.imag() == -v.real() ? static_cast<int64_t>(v.real()) : -1;
  } else {
    return static_cast<int64_t>(v);
  }
}

template <typename E>
class ShapeOps : public ::testing::Test {
 protected:
  using T = typename E::type;

  // Traces f over arguments of `shapes` (element ids counted from 1,
  // argument after argument) followed by one s64 scalar per entry of
  // `starts`, runs it on the host and returns the id at each position of
  // the result.
  template <typename F>
  Ids moved(const std::vector<Shape>& shapes, F f) {
    return moved(shapes, {}, f);
  }
  template <typename F>
  Ids moved(const std::vector<Shape>& shapes, const Ids& starts, F f) {
    std::vector<Spec> specs;
    std::vector<Tensor> args;
    int64_t id = 1;
    for (const Shape& s : shapes) {
      specs.push_back({E::dtype, s});
      std::vector<T> data;
      for (int64_t k = 0; k < s.size(); ++k) data.push_back(value_of<T>(id++));
      args.push_back(tensor_from_bytes(specs.back(), data.data()));
    }
    for (int64_t start : starts) {
      specs.push_back(s64());
      args.push_back(scalar<int64_t>(start));
    }
    const Tensor out = compile(trace(specs, [&](const Xs& x) { return f(x); })).run(args).at(0);
    std::vector<T> result(static_cast<size_t>(out.size()));
    out.copy_to_host(result.data());
    Ids ids;
    for (const T& v : result) ids.push_back(id_of(v));
    return ids;
  }
};
TYPED_TEST_SUITE(ShapeOps, ElemTypes);

TYPED_TEST(ShapeOps, Reshape) {
  Ids got;
  got = this->moved({{2, 3}}, [](auto& x) { return reshape(x[0], {3, 2}); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 4, 5, 6}));
  got = this->moved({{}}, [](auto& x) { return reshape(x[0], {1, 1}); });
  EXPECT_EQ(got, (Ids{1})) << "scalar to [1][1]";
  got = this->moved({{4, 0}}, [](auto& x) { return reshape(x[0], {0, 4}); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Broadcast) {
  Ids got;
  got = this->moved({{}}, [](auto& x) { return broadcast(x[0], {2, 3}); });
  EXPECT_EQ(got, (Ids{1, 1, 1, 1, 1, 1})) << "scalar fill";
  got = this->moved({{3}}, [](auto& x) { return broadcast(x[0], {2, 3}, {1}); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 1, 2, 3})) << "rows repeated";
  got = this->moved({{2}}, [](auto& x) { return broadcast(x[0], {2, 3}, {0}); });
  EXPECT_EQ(got, (Ids{1, 1, 1, 2, 2, 2})) << "non-trailing axis: each element fills a row";
  got = this->moved({{3, 1}}, [](auto& x) { return broadcast(x[0], {2, 3, 2}, {1, 2}); });
  EXPECT_EQ(got, (Ids{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3})) << "size-1 axis repeats";
  got = this->moved({{2, 3}}, [](auto& x) { return broadcast(x[0], {2, 4, 3}, {0, 2}); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6}))
      << "new middle axis";
  got = this->moved({{2, 1}}, [](auto& x) { return broadcast(x[0], {2, 2, 1, 3}, {1, 2}); });
  EXPECT_EQ(got, (Ids{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2})) << "rank 4, new outer and inner axes";
  got = this->moved({{0}}, [](auto& x) { return broadcast(x[0], {3, 0}); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Transpose) {
  Ids got;
  got = this->moved({{2, 3}}, [](auto& x) { return transpose(x[0], {1, 0}); });
  EXPECT_EQ(got, (Ids{1, 4, 2, 5, 3, 6}));
  // x[a][b][c] = 1 + 12a + 4b + c; out[c][a][b] = x[a][b][c].
  got = this->moved({{2, 3, 4}}, [](auto& x) { return transpose(x[0], {2, 0, 1}); });
  EXPECT_EQ(got,
            (Ids{1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23, 4, 8, 12, 16, 20, 24}));
  // x[a][b][c][d] = 1 + 6a + 2c + d (b has size 1); out[d][c][b][a].
  got = this->moved({{2, 1, 3, 2}}, [](auto& x) { return transpose(x[0], {3, 2, 1, 0}); });
  EXPECT_EQ(got, (Ids{1, 7, 3, 9, 5, 11, 2, 8, 4, 10, 6, 12}));
  got = this->moved({{}}, [](auto& x) { return transpose(x[0]); });
  EXPECT_EQ(got, (Ids{1})) << "rank 0";
  got = this->moved({{0, 3}}, [](auto& x) { return transpose(x[0]); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Reverse) {
  Ids got;
  got = this->moved({{2, 3}}, [](auto& x) { return reverse(x[0], {1}); });
  EXPECT_EQ(got, (Ids{3, 2, 1, 6, 5, 4}));
  got = this->moved({{2, 3}}, [](auto& x) { return reverse(x[0], {0}); });
  EXPECT_EQ(got, (Ids{4, 5, 6, 1, 2, 3}));
  got = this->moved({{2, 3}}, [](auto& x) { return reverse(x[0]); });
  EXPECT_EQ(got, (Ids{6, 5, 4, 3, 2, 1})) << "all axes";
  got = this->moved({{2, 2, 2}}, [](auto& x) { return reverse(x[0], {0, 2}); });
  EXPECT_EQ(got, (Ids{6, 5, 8, 7, 2, 1, 4, 3}));
  got = this->moved({{}}, [](auto& x) { return reverse(x[0]); });
  EXPECT_EQ(got, (Ids{1})) << "rank 0";
  got = this->moved({{0, 3}}, [](auto& x) { return reverse(x[0]); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Pad) {
  Ids got;
  // The value is the last argument: id 4 after x's 3 elements.
  got = this->moved({{3}, {}}, [](auto& x) { return pad(x[0], x[1], {{1, 2, 1}}); });
  EXPECT_EQ(got, (Ids{4, 1, 4, 2, 4, 3, 4, 4})) << "low 1, high 2, interior 1";
  got = this->moved({{5}, {}}, [](auto& x) { return pad(x[0], x[1], {{-1, 1, 0}}); });
  EXPECT_EQ(got, (Ids{2, 3, 4, 5, 6})) << "negative low trims";
  // Dilated x: 1 v 2 v 3 v 4; low -2 drops "1 v", high -1 drops "4".
  got = this->moved({{4}, {}}, [](auto& x) { return pad(x[0], x[1], {{-2, -1, 1}}); });
  EXPECT_EQ(got, (Ids{2, 5, 3, 5})) << "negative low and high with interior";
  got = this->moved({{2, 3}, {}}, [](auto& x) { return pad(x[0], x[1], {{1, 0, 0}, {0, 1, 1}}); });
  EXPECT_EQ(got, (Ids{7, 7, 7, 7, 7, 7, 1, 7, 2, 7, 3, 7, 4, 7, 5, 7, 6, 7}));
  got = this->moved({{2, 2}, {}}, [](auto& x) { return pad(x[0], x[1], {{0, 1, 0}, {-1, 1, 0}}); });
  EXPECT_EQ(got, (Ids{2, 5, 4, 5, 5, 5})) << "trim one axis, grow the other";
  got = this->moved({{1, 2, 2}, {}}, [](auto& x) {
    return pad(x[0], x[1], {{1, 0, 0}, {0, 1, 0}, {1, 0, 0}});
  });
  EXPECT_EQ(got, (Ids{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 2, 5, 3, 4, 5, 5, 5})) << "border slabs on three axes";
  got = this->moved({{2, 2}, {}}, [](auto& x) { return pad(x[0], x[1], {{0, 0, 0}, {-3, 2, 0}}); });
  EXPECT_EQ(got, (Ids{5, 5})) << "everything trimmed: only the value remains";
  got = this->moved({{0}, {}}, [](auto& x) { return pad(x[0], x[1], {{2, 1, 3}}); });
  EXPECT_EQ(got, (Ids{1, 1, 1})) << "zero-size x: the value has id 1";
  got = this->moved({{1, 2, 1, 1}, {}}, [](auto& x) {
    return pad(x[0], x[1], {{0, 0, 0}, {0, 0, 2}, {0, 0, 0}, {0, 0, 0}});
  });
  EXPECT_EQ(got, (Ids{1, 3, 3, 2})) << "rank 4, interior only";
}

TYPED_TEST(ShapeOps, StaticSlice) {
  Ids got;
  got = this->moved({{10}}, [](auto& x) { return slice(x[0], {2}, {7}, {2}); });
  EXPECT_EQ(got, (Ids{3, 5, 7, 9})) << "[2:9:2]";
  // x[r][c] = 1 + 5r + c; rows 1, 3; columns 1, 4.
  got = this->moved({{4, 5}}, [](auto& x) { return slice(x[0], {1, 1}, {3, 4}, {2, 3}); });
  EXPECT_EQ(got, (Ids{7, 10, 17, 20}));
  got = this->moved({{3, 2, 2}}, [](auto& x) { return slice(x[0], {1, 0, 0}, {2, 2, 2}); });
  EXPECT_EQ(got, (Ids{5, 6, 7, 8, 9, 10, 11, 12})) << "along axis 0: one contiguous run";
  // x[a][b][c][d] = 1 + 12a + 6b + 3c + d.
  got = this->moved({{2, 2, 2, 3}}, [](auto& x) { return slice(x[0], {1, 0, 1, 1}, {1, 2, 1, 2}); });
  EXPECT_EQ(got, (Ids{17, 18, 23, 24})) << "rank 4";
  got = this->moved({{3, 2}}, [](auto& x) { return slice(x[0], {1, 0}, {0, 2}); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, DynamicSliceClampsStarts) {
  Ids got;
  auto length3 = [](auto& x) { return slice(x[0], {x[1]}, {3}); };
  got = this->moved({{5}}, {1}, length3);
  EXPECT_EQ(got, (Ids{2, 3, 4}));
  got = this->moved({{5}}, {4}, length3);
  EXPECT_EQ(got, (Ids{3, 4, 5})) << "start 4 clamps to 2";
  got = this->moved({{5}}, {-3}, length3);
  EXPECT_EQ(got, (Ids{1, 2, 3})) << "start -3 clamps to 0";
  // x[r][c] = 1 + 4r + c; starts (1, 10) clamp to (1, 2).
  got = this->moved({{3, 4}}, {1, 10}, [](auto& x) { return slice(x[0], {x[1], x[2]}, {2, 2}); });
  EXPECT_EQ(got, (Ids{7, 8, 11, 12}));
  got = this->moved({{3, 4}}, {5, 1}, [](auto& x) { return slice(x[0], {x[1], x[2]}, {3, 2}, {2, 2}); });
  EXPECT_EQ(got, (Ids{2, 10})) << "strided: starts clamp to (0, 1) so that the lengths fit";
  got = this->moved({{}}, [](auto& x) { return slice(x[0], Xs{}, {}); });
  EXPECT_EQ(got, (Ids{1})) << "rank 0";
}

TYPED_TEST(ShapeOps, PutSlice) {
  Ids got;
  // x ids 1..5, update ids 6, 7.
  got = this->moved({{5}, {2}}, [](auto& x) { return put_slice(x[0], {3}, x[1]); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 6, 7})) << "at the end";
  auto dynamic = [](auto& x) { return put_slice(x[0], {x[2]}, x[1]); };
  got = this->moved({{5}, {2}}, {4}, dynamic);
  EXPECT_EQ(got, (Ids{1, 2, 3, 6, 7})) << "start 4 clamps to 3";
  got = this->moved({{5}, {2}}, {-1}, dynamic);
  EXPECT_EQ(got, (Ids{6, 7, 3, 4, 5})) << "start -1 clamps to 0";
  // x ids 1..9 as [3][3], update ids 10..13 as [2][2].
  got = this->moved({{3, 3}, {2, 2}}, [](auto& x) { return put_slice(x[0], {1, 1}, x[1]); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 4, 10, 11, 7, 12, 13}));
  got = this->moved({{3, 3}, {2, 2}}, {7, -2}, [](auto& x) { return put_slice(x[0], {x[2], x[3]}, x[1]); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 10, 11, 6, 12, 13, 9})) << "starts (7, -2) clamp to (1, 0)";
  got = this->moved({{2, 2}, {2, 2}}, [](auto& x) { return put_slice(x[0], {0, 0}, x[1]); });
  EXPECT_EQ(got, (Ids{5, 6, 7, 8})) << "the whole of x";
  got = this->moved({{}, {}}, [](auto& x) { return put_slice(x[0], std::vector<int64_t>{}, x[1]); });
  EXPECT_EQ(got, (Ids{2})) << "rank 0";
  got = this->moved({{3}, {0}}, [](auto& x) { return put_slice(x[0], {1}, x[1]); });
  EXPECT_EQ(got, (Ids{1, 2, 3})) << "empty update";
}

TYPED_TEST(ShapeOps, Concatenate) {
  Ids got;
  got = this->moved({{2, 2}, {1, 2}}, [](auto& x) { return concatenate(x, 0); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 4, 5, 6})) << "outer axis";
  got = this->moved({{2, 2}, {2, 1}, {2, 0}, {2, 3}}, [](auto& x) { return concatenate(x, 1); });
  EXPECT_EQ(got, (Ids{1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12})) << "inner axis, with an empty operand";
  got = this->moved({{1, 1, 2}, {1, 1, 2}}, [](auto& x) { return concatenate(x, 1); });
  EXPECT_EQ(got, (Ids{1, 2, 3, 4})) << "middle axis";
  got = this->moved({{2, 1, 1, 2}, {2, 1, 1, 1}}, [](auto& x) { return concatenate(x, -1); });
  EXPECT_EQ(got, (Ids{1, 2, 5, 3, 4, 6})) << "rank 4, last axis";
  got = this->moved({{0, 1}, {0, 2}}, [](auto& x) { return concatenate(x, 1); });
  EXPECT_EQ(got, Ids{}) << "zero-size";
}

// ---- large cases: split across cores, tiled transposes

std::vector<float> counting(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// Runs f, traced over f32 arguments of `shapes`, on `args`.
template <typename F>
std::vector<float> run_f32(const std::vector<Shape>& shapes, const std::vector<std::vector<float>>& args,
                           F f) {
  std::vector<Spec> specs;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < shapes.size(); ++i) {
    specs.push_back({DType::F32, shapes[i]});
    tensors.push_back(tensor(args[i], shapes[i]));
  }
  const Tensor out = compile(trace(specs, [&](const Xs& x) { return f(x); })).run(tensors).at(0);
  return out.to_vector<float>();
}

// Expects out[i] == x[index(i)] for every i.
template <typename F>
void expect_gather(const std::vector<float>& out, const std::vector<float>& x, const char* what, F index) {
  int64_t wrong = 0, first = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != x[static_cast<size_t>(index(static_cast<int64_t>(i)))]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0) << what << ": first wrong element at " << first;
}

TEST(ShapeOpsLarge, Transpose2D) {
  const int64_t rows = 300, cols = 517;
  const auto x = counting(rows * cols);
  const auto out = run_f32({{rows, cols}}, {x}, [](auto& a) { return transpose(a[0]); });
  ASSERT_EQ(out.size(), x.size());
  expect_gather(out, x, "transpose [300][517]", [&](int64_t i) { return (i % rows) * cols + i / rows; });
}

TEST(ShapeOpsLarge, TransposeLastTwoAxes) {
  const int64_t b = 3, r = 70, c = 130;
  const auto x = counting(b * r * c);
  const auto out = run_f32({{b, r, c}}, {x}, [](auto& a) { return transpose(a[0], {0, 2, 1}); });
  ASSERT_EQ(out.size(), x.size());
  expect_gather(out, x, "transpose [3][70][130] {0, 2, 1}", [&](int64_t i) {
    const int64_t k = i / (c * r), j = (i / r) % c, l = i % r;  // out[k][j][l] = x[k][l][j]
    return (k * r + l) * c + j;
  });
}

TEST(ShapeOpsLarge, Transpose3D) {
  const int64_t d0 = 40, d1 = 50, d2 = 60;
  const auto x = counting(d0 * d1 * d2);
  auto out = run_f32({{d0, d1, d2}}, {x}, [](auto& a) { return transpose(a[0], {2, 0, 1}); });
  ASSERT_EQ(out.size(), x.size());
  expect_gather(out, x, "transpose [40][50][60] {2, 0, 1}", [&](int64_t i) {
    const int64_t k = i / (d0 * d1), a = (i / d1) % d0, b = i % d1;  // out[k][a][b] = x[a][b][k]
    return (a * d1 + b) * d2 + k;
  });
  out = run_f32({{d0, d1, d2}}, {x}, [](auto& a) { return transpose(a[0], {1, 2, 0}); });
  ASSERT_EQ(out.size(), x.size());
  expect_gather(out, x, "transpose [40][50][60] {1, 2, 0}", [&](int64_t i) {
    const int64_t b = i / (d2 * d0), k = (i / d0) % d2, a = i % d0;  // out[b][k][a] = x[a][b][k]
    return (a * d1 + b) * d2 + k;
  });
}

TEST(ShapeOpsLarge, BroadcastSliceConcatenate) {
  const auto row = counting(1000);
  auto out = run_f32({{1000}}, {row}, [](auto& a) { return broadcast(a[0], {300, 1000}); });
  expect_gather(out, row, "rows repeated", [](int64_t i) { return i % 1000; });
  out = run_f32({{1000}}, {row}, [](auto& a) { return broadcast(a[0], {1000, 300}, {0}); });
  expect_gather(out, row, "columns repeated", [](int64_t i) { return i / 300; });
  out = run_f32({{}}, {{7.0f}}, [](auto& a) { return broadcast(a[0], {500, 400}); });
  expect_gather(out, {7.0f}, "scalar fill", [](int64_t) { return 0; });

  const auto x = counting(400 * 500);
  out = run_f32({{400, 500}}, {x}, [](auto& a) { return slice(a[0], {10, 3}, {300, 480}, {2, 2}); });
  expect_gather(out, x, "strided slice",
                [](int64_t i) { return (10 + 2 * (i / 240)) * 500 + 3 + 2 * (i % 240); });
  out = run_f32({{400, 500}}, {x}, [](auto& a) { return slice(a[0], {50, 0}, {300, 500}); });
  expect_gather(out, x, "slice along axis 0", [](int64_t i) { return 50 * 500 + i; });
  out = run_f32({{400, 500}, {400, 500}}, {x, x}, [](auto& a) { return concatenate(a, 1); });
  expect_gather(out, x, "concatenate along the inner axis",
                [](int64_t i) { return (i / 1000) * 500 + i % 500; });
}

TEST(ShapeOpsLarge, PadReversePutSlice) {
  const auto x = counting(300 * 400);
  const float value = -5.0f;
  auto out = run_f32({{300, 400}, {}}, {x, {value}}, [](auto& a) {
    return pad(a[0], a[1], {{2, 1, 0}, {-1, 2, 0}});
  });
  ASSERT_EQ(out.size(), 303u * 401u);
  int64_t wrong = 0;
  for (int64_t i = 0; i < 303; ++i) {
    for (int64_t j = 0; j < 401; ++j) {
      const int64_t r = i - 2, c = j + 1;
      const float want = r >= 0 && r < 300 && c < 400 ? x[static_cast<size_t>(r * 400 + c)] : value;
      wrong += out[static_cast<size_t>(i * 401 + j)] != want;
    }
  }
  EXPECT_EQ(wrong, 0) << "pad [300][400] low (2, -1), high (1, 2)";

  out = run_f32({{300, 400}}, {x}, [](auto& a) { return reverse(a[0], {1}); });
  expect_gather(out, x, "reverse the inner axis", [](int64_t i) { return (i / 400) * 400 + 399 - i % 400; });

  // x's first 100 rows written over its rows 200..299.
  out = run_f32({{300, 400}}, {x}, [](auto& a) {
    return put_slice(a[0], {200, 0}, slice(a[0], {0, 0}, {100, 400}));
  });
  expect_gather(out, x, "put_slice of 100 rows",
                [](int64_t i) { return i >= 200 * 400 ? i - 200 * 400 : i; });
}

}  // namespace
}  // namespace sluice
