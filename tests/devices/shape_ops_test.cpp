// The CPU shape kernels: reshape, broadcast, transpose, pad, reverse, slice,
// put_slice, concatenate. They move bytes, so each case runs once per element
// size (1, 2, 4, 8, 16 bytes) on operands holding distinct ids, and expects
// the ids, hand-computed, that land at each result position. Large cases
// (split across cores, tiled) are checked against naive index loops.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "ops/error.h"
#include "ops/function.h"

namespace sluice {
namespace {

using Ids = std::vector<int64_t>;

template <typename T, DType D>
struct Elem {
  using type = T;
  static constexpr DType dtype = D;
};
// f16 elements hold their ids as bit patterns: the kernels never look inside.
using ElemTypes = ::testing::Types<Elem<int8_t, DType::S8>, Elem<uint16_t, DType::F16>, Elem<float, DType::F32>,
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

NodePtr start_node(int64_t index) { return parameter(index, s64({})).node(); }

template <typename E>
class ShapeOps : public ::testing::Test {
 protected:
  using T = typename E::type;

  // Runs `op` with operands of `shapes` (element ids counted from 1, operand
  // after operand) followed by one s64 scalar operand per dynamic start;
  // returns the id found at each position of the result.
  Ids moved(Op op, Shape out, const std::vector<Shape>& shapes, Attrs attrs, const Ids& starts = {}) {
    std::vector<NodePtr> operands;
    std::vector<std::vector<T>> data;
    int64_t id = 1;
    for (const Shape& s : shapes) {
      operands.push_back(parameter(static_cast<int64_t>(operands.size()), {E::dtype, s}).node());
      auto& d = data.emplace_back();
      for (int64_t k = 0; k < s.size(); ++k) d.push_back(value_of<T>(id++));
    }
    std::vector<const void*> in;
    for (const auto& d : data) in.push_back(d.data());
    for (const int64_t& start : starts) {
      operands.push_back(start_node(static_cast<int64_t>(operands.size())));
      in.push_back(&start);
    }
    const Spec spec{E::dtype, std::move(out)};
    NodePtr node = Node::make(op, spec, std::move(operands), std::move(attrs));
    std::vector<T> result(static_cast<size_t>(spec.size()), value_of<T>(0));
    cpu::run_shape(*node, in, result.data());
    Ids ids;
    for (const T& v : result) ids.push_back(id_of(v));
    return ids;
  }
};
TYPED_TEST_SUITE(ShapeOps, ElemTypes);

TYPED_TEST(ShapeOps, Reshape) {
  EXPECT_EQ(this->moved(Op::Reshape, {3, 2}, {{2, 3}}, {}), (Ids{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(this->moved(Op::Reshape, {1, 1}, {{}}, {}), (Ids{1})) << "scalar to [1][1]";
  EXPECT_EQ(this->moved(Op::Reshape, {0, 4}, {{4, 0}}, {}), Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Broadcast) {
  EXPECT_EQ(this->moved(Op::Broadcast, {2, 3}, {{}}, {}), (Ids{1, 1, 1, 1, 1, 1})) << "scalar fill";
  EXPECT_EQ(this->moved(Op::Broadcast, {2, 3}, {{3}}, {.axes = {1}}), (Ids{1, 2, 3, 1, 2, 3}))
      << "rows repeated";
  EXPECT_EQ(this->moved(Op::Broadcast, {2, 3}, {{2}}, {.axes = {0}}), (Ids{1, 1, 1, 2, 2, 2}))
      << "non-trailing axis: each element fills a row";
  EXPECT_EQ(this->moved(Op::Broadcast, {2, 3, 2}, {{3, 1}}, {.axes = {1, 2}}),
            (Ids{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}))
      << "size-1 operand axis repeats";
  EXPECT_EQ(this->moved(Op::Broadcast, {2, 4, 3}, {{2, 3}}, {.axes = {0, 2}}),
            (Ids{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6}))
      << "new middle axis";
  EXPECT_EQ(this->moved(Op::Broadcast, {1, 2, 1, 2}, {{2, 2}}, {.axes = {1, 3}}), (Ids{1, 2, 3, 4}))
      << "rank 4 with size-1 output axes";
  EXPECT_EQ(this->moved(Op::Broadcast, {3, 0}, {{0}}, {.axes = {1}}), Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Transpose) {
  EXPECT_EQ(this->moved(Op::Transpose, {3, 2}, {{2, 3}}, {.axes = {1, 0}}), (Ids{1, 4, 2, 5, 3, 6}));
  // x[a][b][c] = 1 + 12a + 4b + c; out[c][a][b] = x[a][b][c].
  EXPECT_EQ(this->moved(Op::Transpose, {4, 2, 3}, {{2, 3, 4}}, {.axes = {2, 0, 1}}),
            (Ids{1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23, 4, 8, 12, 16, 20, 24}));
  // x[a][b][c][d] = 1 + 6a + 6b + 2c + d (b has size 1); out[d][c][b][a].
  EXPECT_EQ(this->moved(Op::Transpose, {2, 3, 1, 2}, {{2, 1, 3, 2}}, {.axes = {3, 2, 1, 0}}),
            (Ids{1, 7, 3, 9, 5, 11, 2, 8, 4, 10, 6, 12}));
  EXPECT_EQ(this->moved(Op::Transpose, {}, {{}}, {}), (Ids{1})) << "rank 0";
  EXPECT_EQ(this->moved(Op::Transpose, {2, 1}, {{1, 2}}, {.axes = {1, 0}}), (Ids{1, 2}))
      << "size-1 axes keep row-major order";
}

TYPED_TEST(ShapeOps, Reverse) {
  EXPECT_EQ(this->moved(Op::Reverse, {2, 3}, {{2, 3}}, {.axes = {1}}), (Ids{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(this->moved(Op::Reverse, {2, 3}, {{2, 3}}, {.axes = {0}}), (Ids{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(this->moved(Op::Reverse, {2, 3}, {{2, 3}}, {.axes = {0, 1}}), (Ids{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(this->moved(Op::Reverse, {2, 2, 2}, {{2, 2, 2}}, {.axes = {0, 2}}), (Ids{6, 5, 8, 7, 2, 1, 4, 3}));
  EXPECT_EQ(this->moved(Op::Reverse, {}, {{}}, {}), (Ids{1})) << "rank 0";
  EXPECT_EQ(this->moved(Op::Reverse, {0, 3}, {{0, 3}}, {.axes = {0, 1}}), Ids{}) << "zero-size";
}

TYPED_TEST(ShapeOps, Pad) {
  // The value operand is the last id: 4 for x of 3 elements.
  EXPECT_EQ(this->moved(Op::Pad, {8}, {{3}, {}}, {.padding = {{1, 2, 1}}}), (Ids{4, 1, 4, 2, 4, 3, 4, 4}))
      << "low 1, high 2, interior 1";
  EXPECT_EQ(this->moved(Op::Pad, {5}, {{5}, {}}, {.padding = {{-1, 1, 0}}}), (Ids{2, 3, 4, 5, 6}))
      << "negative low trims";
  // Dilated x: 1 v 2 v 3 v 4; low -2 drops "1 v", high -1 drops "4".
  EXPECT_EQ(this->moved(Op::Pad, {4}, {{4}, {}}, {.padding = {{-2, -1, 1}}}), (Ids{2, 5, 3, 5}))
      << "negative low and high with interior";
  EXPECT_EQ(this->moved(Op::Pad, {3, 6}, {{2, 3}, {}}, {.padding = {{1, 0, 0}, {0, 1, 1}}}),
            (Ids{7, 7, 7, 7, 7, 7, 1, 7, 2, 7, 3, 7, 4, 7, 5, 7, 6, 7}));
  EXPECT_EQ(this->moved(Op::Pad, {3, 2}, {{2, 2}, {}}, {.padding = {{0, 1, 0}, {-1, 1, 0}}}),
            (Ids{2, 5, 4, 5, 5, 5}))
      << "trim one axis, grow the other";
  EXPECT_EQ(this->moved(Op::Pad, {2, 3, 3}, {{1, 2, 2}, {}}, {.padding = {{1, 0, 0}, {0, 1, 0}, {1, 0, 0}}}),
            (Ids{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 2, 5, 3, 4, 5, 5, 5}))
      << "border slabs on three axes";
  EXPECT_EQ(this->moved(Op::Pad, {2, 1}, {{2, 2}, {}}, {.padding = {{0, 0, 0}, {-3, 2, 0}}}), (Ids{5, 5}))
      << "everything trimmed: only the value remains";
  EXPECT_EQ(this->moved(Op::Pad, {3}, {{0}, {}}, {.padding = {{2, 1, 3}}}), (Ids{1, 1, 1}))
      << "zero-size x: the value's id is 1";
  EXPECT_EQ(this->moved(Op::Pad, {}, {{}, {}}, {}), (Ids{1})) << "rank 0";
  EXPECT_EQ(this->moved(Op::Pad, {1, 4, 1, 1}, {{1, 2, 1, 1}, {}}, {.padding = {{0, 0, 0}, {0, 0, 2}, {0, 0, 0}, {0, 0, 0}}}),
            (Ids{1, 3, 3, 2}))
      << "rank 4, interior only";
}

TYPED_TEST(ShapeOps, StaticSlice) {
  EXPECT_EQ(this->moved(Op::Slice, {4}, {{10}}, {.starts = {2}, .lengths = {7}, .strides = {2}}), (Ids{3, 5, 7, 9}))
      << "[2:9:2]";
  // x[r][c] = 1 + 5r + c; rows 1, 3; columns 1, 4.
  EXPECT_EQ(this->moved(Op::Slice, {2, 2}, {{4, 5}}, {.starts = {1, 1}, .lengths = {3, 4}, .strides = {2, 3}}),
            (Ids{7, 10, 17, 20}));
  EXPECT_EQ(this->moved(Op::Slice, {2, 2, 2}, {{3, 2, 2}}, {.starts = {1, 0, 0}, .lengths = {2, 2, 2}, .strides = {1, 1, 1}}),
            (Ids{5, 6, 7, 8, 9, 10, 11, 12}))
      << "along axis 0: one contiguous run";
  EXPECT_EQ(this->moved(Op::Slice, {1, 2, 1, 2}, {{2, 2, 2, 3}}, {.starts = {1, 0, 1, 1}, .lengths = {1, 2, 1, 2}, .strides = {1, 1, 1, 1}}),
            (Ids{17, 18, 23, 24}))
      << "rank 4";
  EXPECT_EQ(this->moved(Op::Slice, {}, {{}}, {}), (Ids{1})) << "rank 0";
  EXPECT_EQ(this->moved(Op::Slice, {0, 2}, {{3, 2}}, {.starts = {1, 0}, .lengths = {0, 2}, .strides = {1, 1}}), Ids{})
      << "zero-size";
}

TYPED_TEST(ShapeOps, DynamicSliceClampsStarts) {
  const Attrs length3{.lengths = {3}, .strides = {1}};
  EXPECT_EQ(this->moved(Op::Slice, {3}, {{5}}, length3, {1}), (Ids{2, 3, 4}));
  EXPECT_EQ(this->moved(Op::Slice, {3}, {{5}}, length3, {4}), (Ids{3, 4, 5})) << "start 4 clamps to 2";
  EXPECT_EQ(this->moved(Op::Slice, {3}, {{5}}, length3, {-3}), (Ids{1, 2, 3})) << "start -3 clamps to 0";
  // x[r][c] = 1 + 4r + c; starts (1, 10) clamp to (1, 2).
  EXPECT_EQ(this->moved(Op::Slice, {2, 2}, {{3, 4}}, {.lengths = {2, 2}, .strides = {1, 1}}, {1, 10}),
            (Ids{7, 8, 11, 12}));
  EXPECT_EQ(this->moved(Op::Slice, {2, 1}, {{3, 4}}, {.lengths = {3, 2}, .strides = {2, 2}}, {5, 1}),
            (Ids{2, 10}))
      << "strided: starts clamp to (0, 1) so that the length fits";
}

TYPED_TEST(ShapeOps, PutSlice) {
  // x ids 1..5, update ids 6, 7.
  EXPECT_EQ(this->moved(Op::PutSlice, {5}, {{5}, {2}}, {.starts = {3}}), (Ids{1, 2, 3, 6, 7})) << "at the end";
  EXPECT_EQ(this->moved(Op::PutSlice, {5}, {{5}, {2}}, {}, {4}), (Ids{1, 2, 3, 6, 7})) << "start 4 clamps to 3";
  EXPECT_EQ(this->moved(Op::PutSlice, {5}, {{5}, {2}}, {}, {-1}), (Ids{6, 7, 3, 4, 5})) << "start -1 clamps to 0";
  // x ids 1..9 as [3][3], update ids 10..13 as [2][2].
  EXPECT_EQ(this->moved(Op::PutSlice, {3, 3}, {{3, 3}, {2, 2}}, {.starts = {1, 1}}), (Ids{1, 2, 3, 4, 10, 11, 7, 12, 13}));
  EXPECT_EQ(this->moved(Op::PutSlice, {3, 3}, {{3, 3}, {2, 2}}, {}, {7, -2}), (Ids{1, 2, 3, 10, 11, 6, 12, 13, 9}))
      << "starts (7, -2) clamp to (1, 0)";
  EXPECT_EQ(this->moved(Op::PutSlice, {2, 2}, {{2, 2}, {2, 2}}, {.starts = {0, 0}}), (Ids{5, 6, 7, 8})) << "whole";
  EXPECT_EQ(this->moved(Op::PutSlice, {}, {{}, {}}, {}), (Ids{2})) << "rank 0";
  EXPECT_EQ(this->moved(Op::PutSlice, {3}, {{3}, {0}}, {.starts = {1}}), (Ids{1, 2, 3})) << "empty update";
}

TYPED_TEST(ShapeOps, Concatenate) {
  EXPECT_EQ(this->moved(Op::Concatenate, {3, 2}, {{2, 2}, {1, 2}}, {.axis = 0}), (Ids{1, 2, 3, 4, 5, 6}))
      << "outer axis";
  EXPECT_EQ(this->moved(Op::Concatenate, {2, 6}, {{2, 2}, {2, 1}, {2, 0}, {2, 3}}, {.axis = 1}),
            (Ids{1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12}))
      << "inner axis, with an empty operand";
  EXPECT_EQ(this->moved(Op::Concatenate, {1, 2, 2}, {{1, 1, 2}, {1, 1, 2}}, {.axis = 1}), (Ids{1, 2, 3, 4}))
      << "middle axis";
  EXPECT_EQ(this->moved(Op::Concatenate, {0, 3}, {{0, 1}, {0, 2}}, {.axis = 1}), Ids{}) << "zero-size";
}

// ---- large cases: split across cores, tiled transposes

std::vector<float> counting(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

std::vector<float> run_f32(Op op, const Spec& out, const std::vector<Spec>& specs, const std::vector<const void*>& in,
                           Attrs attrs) {
  std::vector<NodePtr> operands;
  for (const Spec& s : specs) operands.push_back(parameter(static_cast<int64_t>(operands.size()), s).node());
  NodePtr node = Node::make(op, out, std::move(operands), std::move(attrs));
  std::vector<float> result(static_cast<size_t>(out.size()), -1.0f);
  cpu::run_shape(*node, in, result.data());
  return result;
}

// out[i] = x[j] where the input index of each output index is given by `index`.
template <typename F>
void expect_gather(const std::vector<float>& out, const std::vector<float>& x, F index, const char* what) {
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
  const auto out = run_f32(Op::Transpose, f32({cols, rows}), {f32({rows, cols})}, {x.data()}, {.axes = {1, 0}});
  expect_gather(out, x, [&](int64_t i) { return (i % rows) * cols + i / rows; }, "transpose [300][517]");
}

TEST(ShapeOpsLarge, TransposeLastTwoAxes) {
  const int64_t b = 3, r = 70, c = 130;
  const auto x = counting(b * r * c);
  const auto out = run_f32(Op::Transpose, f32({b, c, r}), {f32({b, r, c})}, {x.data()}, {.axes = {0, 2, 1}});
  expect_gather(out, x, [&](int64_t i) {
    const int64_t k = i / (c * r), j = (i / r) % c, l = i % r;  // out[k][j][l] = x[k][l][j]
    return (k * r + l) * c + j;
  }, "transpose [3][70][130] {0, 2, 1}");
}

TEST(ShapeOpsLarge, Transpose3D) {
  const int64_t d0 = 40, d1 = 50, d2 = 60;
  const auto x = counting(d0 * d1 * d2);
  const auto out = run_f32(Op::Transpose, f32({d2, d0, d1}), {f32({d0, d1, d2})}, {x.data()}, {.axes = {2, 0, 1}});
  expect_gather(out, x, [&](int64_t i) {
    const int64_t k = i / (d0 * d1), a = (i / d1) % d0, b = i % d1;  // out[k][a][b] = x[a][b][k]
    return (a * d1 + b) * d2 + k;
  }, "transpose [40][50][60] {2, 0, 1}");
  const auto back = run_f32(Op::Transpose, f32({d1, d2, d0}), {f32({d0, d1, d2})}, {x.data()}, {.axes = {1, 2, 0}});
  expect_gather(back, x, [&](int64_t i) {
    const int64_t b = i / (d2 * d0), k = (i / d0) % d2, a = i % d0;  // out[b][k][a] = x[a][b][k]
    return (a * d1 + b) * d2 + k;
  }, "transpose [40][50][60] {1, 2, 0}");
}

TEST(ShapeOpsLarge, BroadcastSliceConcatenateReshape) {
  const auto row = counting(1000);
  expect_gather(run_f32(Op::Broadcast, f32({300, 1000}), {f32({1000})}, {row.data()}, {.axes = {1}}), row,
                [](int64_t i) { return i % 1000; }, "rows repeated");
  expect_gather(run_f32(Op::Broadcast, f32({1000, 300}), {f32({1000})}, {row.data()}, {.axes = {0}}), row,
                [](int64_t i) { return i / 300; }, "columns repeated");
  const float v = 7.0f;
  expect_gather(run_f32(Op::Broadcast, f32({500, 400}), {f32({})}, {&v}, {}), {v}, [](int64_t) { return 0; },
                "scalar fill");

  const auto x = counting(400 * 500);
  expect_gather(run_f32(Op::Slice, f32({150, 240}), {f32({400, 500})}, {x.data()},
                        {.starts = {10, 3}, .lengths = {300, 480}, .strides = {2, 2}}),
                x, [](int64_t i) { return (10 + 2 * (i / 240)) * 500 + 3 + 2 * (i % 240); }, "strided slice");
  expect_gather(run_f32(Op::Slice, f32({300, 500}), {f32({400, 500})}, {x.data()},
                        {.starts = {50, 0}, .lengths = {300, 500}, .strides = {1, 1}}),
                x, [](int64_t i) { return 50 * 500 + i; }, "slice along axis 0");
  expect_gather(run_f32(Op::Reshape, f32({500, 400}), {f32({400, 500})}, {x.data()}, {}), x,
                [](int64_t i) { return i; }, "reshape");
  expect_gather(run_f32(Op::Concatenate, f32({400, 1000}), {f32({400, 500}), f32({400, 500})}, {x.data(), x.data()},
                        {.axis = 1}),
                x, [](int64_t i) { return (i / 1000) * 500 + i % 500; }, "concatenate along the inner axis");
}

TEST(ShapeOpsLarge, PadAndReverse) {
  const auto x = counting(300 * 400);
  const float value = -5.0f;
  const auto out = run_f32(Op::Pad, f32({303, 401}), {f32({300, 400}), f32({})}, {x.data(), &value},
                           {.padding = {{2, 1, 0}, {-1, 2, 0}}});
  int64_t wrong = 0;
  for (int64_t i = 0; i < 303; ++i) {
    for (int64_t j = 0; j < 401; ++j) {
      const int64_t r = i - 2, c = j + 1;
      const float want = r >= 0 && r < 300 && c < 400 ? x[static_cast<size_t>(r * 400 + c)] : value;
      wrong += out[static_cast<size_t>(i * 401 + j)] != want;
    }
  }
  EXPECT_EQ(wrong, 0) << "pad [300][400] low (2, -1), high (1, 2)";
  expect_gather(run_f32(Op::Reverse, f32({300, 400}), {f32({300, 400})}, {x.data()}, {.axes = {1}}), x,
                [](int64_t i) { return (i / 400) * 400 + 399 - i % 400; }, "reverse the inner axis");
}

TEST(ShapeOps, RejectsOtherOps) {
  NodePtr node = Node::make(Op::Negate, f32({2}), {parameter(0, f32({2})).node()});
  float x[2] = {1, 2}, y[2];
  const void* in[1] = {x};
  EXPECT_THROW(cpu::run_shape(*node, in, y), DeviceError);
}

}  // namespace
}  // namespace sluice
