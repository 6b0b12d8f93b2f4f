// Every platform of this machine against the host, on programs the op
// cases are too small to reach: loops (scan, fori_loop, while_loop, nested,
// and a gradient through a scan), long scans (a block per line), sorts of
// thousands of elements with ties, NaNs and signed zeros (stable: argsort
// exactly the host's; long lines sorted by radix bit for bit the host's), scatters with many duplicate
// indices (integers bitwise), windows of rank 3, long lines of windows, and the gradient of a max pool,
// convolutions with every option and a conv layer's gradients, every linear algebra op (eigenvectors up to
// sign). On a machine with only the host it compares the host with itself, which checks the harness; on one
// with a GPU it is the GPU's check (scripts/gpu-check).

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <sluice/sluice.h>

namespace sluice {
namespace {

// Deterministic values in [-1, 1), as a linear congruential generator gives.
std::vector<double> values(int64_t n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(s >> 11) / 4503599627370496.0 - 1.0;  // 2^52
  }
  return v;
}

template <typename T>
Tensor filled(const Shape& shape, uint64_t seed, double scale = 1.0) {
  std::vector<T> v;
  for (double x : values(shape.size(), seed)) v.push_back(static_cast<T>(x * scale));
  return tensor(v, shape);
}

// got (from the device) against want (the host's): integers and pred
// exactly, floats within rtol of the larger magnitude (atol at zero), NaN
// where NaN.
void expect_agree(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.spec(), want.spec()) << what;
  auto floats = [&]<typename T>() {
    const std::vector<T> g = got.to_vector<T>(), w = want.to_vector<T>();
    int64_t bad = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const double a = g[i], b = w[i];
      const bool ok = (std::isnan(a) && std::isnan(b)) || a == b ||
                      std::abs(a - b) <= rtol * std::max({1.0, std::abs(a), std::abs(b)});
      if (!ok && bad++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << a << ", the host's " << b;
    }
    EXPECT_EQ(bad, 0) << what << ": elements differing from the host's";
  };
  switch (want.dtype()) {
    case DType::F32: return floats.template operator()<float>();
    case DType::F64: return floats.template operator()<double>();
    case DType::C64: {
      const std::vector<std::complex<float>> g = got.to_vector<std::complex<float>>(),
                                             w = want.to_vector<std::complex<float>>();
      int64_t bad = 0;
      for (size_t i = 0; i < g.size(); ++i)
        if (std::abs(g[i] - w[i]) > rtol * std::max(1.0f, std::abs(w[i])) && bad++ < 5)
          ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", the host's " << w[i];
      EXPECT_EQ(bad, 0) << what << ": elements differing from the host's";
      return;
    }
    default: {
      std::vector<uint8_t> g(static_cast<size_t>(got.spec().bytes())), w(g.size());
      got.copy_to_host(g.data());
      want.copy_to_host(w.data());
      EXPECT_TRUE(g == w) << what << ": " << dtype_name(want.dtype()) << " values differ from the host's";
    }
  }
}

class OnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  Device device() const { return client(GetParam()).default_device(); }

  // f on args, on this device and on the host, every output compared.
  void expect_as_host(const Function& f, const std::vector<Tensor>& args, double rtol, const std::string& what) {
    const std::vector<Tensor> want = compile(f, host()).run(args);
    std::vector<Tensor> moved;
    for (const Tensor& a : args) moved.push_back(a.to(device()));
    const std::vector<Tensor> got = compile(f, device()).run(moved);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].device(), device()) << what << ": output " << i;
      expect_agree(got[i], want[i], rtol, fmt::format("{}, output {}", what, i));
    }
  }
};

TEST_P(OnDevice, ScansRunAsOnTheHost) {
  // A running state over 1,024 rows, with every partial state as ys, both ways.
  for (bool reverse : {false, true}) {
    Function f = trace({f32({64}), f32({1024, 64}), f32({64, 64})}, [&](Expr c, Expr xs, Expr w) {
      return scan([&](Expr carry, Expr x) {
                    Expr next = tanh(dot(carry, w) * 0.5f + x);
                    return tuple(next, sum(next));
                  },
                  c, xs, {.reverse = reverse});
    });
    expect_as_host(f, {filled<float>(Shape{64}, 1), filled<float>(Shape{1024, 64}, 2), filled<float>(Shape{64, 64}, 3, 0.2)},
                   1e-4, reverse ? "reverse scan" : "scan");
  }
}

