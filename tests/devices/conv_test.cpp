// conv on the host at sizes the conformance suite does not reach (oneDNN's
// batch parts or one image's channel chunks spread across workers, im2col items in parallel, f16 through
// f32), against a direct loop over the definition; the primitive cache under
// concurrent runs; and every argument error, typed and naming the argument.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/devices/random_inputs.h"
#include "tests/devices/run_traced.h"

namespace sluice {
namespace {

using testing::run1;

// 2-D conv straight from the definition, in double: options with every list
// given and explicit padding.
std::vector<double> reference(const std::vector<float>& x, const Shape& xs, const std::vector<float>& k,
                              const Shape& ks, const ConvOptions& o, const Shape& ys) {
  const int64_t groups = o.feature_group_size * o.batch_group_size;
  const int64_t out_batch = ys[0], out_channels = ys[1], group_out = out_channels / groups, group_in = ks[1];
  std::vector<double> y(static_cast<size_t>(ys.size()), 0.0);
  for (int64_t b = 0; b < out_batch; ++b)
    for (int64_t oc = 0; oc < out_channels; ++oc) {
      const int64_t g = oc / group_out;
      const int64_t n = o.batch_group_size > 1 ? g * out_batch + b : b;
      const int64_t c0 = o.feature_group_size > 1 ? g * group_in : 0;
      for (int64_t qh = 0; qh < ys[2]; ++qh)
        for (int64_t qw = 0; qw < ys[3]; ++qw) {
          double acc = 0;
          for (int64_t c = 0; c < group_in; ++c)
            for (int64_t wh = 0; wh < ks[2]; ++wh)
              for (int64_t ww = 0; ww < ks[3]; ++ww) {
                // Position in the dilated, padded input.
                const int64_t ph = qh * o.strides[0] + wh * o.kernel_dilation[0] - o.padding_config[0].low;
                const int64_t pw = qw * o.strides[1] + ww * o.kernel_dilation[1] - o.padding_config[1].low;
                if (ph < 0 || pw < 0 || ph % o.input_dilation[0] != 0 || pw % o.input_dilation[1] != 0)
                  continue;
                const int64_t ih = ph / o.input_dilation[0], iw = pw / o.input_dilation[1];
                if (ih >= xs[2] || iw >= xs[3]) continue;
                acc += double(x[static_cast<size_t>(((n * xs[1] + c0 + c) * xs[2] + ih) * xs[3] + iw)]) *
                       double(k[static_cast<size_t>(((oc * ks[1] + c) * ks[2] + wh) * ks[3] + ww)]);
              }
          y[static_cast<size_t>(((b * out_channels + oc) * ys[2] + qh) * ys[3] + qw)] = acc;
        }
    }
  return y;
}

struct Large {
  std::string name;
  Shape input, kernel;
  ConvOptions options;
};

void PrintTo(const Large& c, std::ostream* os) { *os << c.name; }

ConvOptions explicit_options(std::vector<int64_t> strides, std::vector<PadDim> padding,
                             std::vector<int64_t> input_dilation, std::vector<int64_t> kernel_dilation,
                             int64_t feature_groups = 1, int64_t batch_groups = 1) {
  return {.strides = std::move(strides),
          .padding = ConvPadding::Explicit,
          .padding_config = std::move(padding),
          .input_dilation = std::move(input_dilation),
          .kernel_dilation = std::move(kernel_dilation),
          .feature_group_size = feature_groups,
          .batch_group_size = batch_groups};
}

PadDim pad(int64_t low, int64_t high) { return {.low = low, .high = high, .interior = 0}; }

std::vector<Large> large_cases() {
  return {
      // oneDNN, one batch part per worker.
      {"resnet_layer", Shape{8, 64, 28, 28}, Shape{64, 64, 3, 3},
       explicit_options({1, 1}, {pad(1, 1), pad(1, 1)}, {1, 1}, {1, 1})},
      // An odd batch: parts of two sizes; strides and kernel dilation.
      {"odd_batch_strided_dilated", Shape{5, 16, 21, 20}, Shape{32, 16, 3, 3},
       explicit_options({2, 1}, {pad(2, 1), pad(0, 3)}, {1, 1}, {2, 2})},
      // One image, fewer than the workers: its output channels cut into
      // chunks (37: chunks of two sizes).
      {"one_image_by_channels", Shape{1, 16, 40, 40}, Shape{37, 16, 3, 3},
       explicit_options({1, 1}, {pad(1, 1), pad(1, 1)}, {1, 1}, {1, 1})},
      {"depthwise", Shape{4, 32, 30, 30}, Shape{32, 1, 3, 3},
       explicit_options({1, 1}, {pad(1, 1), pad(1, 1)}, {1, 1}, {1, 1}, 32)},
      // im2col in f32: input dilation and batch groups are beyond oneDNN.
      {"input_dilation", Shape{6, 8, 20, 24}, Shape{16, 4, 3, 3},
       explicit_options({1, 2}, {pad(1, -1), pad(2, 2)}, {2, 2}, {1, 1}, 2)},
      {"batch_groups", Shape{8, 12, 18, 18}, Shape{16, 12, 3, 2},
       explicit_options({1, 1}, {pad(0, 0), pad(1, 0)}, {1, 1}, {1, 1}, 1, 4)},
  };
}

class ConvLarge : public ::testing::TestWithParam<Large> {};

TEST_P(ConvLarge, MatchesTheDefinitionInF32AndF64) {
  const Large& c = GetParam();
  const std::vector<float> x = test::uniform_values<float>(c.input.size(), -1, 1, 1),
                           k = test::uniform_values<float>(c.kernel.size(), -1, 1, 2);
  auto f = [&](Expr a, Expr b) { return conv(a, b, c.options); };
  const Tensor y32 = run1(f, {tensor(x, c.input), tensor(k, c.kernel)});
  const std::vector<double> want = reference(x, c.input, k, c.kernel, c.options, y32.shape());
  const std::vector<double> x64(x.begin(), x.end()), k64(k.begin(), k.end());
  const Tensor y64 = run1(f, {tensor(x64, c.input), tensor(k64, c.kernel)});
  const double depth = static_cast<double>(c.kernel.size() / c.kernel[0]);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(y32.data<float>()[i], want[i], 1e-6 * depth) << c.name << " f32 at " << i;
    ASSERT_NEAR(y64.data<double>()[i], want[i], 1e-13 * depth) << c.name << " f64 at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Host, ConvLarge, ::testing::ValuesIn(large_cases()),
                         [](const ::testing::TestParamInfo<Large>& p) { return p.param.name; });

TEST(Conv, F16IsComputedInF32AndRounded) {
  const Shape xs{4, 16, 12, 12}, ks{8, 16, 3, 3};
  std::vector<float> x = test::uniform_values<float>(xs.size(), -1, 1, 3),
                     k = test::uniform_values<float>(ks.size(), -1, 1, 4);
  const Tensor x16 = run1([](Expr a) { return as_type(a, DType::F16); }, {tensor(x, xs)});
  const Tensor k16 = run1([](Expr a) { return as_type(a, DType::F16); }, {tensor(k, ks)});
  auto wide = [](const Tensor& t) { return run1([](Expr a) { return as_type(a, DType::F32); }, {t}); };
  const Tensor xw = wide(x16), kw = wide(k16);
  const std::vector<float> xr(xw.data<float>().begin(), xw.data<float>().end());
  const std::vector<float> kr(kw.data<float>().begin(), kw.data<float>().end());
  const ConvOptions o = explicit_options({1, 1}, {pad(1, 1), pad(1, 1)}, {1, 1}, {1, 1});
  const Tensor y = wide(run1([&](Expr a, Expr b) { return conv(a, b, o); }, {x16, k16}));
  ASSERT_EQ(y.spec(), f32({4, 8, 12, 12}));
  const std::vector<double> want = reference(xr, xs, kr, ks, o, y.shape());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(y.data<float>()[i], want[i], 1e-3 * (1 + std::abs(want[i]))) << "at " << i;
}

// A compiled conv run again, and from several threads at once, gives the
// same answer: cached primitives are shared, scratch is per thread.
TEST(Conv, RepeatedAndConcurrentRunsAgree) {
  const Shape xs{6, 32, 16, 16}, ks{32, 32, 3, 3};
  const Tensor x = tensor(test::uniform_values<float>(xs.size(), -1, 1, 5), xs),
               k = tensor(test::uniform_values<float>(ks.size(), -1, 1, 6), ks);
  Executable exe = compile(
      trace({x.spec(), k.spec()}, [](Expr a, Expr b) { return conv(a, b, {.padding = ConvPadding::Same}); }));
  const Tensor first = exe.run({x, k})[0];
  const std::vector<float> want(first.data<float>().begin(), first.data<float>().end());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        const Tensor y = exe.run({x, k})[0];
        for (size_t i = 0; i < want.size(); ++i) mismatches[t] += y.data<float>()[i] != want[i];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < mismatches.size(); ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// ---- argument errors: typed, naming the argument.
template <typename E>
void expect_error(const Spec& input, const Spec& kernel, const ConvOptions& o, const std::string& arg) {
  try {
    trace({input, kernel}, [&](Expr a, Expr b) { return conv(a, b, o); });
    ADD_FAILURE() << "no error for input " << input.shape.str() << ", kernel " << kernel.shape.str()
                  << "; expected one naming " << arg;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find("conv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(arg), std::string::npos)
        << "expected it to name " << arg << ": " << e.what();
  }
}

TEST(ConvErrors, ShapesAndOptionsAreChecked) {
  const Spec x = f32({2, 4, 6, 6}), k = f32({6, 4, 3, 3});
  expect_error<ShapeError>(f32({4}), f32({4}), {}, "input");
  expect_error<ShapeError>(x, f32({6, 4, 3}), {}, "kernel");              // rank mismatch
  expect_error<ShapeError>(x, f32({6, 3, 3, 3}), {}, "kernel");           // channel mismatch
  expect_error<ShapeError>(x, f32({6, 4, 0, 3}), {}, "kernel");           // empty window
  expect_error<ShapeError>(x, f32({6, 4, 7, 3}), {}, "kernel");           // window beyond the input
  expect_error<ShapeError>(f32({2, 4, 0, 6}), k, {}, "kernel");           // an empty spatial axis
  expect_error<ShapeError>(f32({2, 4, 0, 6}), k, {.padding = ConvPadding::Same}, "kernel");  // padded or not
  expect_error<ShapeError>(x, k, {.kernel_dilation = {3, 1}}, "kernel");  // dilated window too
  expect_error<ShapeError>(x, k, {.strides = {0, 1}}, "strides");
  expect_error<ShapeError>(x, k, {.strides = {-1, 1}}, "strides");
  expect_error<ShapeError>(x, k, {.strides = {1}}, "strides");
  expect_error<ShapeError>(x, k, {.input_dilation = {1, 0}}, "input_dilation");
  expect_error<ShapeError>(x, k, {.kernel_dilation = {0, 1}}, "kernel_dilation");
  expect_error<ShapeError>(x, k, {.padding = ConvPadding::Explicit, .padding_config = {pad(1, 1)}},
                           "padding_config");
  expect_error<ShapeError>(
      x, k,
      {.padding = ConvPadding::Explicit, .padding_config = {pad(1, 1), {.low = 0, .high = 0, .interior = 1}}},
      "padding_config");
  expect_error<ShapeError>(x, k, {.padding = ConvPadding::Same, .padding_config = {pad(1, 1), pad(1, 1)}},
                           "padding_config");
  expect_error<ShapeError>(x, k,
                           {.padding = ConvPadding::Explicit, .padding_config = {pad(-4, 0), pad(0, 0)}},
                           "kernel");  // trimmed below the window
  expect_error<ShapeError>(x, k, {.feature_group_size = 0}, "feature_group_size");
  expect_error<ShapeError>(x, f32({6, 1, 3, 3}), {.feature_group_size = 3}, "feature_group_size");  // 4 % 3
  expect_error<ShapeError>(x, f32({5, 2, 3, 3}), {.feature_group_size = 2}, "feature_group_size");  // 5 % 2
  expect_error<ShapeError>(x, k, {.batch_group_size = 0}, "batch_group_size");
  expect_error<ShapeError>(f32({3, 4, 6, 6}), k, {.batch_group_size = 2}, "batch_group_size");  // 3 % 2
  expect_error<ShapeError>(x, f32({5, 4, 3, 3}), {.batch_group_size = 2}, "batch_group_size");  // 5 % 2
  expect_error<ShapeError>(f32({2, 4, 6, 6}), f32({6, 2, 3, 3}),
                           {.feature_group_size = 2, .batch_group_size = 2}, "batch_group_size");
}

TEST(ConvTypes, TheResultIsTheFloatingTypeOfThePromotion) {
  auto type_of = [](DType a, DType b) {
    return trace({Spec{a, Shape{1, 2, 3}}, Spec{b, Shape{1, 2, 2}}},
                 [](Expr x, Expr k) { return conv(x, k); })
        .outputs()[0]
        .dtype();
  };
  EXPECT_EQ(type_of(DType::S32, DType::S32), DType::F32);
  EXPECT_EQ(type_of(DType::U8, DType::S64), DType::F32);
  EXPECT_EQ(type_of(DType::Pred, DType::Pred), DType::F32);
  EXPECT_EQ(type_of(DType::F16, DType::S8), DType::F16);
  EXPECT_EQ(type_of(DType::F32, DType::F64), DType::F64);
  EXPECT_EQ(type_of(DType::BF16, DType::C64), DType::C64);
}

}  // namespace
}  // namespace sluice
