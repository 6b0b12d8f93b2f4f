#pragma once
// Uses sluice the way a program does, for the host_settings programs to
// check what it leaves of the process's settings: compiled computations on
// the host large enough to go to its thread pool, one of them a dot, so
// that OpenBLAS runs too.

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
  Function product = trace({f32({kM, kM}), f32({kM, kM})}, [](Expr a, Expr b) { return dot(a, b); });
  Tensor a = tensor(std::vector<float>(kM * kM, 0.5f), Shape{kM, kM});
  Tensor b = tensor(std::vector<float>(kM * kM, 2.0f), Shape{kM, kM});
  const std::vector<float> c = compile(product, host()).run({a, b})[0].to_vector<float>();
  EXPECT_FLOAT_EQ(c.front(), float{kM});
  EXPECT_FLOAT_EQ(c.back(), float{kM});
}

}  // namespace sluice::testing