TEST_P(OnDevice, ForiAndWhileLoopsRunAsOnTheHost) {
  Function fori = trace({f64({8, 8}), f64({8})}, [](Expr w, Expr v) {
    return fori_loop(0, 100, [&](Expr i, Expr x) { return x + 0.01 * tanh(dot(w, x)) * as_type(i, DType::F64); }, v);
  });
  expect_as_host(fori, {filled<double>(Shape{8, 8}, 4), filled<double>(Shape{8}, 5)}, 1e-12, "fori_loop");
  // A count the host cannot know: halve until below a bound, counting.
  Function halving = trace({f32({16}), s32({})}, [](Expr x, Expr n) {
    Tuple r = while_loop([](const Tuple& c) { return reduce_max(abs(c[0])) > 1e-3f; },
                         [](const Tuple& c) { return tuple(c[0] * 0.5f, c[1] + 1); }, tuple(x, n));
    return r;
  });
  expect_as_host(halving, {filled<float>(Shape{16}, 6, 100.0), tensor<int32_t>({0}, Shape{})}, 0, "while_loop");
  // A scan inside a fori_loop.
  Function nested = trace({f32({32, 4})}, [](Expr xs) {
    return fori_loop(0, 5, [&](Expr, Expr acc) {
      Tuple inner = scan([](Expr c, Expr x) { return tuple(c + x, c * x); }, acc, xs);
      return inner[0] * 0.5f;
    }, reduce_max(xs, {.axes = {0}}));
  });
  expect_as_host(nested, {filled<float>(Shape{32, 4}, 7)}, 1e-5, "scan in fori_loop");
  // Loops long enough to run as graphs on a GPU, one inside the other: a
  // while_loop and a reverse scan in each of 20 steps.
  Function deep = trace({f32({24, 4}), f32({4})}, [](Expr xs, Expr v) {
    return fori_loop(
        0, 20,
        [&](Expr i, Expr acc) {
          Tuple halved = while_loop([](const Tuple& c) { return reduce_max(abs(c[0])) > 0.5f; },
                                    [](const Tuple& c) { return tuple(c[0] * 0.5f, c[1] + 1); },
                                    tuple(acc * 3.0f + as_type(i, DType::F32), constant(0.0, DType::S32)));
          Tuple inner = scan([](Expr c, Expr x) { return tuple(c * 0.9f + x, sum(c)); }, halved[0], xs,
                             {.reverse = true});
          return inner[0] * 0.1f + as_type(halved[1], DType::F32);
        },
        v);
  });
  expect_as_host(deep, {filled<float>(Shape{24, 4}, 23), filled<float>(Shape{4}, 24)}, 1e-5,
                 "while_loop and scan in fori_loop");
}

TEST_P(OnDevice, GradientsThroughAScanRunAsOnTheHost) {
  Function loss = trace({f64({6, 6}), f64({40, 6}), f64({6})}, [](Expr w, Expr xs, Expr h0) {
    Tuple r = scan([&](Expr h, Expr x) {
      Expr next = tanh(dot(w, h) + x);
      return tuple(next, sum(next * next));
    }, h0, xs);
    return sum(r[1]);
  });
  expect_as_host(value_and_grad(loss, {0, 1}),
                 {filled<double>(Shape{6, 6}, 8, 0.5), filled<double>(Shape{40, 6}, 9), filled<double>(Shape{6}, 22)},
                 1e-10, "value_and_grad through scan");
}

TEST_P(OnDevice, LongCumulativeOpsRunAsOnTheHost) {
  Function f = trace({f64({3, 100000}), f32({1000, 300}), s32({2, 5000})}, [](Expr a, Expr b, Expr c) {
    return tuple(cumulative_sum(a, {.axis = 1}), cumulative_max(a, {.axis = 1, .reverse = true}),
                 cumulative_sum(b, {.axis = 0}), cumulative_product(b * 0.01f + 1.0f, {.axis = 1}),
                 cumulative_sum(c, {.axis = 1}), cumulative_min(c, {.axis = 1}));
  });
  Tensor ints = tensor(std::vector<int32_t>(10000, 0), Shape{2, 5000});
  std::vector<int32_t> iv;
  for (double x : values(10000, 10)) iv.push_back(static_cast<int32_t>(x * 1e9));
  expect_as_host(f, {filled<double>(Shape{3, 100000}, 11), filled<float>(Shape{1000, 300}, 12), tensor(iv, Shape{2, 5000})},
                 1e-4, "cumulative");
}

