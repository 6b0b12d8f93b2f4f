// Pipeline stages on every device this machine has (the host always, a GPU
// where there is one): the same pipeline gives the same results on each,
// accumulators stay on their stage's device, messages move between devices
// where consecutive stages run on different ones, order holds, and a failing
// message is reported with its stage and number while the others go on.

#include <gtest/gtest.h>

#include <string>

#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

class PipelineOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  Device device() const { return client(GetParam()).default_device(); }
};

// n messages of f32[256], message i holding (i + k) % 5 at position k.
std::shared_ptr<Source> rows(int64_t n) {
  auto i = std::make_shared<int64_t>(0);
  return sources::generator({f32({256})}, [i, n]() -> std::optional<Tensors> {
    if (*i >= n) return std::nullopt;
    std::vector<float> v(256);
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>((*i + static_cast<int64_t>(k)) % 5);
    ++*i;
    return Tensors{tensor(v, Shape{256})};
  });
}

// A running mean (stateful, on `first`) then a scaled square (stateless, on
// `second`); results and the final accumulator collected.
struct Results {
  std::vector<float> firsts;  // element 0 of each result, in order
  Tensors acc;
};
Results run_pipeline(Device first, Device second, int64_t n) {
  Pipeline p;
  auto src = p.source("rows", rows(n));
  auto mean = p.stage(
      "mean", [](Expr x, Expr count, Expr total) {
        Expr c = count + 1.0f;
        Expr t = total + x;
        return tuple(t / c, c, t);
      },
      {.acc = {scalar(0.0f), zeros(f32({256}))}, .device = first});
  auto square = p.stage("square", [](Expr m) { return m * m * 0.5f; }, {.device = second});
  auto out = sinks::collector();
  p.connect(src, mean);
  p.connect(mean, square);
  p.connect(square, p.sink("collect", out));
  PipelineResult result = p.run();
  Results r;
  for (const Tensors& t : out->results()) r.firsts.push_back(t.at(0).to_vector<float>().at(0));
  r.acc = result.accumulators.at("mean");
  return r;
}

TEST_P(PipelineOnDevice, ResultsMatchTheHostsAndTheAccumulatorStaysOnItsDevice) {
  const Results on_host = run_pipeline(host(), host(), 300);
  const Results here = run_pipeline(device(), device(), 300);
  ASSERT_EQ(here.firsts.size(), 300u);
  for (size_t i = 0; i < here.firsts.size(); ++i)
    ASSERT_NEAR(here.firsts[i], on_host.firsts[i], 1e-5f * std::max(1.0f, on_host.firsts[i])) << "message " << i;
  ASSERT_EQ(here.acc.size(), 2u);
  EXPECT_EQ(here.acc[1].device(), device()) << "a stage's accumulator stays on its device";
  EXPECT_FLOAT_EQ(here.acc[0].to_vector<float>()[0], 300.0f);
}

TEST_P(PipelineOnDevice, MessagesMoveBetweenStagesOnDifferentDevices) {
  const Results on_host = run_pipeline(host(), host(), 100);
  const Results mixed = run_pipeline(device(), host(), 100);
  const Results back = run_pipeline(host(), device(), 100);
  ASSERT_EQ(mixed.firsts.size(), 100u);
  ASSERT_EQ(back.firsts.size(), 100u);
  for (size_t i = 0; i < 100; ++i) {
    ASSERT_NEAR(mixed.firsts[i], on_host.firsts[i], 1e-5f * std::max(1.0f, on_host.firsts[i])) << "message " << i;
    ASSERT_NEAR(back.firsts[i], on_host.firsts[i], 1e-5f * std::max(1.0f, on_host.firsts[i])) << "message " << i;
  }
}

TEST_P(PipelineOnDevice, AFailingMessageIsNamedAndTheOthersGoOn) {
  // A source whose message 3 has the wrong shape for the stage: placed on
  // the device, it fails there and is skipped (ErrorPolicy::Skip); the
  // other messages arrive, in order.
  auto i = std::make_shared<int64_t>(0);
  auto source = sources::generator({f32({4})}, [i]() -> std::optional<Tensors> {
    if (*i >= 8) return std::nullopt;
    const int64_t k = (*i)++;
    if (k == 3) return Tensors{zeros(f32({5}))};
    return Tensors{tensor<float>({float(k), 0, 0, 0})};
  });
  Pipeline p({.on_error = ErrorPolicy::Skip});
  auto src = p.source("numbers", source);
  auto acc = p.stage("count", [](Expr x, Expr n) { return tuple(x + n, n + 1.0f); },
                     {.input = {f32({4})}, .acc = {scalar(0.0f)}, .device = device()});
  auto out = sinks::collector();
  p.connect(src, acc);
  p.connect(acc, p.sink("collect", out));
  PipelineResult result = p.run();
  std::vector<float> got;
  for (const Tensors& t : out->results()) got.push_back(t.at(0).to_vector<float>().at(0));
  EXPECT_EQ(got, (std::vector<float>{0, 2, 4, 7, 9, 11, 13})) << "messages 0..7 but 3, each with the count before it";
  EXPECT_EQ(result.metrics_of("count").errors, 1u);
}

// A stage's device is resolved when the run starts, by the process that
// runs it: building the pipeline (a stage traced for its specs included)
// makes no client, so a launcher, or a process of a partitioned run that
// holds other stages, never needs the platform; the run that does names it.
TEST(PipelineDevices, AStagesDeviceIsResolvedWhenTheRunStarts) {
  Pipeline p;
  auto src = p.source("rows", rows(3));
  NodeId square = p.stage("square", [](Expr x) { return x * x; },
                          {.input = {f32({256})}, .device = {"no-such-platform"}});
  p.connect(src, square);
  p.connect(square, p.sink("drop", sinks::collector()));
  try {
    (void)p.run();
    FAIL() << "a stage ran on a platform that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-platform"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, PipelineOnDevice, ::testing::ValuesIn(platforms()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace sluice
