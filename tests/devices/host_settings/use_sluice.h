#pragma once
// Uses sluice the way a program does, for the host_settings programs to
// check what it leaves of the process's settings: compiled computations on
// the host large enough to go to its thread pool, one of them a dot in
// double precision, so that OpenBLAS loads and runs too (f32 products go to
// oneDNN), and a conv small enough to run through oneDNN on the calling thread.

#include <gtest/gtest.h>

#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::testing {

inline void use_sluice() {
  constexpr int64_t kN = 1 << 20;
  Function chain = trace({f32({kN})}, [](Expr x) { return sum(x * x + 1.0f); });
  Tensor x = tensor(std::vector<float>(kN, 0.5f), Shape{kN});
  EXPECT_FLOAT_EQ(compile(chain, host()).run({x})[0].to_vector<float>()[0], 1.25f * kN);

  constexpr int64_t kM = 256;
  Function product = trace({f64({kM, kM}), f64({kM, kM})}, [](Expr a, Expr b) { return dot(a, b); });
  Tensor a = tensor(std::vector<double>(kM * kM, 0.5), Shape{kM, kM});
  Tensor b = tensor(std::vector<double>(kM * kM, 2.0), Shape{kM, kM});
  const std::vector<double> c = compile(product, host()).run({a, b})[0].to_vector<double>();
  EXPECT_DOUBLE_EQ(c.front(), double{kM});
  EXPECT_DOUBLE_EQ(c.back(), double{kM});

  Function small_conv = trace({f32({1, 2, 8, 8}), f32({2, 2, 3, 3})},
                              [](Expr image, Expr kernel) { return conv(image, kernel); });
  const std::vector<float> y = compile(small_conv, host())
                                   .run({ones(f32({1, 2, 8, 8}), host()), ones(f32({2, 2, 3, 3}), host())})[0]
                                   .to_vector<float>();
  EXPECT_FLOAT_EQ(y.front(), 2 * 3 * 3);
}

}  // namespace sluice::testing