TEST_P(OnDevice, SortsAreStableAsOnTheHost) {
  // Few distinct values, so ties are everywhere; NaNs, infinities, signed zeros.
  std::vector<float> v;
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, 0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (double x : values(3 * 5000, 13)) {
    const int k = static_cast<int>((x + 1) * 20);
    v.push_back(k < 5 ? specials[k] : static_cast<float>(k % 9) - 4);
  }
  const Tensor x = tensor(v, Shape{3, 5000});
  for (SortDirection direction : {SortDirection::Ascending, SortDirection::Descending}) {
    Function f = trace({f32({3, 5000})}, [&](Expr a) {
      Expr order = argsort(a, {.axis = 1, .direction = direction});
      return tuple(order, argsort(a, {.axis = 0, .direction = direction, .index_dtype = DType::S32}));
    });
    expect_as_host(f, {x}, 0, "argsort");
    // The values, against the host's values picked by the host's order.
    Function by_order = trace({f32({3, 5000})}, [&](Expr a) {
      return take_along_axis(a, argsort(a, {.axis = 1, .direction = direction}), 1);
    });
    Function sorted = trace({f32({3, 5000})}, [&](Expr a) { return sort(a, {.axis = 1, .direction = direction}); });
    expect_agree(compile(sorted, device()).run({x.to(device())})[0], compile(by_order, host()).run({x})[0], 0, "sort");
  }
  Function top = trace({f64({4, 3000})}, [](Expr a) {
    TopK t = top_k(a, 10);
    return tuple(t.values, t.indices);
  });
  expect_as_host(top, {filled<double>(Shape{4, 3000}, 14)}, 0, "top_k");
}

// Long lines, which a GPU sorts by radix (one line longer than a tile, or
// lines of 65,536 and more): the values bit for bit the host's, so signed
// zeros in the order they came and NaNs of either sign, with their
// payloads, after the numbers (before, descending) in the order they came.
TEST_P(OnDevice, LongSortsGiveTheHostsBits) {
  auto bits_agree = [](const Tensor& got, const Tensor& want, const std::string& what) {
    ASSERT_EQ(got.spec(), want.spec()) << what;
    std::vector<uint8_t> g(static_cast<size_t>(got.spec().bytes())), w(g.size());
    got.copy_to_host(g.data());
    want.copy_to_host(w.data());
    const size_t width = static_cast<size_t>(dtype_size(want.dtype()));
    int64_t bad = 0;
    for (size_t i = 0; i < g.size(); i += width)
      if (std::memcmp(&g[i], &w[i], width) != 0 && bad++ < 5)
        ADD_FAILURE() << what << ": element " << i / width;
    EXPECT_EQ(bad, 0) << what << ": elements whose bits differ from the host's";
  };
  // Floats of few distinct values, with signed zeros, infinities and NaNs of
  // both signs and several payloads; in some lines no NaN at all.
  auto floats = [&]<typename T, typename Bits>(const Shape& shape, uint64_t seed, bool nans) {
    std::vector<T> v;
    for (double x : values(shape.size(), seed)) {
      const int k = static_cast<int>((x + 1) * 40);
      T e = static_cast<T>(k % 11) - 5;
      if (k == 0) e = T(-0.0);
      if (k == 1) e = T(0.0);
      if (k == 2) e = std::numeric_limits<T>::infinity();
      if (k == 3) e = -std::numeric_limits<T>::infinity();
      if (nans && k >= 4 && k < 8) {
        const T nan = std::numeric_limits<T>::quiet_NaN();
        Bits b = 0;
        std::memcpy(&b, &nan, sizeof b);
        b |= static_cast<Bits>(k);                          // a payload
        if (k % 2) b |= Bits{1} << (sizeof(Bits) * 8 - 1);  // and a sign
        std::memcpy(&e, &b, sizeof b);
      }
      v.push_back(e);
    }
    return tensor(v, shape);
  };
  std::vector<std::pair<std::string, Tensor>> cases = {
      {"f32, one line", floats.template operator()<float, uint32_t>(Shape{300000}, 40, true)},
      {"f32, one line, no NaN", floats.template operator()<float, uint32_t>(Shape{300000}, 41, false)},
      {"f32, 3 lines", floats.template operator()<float, uint32_t>(Shape{3, 70000}, 42, true)},
      {"f64, one line of 5,000", floats.template operator()<double, uint64_t>(Shape{5000}, 43, true)},
  };
  std::vector<int32_t> ints;
  std::vector<uint64_t> unsigned_ints;
  for (double x : values(100000, 44)) {
    ints.push_back(static_cast<int32_t>(x * 3e9 / 2));
    unsigned_ints.push_back(static_cast<uint64_t>((x + 1) * 9e18));
  }
  cases.emplace_back("s32, one line", tensor(ints, Shape{100000}));
  cases.emplace_back("u64, 2 lines", tensor(unsigned_ints, Shape{2, 50000}));
  for (const auto& [name, x] : cases) {
    for (SortDirection direction : {SortDirection::Ascending, SortDirection::Descending}) {
      Function f = trace({x.spec()}, [&](Expr a) {
        return sort(a, {.axis = x.spec().shape.rank() - 1, .direction = direction});
      });
      const std::string what =
          fmt::format("{}, {}", name, direction == SortDirection::Ascending ? "ascending" : "descending");
      bits_agree(compile(f, device()).run({x.to(device())})[0], compile(f, host()).run({x})[0], what);
    }
  }
}

