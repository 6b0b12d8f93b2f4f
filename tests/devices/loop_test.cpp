// scan, while_loop and fori_loop compiled and run on the host, through the
// public API, against the same computations written as plain C++ loops.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include <sluice/stream/stream.h>

namespace sluice {
namespace {

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(Scan, CarriesAndStacksOutputs) {
  // carry c: running sum of the rows; ys: 2c after each row, and each row's sum.
  Function f = trace({f32({5, 3}), f32({3})}, [](Expr xs, Expr init) {
    return scan([](Expr c, Expr x) { return tuple(c + x, (c + x) * 2, sum(x)); }, init, xs);
  });
  const std::vector<float> xs = ramp(15, -3, 0.5f), init{1, 2, 3};
  auto out = compile(f).run({tensor(xs, Shape{5, 3}), tensor(init, Shape{3})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].spec(), f32({5, 3}));
  EXPECT_EQ(out[2].spec(), f32({5}));
  std::vector<float> c = init, doubled, sums;
  for (size_t i = 0; i < 5; ++i) {
    float s = 0;
    for (size_t j = 0; j < 3; ++j) {
      c[j] += xs[i * 3 + j];
      doubled.push_back(c[j] * 2);
      s += xs[i * 3 + j];
    }
    sums.push_back(s);
  }
  EXPECT_EQ(out[0].to_vector<float>(), c);
  EXPECT_EQ(out[1].to_vector<float>(), doubled);
  EXPECT_EQ(out[2].to_vector<float>(), sums);
}

TEST(Scan, ReverseWalksFromTheEndAndStoresYsAtTheirIndex) {
  Function f = trace({f32({4})}, [](Expr xs) {
    return scan([](Expr c, Expr x) { return tuple(c * 10 + x, c); }, constant(0.0, DType::F32), xs,
                {.reverse = true});
  });
  auto out = compile(f).run({tensor<float>({1, 2, 3, 4})});
  // steps visit x3, x2, x1, x0; y_i is the carry before x_i is added.
  EXPECT_EQ(out[0].to_vector<float>()[0], 4321.0f);
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{432, 43, 4, 0}));
}

TEST(Scan, ZeroStepsReturnInitAndEmptyYs) {
  Function f = trace({f32({0, 3}), f32({3})}, [](Expr xs, Expr init) {
    return scan([](Expr c, Expr x) { return tuple(c + x, c * x); }, init, xs);
  });
  auto out = compile(f).run({tensor<float>({}, Shape{0, 3}), tensor<float>({1, 2, 3})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out[1].spec(), f32({0, 3}));

  Function g = trace({s32({})}, [](Expr init) { return scan([](Expr c) { return c + 1; }, init, 0); });
  EXPECT_EQ(compile(g).run({scalar<int32_t>(7)})[0].to_vector<int32_t>()[0], 7);
}

TEST(Scan, WithoutXsRunsLengthSteps) {
  Function f = trace({f32({8})},
                     [](Expr init) { return scan([](Expr c) { return tuple(c + 1, sum(c)); }, init, 10); });
  auto out = compile(f).run({tensor(ramp(8, 0, 1), Shape{8})});
  std::vector<float> c = ramp(8, 0, 1), sums;
  for (int i = 0; i < 10; ++i) {
    float s = 0;
    for (float& v : c) s += v++;
    sums.push_back(s);
  }
  EXPECT_EQ(out[0].to_vector<float>(), c);
  EXPECT_EQ(out[1].to_vector<float>(), sums);
}

TEST(Scan, TupleCarryAndTupleXs) {
  // Fibonacci in a tuple carry, counting steps in a second dtype, with two xs.
  Function f = trace({s64({6}), f32({6, 2})}, [](Expr ks, Expr ws) {
    return scan(
        [](const Tuple& c, const Tuple& x) {
          return Tuple{c[1], c[0] + c[1] + x[0], c[2] + sum(x[1]), c[0]};
        },
        Tuple{constant(std::vector<int64_t>{0}, Shape()), constant(std::vector<int64_t>{1}, Shape()),
              constant(0.0, DType::F32)},
        Tuple{ks, ws});
  });
  const std::vector<int64_t> ks{0, 1, 0, 2, 0, 3};
  const std::vector<float> ws = ramp(12, 0, 0.25f);
  auto out = compile(f).run({tensor(ks, Shape{6}), tensor(ws, Shape{6, 2})});
  ASSERT_EQ(out.size(), 4u);
  int64_t a = 0, b = 1;
  float total = 0;
  std::vector<int64_t> firsts;
  for (size_t i = 0; i < 6; ++i) {
    firsts.push_back(a);
    const int64_t next = a + b + ks[i];
    a = b;
    b = next;
    total += ws[2 * i] + ws[2 * i + 1];
  }
  EXPECT_EQ(out[0].to_vector<int64_t>()[0], a);
  EXPECT_EQ(out[1].to_vector<int64_t>()[0], b);
  EXPECT_FLOAT_EQ(out[2].to_vector<float>()[0], total);
  EXPECT_EQ(out[3].to_vector<int64_t>(), firsts);
}

TEST(Scan, BodyCapturesOuterValues) {
  // c' = c * w + b * x, with w and b parameters of the enclosing function.
  Function f = trace({f32({3}), f32({}), f32({4, 3})}, [](Expr w, Expr b, Expr xs) {
    Expr w2 = w * 2;  // computed before the loop, captured
    return scan([&](Expr c, Expr x) { return c * w2 + b * x; }, constant(1.0, DType::F32) + w * 0, xs);
  });
  const std::vector<float> w{0.5f, -1, 0.25f}, xs = ramp(12, 1, 1);
  const float b = 0.5f;
  auto out = compile(f).run({tensor(w, Shape{3}), scalar(b), tensor(xs, Shape{4, 3})});
  std::vector<float> c{1, 1, 1};
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 3; ++j) c[j] = c[j] * (w[j] * 2) + b * xs[i * 3 + j];
  EXPECT_EQ(out[0].to_vector<float>(), c);
}

