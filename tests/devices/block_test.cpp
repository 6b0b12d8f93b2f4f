// Blocks on the host: the native softmax against its own fallback run as
// ops, on every shape and edge the fallback handles, inside a loop's body
// too; a block no backend knows runs its fallback.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <sluice/devices/backend.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/passes.h>
#include "run_traced.h"

namespace sluice {
namespace {

template <typename T>
Tensor random_rows(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 3);
  std::vector<T> v(static_cast<size_t>(Spec{dtype_of<T>(), shape}.size()));
  for (T& x : v) x = static_cast<T>(n(rng));
  return tensor(v, shape);
}

// softmax(x) compiled as it is (the block: native on the host) and with every
// block inlined (the fallback's ops), on the same input.
template <typename T>
void expect_native_matches_fallback(const Tensor& x) {
  const Function f = trace({x.spec()}, [](Expr v) { return softmax(v); });
  const std::vector<T> native = compile(f).run({x})[0].template to_vector<T>();
  const std::vector<T> ops = compile(passes::inline_blocks(f)).run({x})[0].template to_vector<T>();
  ASSERT_EQ(native.size(), ops.size());
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  for (size_t i = 0; i < native.size(); ++i) {
    if (std::isnan(ops[i])) {
      EXPECT_TRUE(std::isnan(native[i])) << x.spec().str() << " at " << i;
      continue;
    }
    EXPECT_NEAR(native[i], ops[i], tol * std::abs(ops[i]) + 1e-30) << x.spec().str() << " at " << i;
  }
}

TEST(Blocks, TheHostRunsSoftmaxNativelyAndListsIt) {
  const std::vector<std::string> natives = client("host").capabilities().native_blocks;
  EXPECT_NE(std::find(natives.begin(), natives.end(), "softmax"), natives.end());
}

TEST(Blocks, NativeSoftmaxMatchesItsFallback) {
  for (const Shape& s : {Shape{1024, 1024}, Shape{7}, Shape{3, 1}, Shape{2, 3, 37}, Shape{1000, 3},
                         Shape{700, 10}, Shape{2, 3000}, Shape{0, 5}, Shape{5, 0}}) {
    expect_native_matches_fallback<float>(random_rows<float>(s, 1));
    expect_native_matches_fallback<double>(random_rows<double>(s, 2));
  }
  const float inf = INFINITY, nan = NAN;
  expect_native_matches_fallback<float>(tensor(
      std::vector<float>{0, -inf, 1, -inf, -inf, -inf, 2, nan, 0, inf, 1, 0, 1e30f, -1e30f, 0}, Shape{5, 3}));
}

TEST(Blocks, SoftmaxInALoopsBodyRunsNativelyToo) {
  const Tensor xs = random_rows<float>(Shape{6, 33}, 3);
  const Function f = trace({xs.spec()}, [](Expr x) {
    return scan([](Expr c, Expr row) { return tuple(c + softmax(row), softmax(row)); },
                broadcast(constant(0.0, DType::F32), Shape{33}), x)[1];
  });
  const std::vector<float> looped = compile(f).run({xs})[0].to_vector<float>();
  const std::vector<float> direct =
      compile(trace({xs.spec()}, [](Expr x) { return softmax(x); })).run({xs})[0].to_vector<float>();
  EXPECT_EQ(looped, direct) << "the same kernel, row by row";
}

TEST(Blocks, ABlockNoBackendKnowsRunsItsFallback) {
  const Function fallback = trace({f32({4})}, [](Expr v) { return tuple(v * 2.0f + 1.0f, sum(v)); });
  const std::vector<Tensor> out = testing::run(
      [&](Expr v) { return block("nobody_has_this", fallback, {v}); }, {tensor<float>({1, 2, 3, 4})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{10}));
}

}  // namespace
}  // namespace sluice