TEST_P(OnDevice, ScattersWithDuplicateIndicesRunAsOnTheHost) {
  std::vector<int64_t> rows;
  for (double x : values(20000, 15)) rows.push_back(static_cast<int64_t>((x + 1) * 60) - 10);  // clamped at both ends
  const Tensor indices = tensor(rows, Shape{20000, 1});
  Function f = trace({s32({100, 8}), s64({20000, 1}), s32({20000, 8}), f64({100, 8}), f64({20000, 8})},
                     [](Expr xi, Expr idx, Expr ui, Expr xf, Expr uf) {
                       return tuple(indexed_add(xi, idx, ui), indexed_put(xi, idx, ui), indexed_add(xf, idx, uf),
                                    gather(xf, idx), take(xf, as_type(idx, DType::U16), 1));
                     });
  std::vector<int32_t> ints;
  for (double x : values(20000 * 8, 16)) ints.push_back(static_cast<int32_t>(x * 2e9));
  expect_as_host(f, {filled<int32_t>(Shape{100, 8}, 17, 1000), indices, tensor(ints, Shape{20000, 8}),
                     filled<double>(Shape{100, 8}, 18), filled<double>(Shape{20000, 8}, 19)},
                 1e-12, "scatter");
}

TEST_P(OnDevice, WindowsAndMaxPoolGradientsRunAsOnTheHost) {
  const WindowOptions o{.strides = {2, 1, 3}, .padding = {{1, 1}, {0, 2}, {2, 0}}};
  Function f = trace({f32({9, 17, 33})}, [&](Expr x) {
    return tuple(window_sum(x, {3, 2, 4}, o), window_max(x, {3, 2, 4}, o), window_min(x, {2, 2, 2}),
                 window_product(x * 0.1f + 1.0f, {1, 3, 1}));
  });
  expect_as_host(f, {filled<float>(Shape{9, 17, 33}, 20)}, 1e-5, "windows");
  // The gradient of a max pool is window_scatter_max.
  Function pool = trace({f32({2, 3, 32, 32})}, [](Expr x) {
    return sum(window_max(x, {1, 1, 3, 3}, {.strides = {1, 1, 2, 2}, .padding = {{0, 0}, {0, 0}, {1, 1}, {1, 1}}}) *
               iota(Spec{DType::F32, Shape{2, 3, 16, 16}}, std::nullopt));
  });
  expect_as_host(value_and_grad(pool), {filled<float>(Shape{2, 3, 32, 32}, 21)}, 1e-5, "max pool gradient");
}