TEST(Scan, NestedLoopRunsInsideABody) {
  // Each step adds x to the carry x-many times through an inner fori_loop.
  Function f = trace({s64({5})}, [](Expr xs) {
    return scan(
        [](Expr c, Expr x) {
          Expr inner = fori_loop(
              0, 3, [&](Expr i, Expr acc) { return acc + x * i; }, c);
          return tuple(inner, inner);
        },
        constant(std::vector<int64_t>{0}, Shape()), xs);
  });
  const std::vector<int64_t> xs{1, 2, 3, 4, 5};
  auto out = compile(f).run({tensor(xs, Shape{5})});
  int64_t c = 0;
  std::vector<int64_t> ys;
  for (int64_t x : xs) {
    for (int64_t i = 0; i < 3; ++i) c += x * i;
    ys.push_back(c);
  }
  EXPECT_EQ(out[0].to_vector<int64_t>()[0], c);
  EXPECT_EQ(out[1].to_vector<int64_t>(), ys);
}

TEST(Scan, LargeCarryRunsOnThePoolAndCompilesOnce) {
  // Large enough that the run goes to the thread pool; traced twice, compiled once.
  auto make = [] {
    return trace({f32({64, 4096})}, [](Expr xs) {
      return scan([](Expr c, Expr x) { return tuple(c + x, c); },
                  broadcast(constant(0.0, DType::F32), {4096}), xs);
    });
  };
  Executable e = compile(make());
  EXPECT_TRUE(jit_cached(make())) << "an equal loop body must find the compiled executable";
  const std::vector<float> xs = ramp(64 * 4096, 0, 1.0f / 4096);
  for (int run = 0; run < 2; ++run) {
    auto out = e.run({tensor(xs, Shape{64, 4096})});
    std::vector<float> c(4096, 0), before_last;
    for (size_t i = 0; i < 64; ++i) {
      if (i == 63) before_last = c;
      for (size_t j = 0; j < 4096; ++j) c[j] += xs[i * 4096 + j];
    }
    EXPECT_EQ(out[0].to_vector<float>(), c) << "run " << run;
    std::vector<float> ys = out[1].to_vector<float>();
    EXPECT_EQ(std::vector<float>(ys.end() - 4096, ys.end()), before_last) << "run " << run;
  }
}

TEST(WhileLoop, CountsUntilAConditionOnACapturedValue) {
  Function f = trace({s64({})}, [](Expr n) {
    return while_loop([&](Expr i) { return i * i < n; }, [](Expr i) { return i + 1; },
                      constant(std::vector<int64_t>{0}, Shape()));
  });
  Executable e = compile(f);
  for (int64_t n : {0, 1, 2, 50, 10000}) {
    int64_t i = 0;
    while (i * i < n) ++i;
    EXPECT_EQ(e.run({scalar(n)})[0].to_vector<int64_t>()[0], i) << "n = " << n;
  }
}

