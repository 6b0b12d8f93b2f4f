// call: a Function made apart becomes part of the function being traced.

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

TEST(Call, SplicesTheGraphAsIfWrittenInPlace) {
  Function scale = trace({f32({3}), f32({})}, [](Expr x, Expr s) { return tuple(x * s, sum(x)); });
  Function outer = trace({f32({3})}, [&](Expr v) {
    Tuple r = call(scale, {v + 1, constant(2.0, DType::F32)});
    return r[0] + r[1];
  });
  Function inline_written = trace({f32({3})}, [](Expr v) {
    Expr x = v + 1;
    return x * constant(2.0, DType::F32) + sum(x);
  });
  EXPECT_EQ(outer, inline_written) << "the same graph, so the same compiled executable";
  std::vector<Tensor> out = compile(outer).run({tensor<float>({1, 2, 3})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{13, 15, 17}));
}

TEST(Call, ArgumentsMustMatchTheInputs) {
  Function f = trace({f32({3})}, [](Expr x) { return x * 2; });
  Expr wrong_type = testing::arg(f64({3})), wrong_shape = testing::arg(f32({4}));
  EXPECT_THROW_WITH(call(f, {wrong_type}), TypeError, "call", "argument 0", "f32[3]", "f64[3]");
  EXPECT_THROW_WITH(call(f, {wrong_shape}), ShapeError, "call", "argument 0", "f32[4]");
  EXPECT_THROW_WITH(call(f, {}), ShapeError, "call", "expected 1 arguments", "found 0");
}

}  // namespace
}  // namespace sluice