// Lines of a block's worth of overlapping windows or more take tiles in
// shared memory on a GPU (launch_geometry.h's window_tile): padding at both
// ends, strides, outer window rows (some in the padding), windows longer
// than the unrolled ones, a window whose tile shrinks to fit, NaNs, an
// integer dtype.
TEST_P(OnDevice, LongLinesOfWindowsRunAsOnTheHost) {
  std::vector<float> xv;
  for (double v : values(3 * 5000, 31)) xv.push_back(static_cast<float>(v));
  for (size_t at : {17u, 4000u, 9001u}) xv[at] = std::numeric_limits<float>::quiet_NaN();
  std::vector<int32_t> iv;
  for (double v : values(2 * 3000, 32)) iv.push_back(static_cast<int32_t>(v * 1e6));
  Function f = trace({f32({3, 5000}), f64({4, 3000}), s32({2, 3000})}, [](Expr x, Expr d, Expr i) {
    return tuple(window_sum(x, {2, 8}, {.strides = {1, 1}, .padding = {{1, 0}, {3, 4}}}),
                 window_max(x, {1, 5}, {.strides = {1, 2}, .padding = {{0, 0}, {2, 2}}}),
                 window_min(x, {3, 40}, {.strides = {2, 1}}), window_product(x * 0.01f + 1.0f, {1, 3}),
                 window_sum(d, {1, 100}, {.strides = {1, 3}, .padding = {{0, 0}, {50, 50}}}),
                 window_max(d, {2, 1500}), window_sum(i, {2, 7}, {.padding = {{1, 1}, {0, 6}}}));
  });
  expect_as_host(f,
                 {tensor(xv, Shape{3, 5000}), filled<double>(Shape{4, 3000}, 33), tensor(iv, Shape{2, 3000})},
                 1e-6, "long windows");
}

TEST_P(OnDevice, ConvolutionsWithEveryOptionRunAsOnTheHost) {
  Function f = trace({f32({4, 6, 13, 11}), f32({6, 3, 3, 2}), f64({2, 4, 9, 8, 7}), f64({4, 4, 2, 3, 2}), c64({3, 2, 10}),
                      c64({6, 2, 3})},
                     [](Expr x, Expr k, Expr x3, Expr k3, Expr xc, Expr kc) {
                       return tuple(
                           // strides, explicit padding (a negative side trims), both dilations, feature groups
                           conv(x, k, {.strides = {2, 1}, .padding = ConvPadding::Explicit,
                                       .padding_config = {{2, -1, 0}, {1, 3, 0}}, .input_dilation = {2, 1},
                                       .kernel_dilation = {1, 2}, .feature_group_size = 2}),
                           // three spatial axes, same padding
                           conv(x3, k3, {.padding = ConvPadding::Same}),
                           // batch groups, complex
                           conv(xc, kc, {.strides = {3}, .batch_group_size = 3}));
                     });
  std::vector<std::complex<float>> xc, kc;
  for (double v : values(60, 23)) xc.emplace_back(static_cast<float>(v), static_cast<float>(1 - v));
  for (double v : values(36, 24)) kc.emplace_back(static_cast<float>(-v), static_cast<float>(v * v));
  expect_as_host(f, {filled<float>(Shape{4, 6, 13, 11}, 25), filled<float>(Shape{6, 3, 3, 2}, 26),
                     filled<double>(Shape{2, 4, 9, 8, 7}, 27), filled<double>(Shape{4, 4, 2, 3, 2}, 28),
                     tensor(xc, Shape{3, 2, 10}), tensor(kc, Shape{6, 2, 3})},
                 1e-5, "conv");
  // A conv layer's gradients: both operands, through grouped convs.
  Function loss = trace({f32({2, 4, 12, 12}), f32({8, 2, 3, 3})}, [](Expr x, Expr k) {
    return sum(tanh(conv(x, k, {.strides = {2, 2}, .padding = ConvPadding::Same, .feature_group_size = 2})));
  });
  expect_as_host(value_and_grad(loss, {0, 1}), {filled<float>(Shape{2, 4, 12, 12}, 29), filled<float>(Shape{8, 2, 3, 3}, 30)},
                 1e-4, "conv gradient");
}

// Well-conditioned matrices: random ones plus n on the diagonal; Hermitian
// positive definite ones as a aᵀ + n.
Tensor conditioned(const Shape& shape, uint64_t seed, bool symmetric) {
  const int64_t n = shape.dim(shape.rank() - 1), count = shape.size() / (n * n);
  const std::vector<double> v = values(shape.size(), seed);
  std::vector<double> m(v.size());
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = v[static_cast<size_t>((b * n + i) * n + j)];
        if (symmetric) {
          x = 0;
          for (int64_t k = 0; k < n; ++k)
            x += v[static_cast<size_t>((b * n + i) * n + k)] * v[static_cast<size_t>((b * n + j) * n + k)];
        }
        m[static_cast<size_t>((b * n + i) * n + j)] = x + (i == j ? static_cast<double>(n) : 0.0);
      }
  return tensor(m, shape);
}