TEST(WhileLoop, NewtonIterationsWithATupleCarry) {
  // sqrt(a) by Newton's method, counting iterations, until converged or 50 steps.
  Function f = trace({f32({4})}, [](Expr a) {
    return while_loop([&](const Tuple& c) { return any(abs(c[0] * c[0] - a) > a * 1e-6) && c[1] < 50; },
                      [&](const Tuple& c) {
                        return Tuple{(c[0] + a / c[0]) * 0.5, c[1] + 1};
                      },
                      Tuple{a, constant(std::vector<int32_t>{0}, Shape())});
  });
  const std::vector<float> a{2, 9, 0.25f, 1e4f};
  auto out = compile(f).run({tensor(a, Shape{4})});
  std::vector<float> x = a;
  int32_t steps = 0;
  auto converged = [&] {
    for (size_t j = 0; j < 4; ++j)
      if (std::abs(x[j] * x[j] - a[j]) > a[j] * 1e-6f) return false;
    return true;
  };
  while (!converged() && steps < 50) {
    for (size_t j = 0; j < 4; ++j) x[j] = (x[j] + a[j] / x[j]) * 0.5f;
    ++steps;
  }
  EXPECT_EQ(out[1].to_vector<int32_t>()[0], steps);
  std::vector<float> got = out[0].to_vector<float>();
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_FLOAT_EQ(got[j], x[j]) << j;
    EXPECT_NEAR(got[j], std::sqrt(a[j]), 1e-5 * std::sqrt(a[j])) << j;
  }
}

TEST(WhileLoop, FalseAtOnceReturnsInit) {
  Function f = trace({f32({3})}, [](Expr x) {
    return while_loop([](Expr c) { return sum(c) < 0; }, [](Expr c) { return c * 2; }, x);
  });
  EXPECT_EQ(compile(f).run({tensor<float>({1, 2, 3})})[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(ForiLoop, PassesTheIndexAndCarries) {
  Function f = trace({f32({2})}, [](Expr x) {
    return fori_loop(
        3, 10,
        [](Expr i, const Tuple& c) {
          return Tuple{c[0] * 0.5 + as_type(i, DType::F32), c[1] + i * i};
        },
        Tuple{x, constant(std::vector<int64_t>{0}, Shape())});
  });
  auto out = compile(f).run({tensor<float>({1, -4})});
  std::vector<float> x{1, -4};
  int64_t squares = 0;
  for (int64_t i = 3; i < 10; ++i) {
    for (float& v : x) v = v * 0.5f + static_cast<float>(i);
    squares += i * i;
  }
  EXPECT_EQ(out[0].to_vector<float>(), x);
  EXPECT_EQ(out[1].to_vector<int64_t>()[0], squares);

  Function none = trace({f32({})}, [](Expr v) {
    return fori_loop(
        5, 2, [](Expr, Expr c) { return c + 1; }, v);
  });
  EXPECT_EQ(compile(none).run({scalar(1.5f)})[0].to_vector<float>()[0], 1.5f) << "upper <= lower: no step";
}

TEST(Scan, InsideAStreamCarriesTheAccumulatorAcrossChunks) {
  // Each chunk is 8 rows: the stream's accumulator goes through the scan's carry.
  auto s = stream(
      [](Expr chunk, Expr acc) {
        Tuple r = scan([](Expr c, Expr x) { return tuple(c + x, c + x); }, acc, chunk);
        return tuple(r[1], r[0]);  // {running sums, new acc}
      },
      {f32({8, 4})}, {tensor<float>({0, 0, 0, 0})});
  std::vector<float> c(4, 0);
  std::vector<std::vector<float>> want;
  for (int chunk = 0; chunk < 3; ++chunk) {
    const std::vector<float> xs = ramp(32, static_cast<float>(chunk), 0.5f);
    s.send(tensor(xs, Shape{8, 4}));
    std::vector<float> sums;
    for (size_t i = 0; i < 32; ++i) sums.push_back(c[i % 4] += xs[i]);
    want.push_back(sums);
  }
  for (int chunk = 0; chunk < 3; ++chunk)
    EXPECT_EQ(s.recv()[0].to_vector<float>(), want[static_cast<size_t>(chunk)]);
  EXPECT_EQ(s.done()[0].to_vector<float>(), c);
}

}  // namespace
}  // namespace sluice