TEST_P(OnDevice, LinearAlgebraRunsAsOnTheHost) {
  const Tensor spd_values = conditioned(Shape{3, 6, 6}, 31, true), square = conditioned(Shape{3, 6, 6}, 32, false);
  const Tensor matrix_rhs = filled<double>(Shape{3, 6, 4}, 33), vector_rhs = filled<double>(Shape{3, 6}, 34);
  Function f = trace({f64({3, 6, 6}), f64({3, 6, 6}), f64({3, 6, 4}), f64({3, 6})},
                     [](Expr spd, Expr a, Expr b, Expr bv) {
                       Tuple out = tuple(cholesky(spd), solve(a, b), solve(a, bv));
                       for (bool left : {true, false})
                         for (bool lower : {true, false})
                           for (TriangularTransform t : {TriangularTransform::None, TriangularTransform::Transpose,
                                                         TriangularTransform::ConjugateTranspose}) {
                             const TriangularSolveOptions o{.left_side = left, .lower = lower, .transform_a = t};
                             out.push_back(triangular_solve(a, left ? b : transpose(b, {0, 2, 1}), o));
                             out.push_back(triangular_solve(a, bv, o));
                           }
                       Lu l = lu(a);
                       out.push_back(l.p);
                       out.push_back(l.l);
                       out.push_back(l.u);
                       return out;
                     });
  expect_as_host(f, {spd_values, square, matrix_rhs, vector_rhs}, 1e-10, "cholesky, solve, triangular_solve, lu");
  // qr of tall, wide and square matrices, both modes; eigh's values and
  // vectors (their signs fixed alike on every device).
  Function g = trace({f32({2, 7, 4}), f32({2, 3, 5}), f64({3, 6, 6})}, [](Expr tall, Expr wide, Expr s) {
    Tuple out;
    for (Expr a : {tall, wide})
      for (QrMode mode : {QrMode::Reduced, QrMode::Complete}) {
        Qr q = qr(a, {.mode = mode});
        out.push_back(q.q);
        out.push_back(q.r);
      }
    Eigh e = eigh(s);
    out.push_back(e.eigenvalues);
    out.push_back(e.eigenvectors);
    return out;
  });
  expect_as_host(g, {filled<float>(Shape{2, 7, 4}, 35), filled<float>(Shape{2, 3, 5}, 36), spd_values}, 1e-4, "qr, eigh");
  // Complex: cholesky and eigh of Hermitian matrices, a conjugate-transposed solve.
  std::vector<std::complex<float>> h;
  const std::vector<double> re = values(2 * 5 * 5, 37), im = values(2 * 5 * 5, 38);
  for (int64_t bi = 0; bi < 2; ++bi)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        std::complex<float> x(0, 0);
        for (int64_t k = 0; k < 5; ++k) {
          const auto at = [&](int64_t r, int64_t c) { return static_cast<size_t>((bi * 5 + r) * 5 + c); };
          x += std::complex<float>(static_cast<float>(re[at(i, k)]), static_cast<float>(im[at(i, k)])) *
               std::conj(std::complex<float>(static_cast<float>(re[at(j, k)]), static_cast<float>(im[at(j, k)])));
        }
        h.push_back(x + std::complex<float>(i == j ? 5.0f : 0.0f, 0));
      }
  Function c = trace({c64({2, 5, 5}), c64({2, 5, 3})}, [](Expr a, Expr rhs) {
    Eigh e = eigh(a);
    return tuple(cholesky(a), e.eigenvalues, e.eigenvectors,
                 triangular_solve(cholesky(a), rhs, {.transform_a = TriangularTransform::ConjugateTranspose}),
                 solve(a, rhs));
  });
  std::vector<std::complex<float>> rhs;
  for (double x : values(30, 39)) rhs.emplace_back(static_cast<float>(x), static_cast<float>(-x));
  expect_as_host(c, {tensor(h, Shape{2, 5, 5}), tensor(rhs, Shape{2, 5, 3})}, 1e-4, "complex linear algebra");
}

INSTANTIATE_TEST_SUITE_P(Platforms, OnDevice, ::testing::ValuesIn(platforms()), [](const auto& p) { return p.param; });

}  // namespace
}  // namespace sluice
