// A node kind defined here alone (pipeline/node.h), wired into a pipeline
// beside the built-in kinds: the seam a router, a filter or a batcher uses.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sluice/pipeline/node.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

using ::testing::HasSubstr;

// Passes on the messages whose first tensor (an s64 scalar) is even and
// drops the others: a dropped message goes on marked skipped, so that the
// sequencers after it move on.
class EvenFilter : public PipelineNode {
 public:
  using PipelineNode::PipelineNode;
  const char* kind() const override { return "filter"; }
  size_t max_inputs() const override { return 1; }
  std::optional<std::vector<Spec>> output_spec() const override { return spec_; }
  void resolve(const std::vector<Spec>& inputs) override {
    if (inputs != std::vector<Spec>{s64()})
      throw PipelineError("filter '" + name() + "': expects " + specs_str({s64()}) + ", found " +
                          specs_str(inputs));
    spec_ = inputs;
  }
  NodePorts join(NodeContext& ctx) override {
    auto* body = ctx.own(std::make_shared<tbb::flow::function_node<Envelope, Envelope>>(
        ctx.graph(), tbb::flow::unlimited, [this](const Envelope& in) {
          Visit v(counters(), in);
          Envelope out = in;
          if (!in.skipped && in.tensors.at(0).to_vector<int64_t>().at(0) % 2 != 0) {
            out.skipped = true;
            out.tensors.clear();
            dropped_.fetch_add(1);
          }
          v.leave(out);
          return out;
        }));
    return {body, body};
  }
  void add_metrics(NodeMetrics& m) const override {
    m.figures["dropped"] = static_cast<double>(dropped_.load());
  }

 private:
  std::optional<std::vector<Spec>> spec_;
  std::atomic<int64_t> dropped_{0};
};

std::shared_ptr<Source> counter(int64_t n) {
  return sources::indexed({s64()}, [n](uint64_t i) -> std::optional<Tensors> {
    if (static_cast<int64_t>(i) >= n) return std::nullopt;
    return Tensors{scalar<int64_t>(static_cast<int64_t>(i))};
  });
}

TEST(CustomNode, AKindDefinedInOneFileRunsBetweenBuiltInNodes) {
  Pipeline p;
  auto src = p.source("numbers", counter(1000));
  auto even = p.add(std::make_unique<EvenFilter>("evens"));
  auto sq = p.stage("square", [](Expr x) { return x * x; }, {.concurrency = 3});
  auto out = sinks::collector();
  auto sink = p.sink("collect", out);
  p.connect(src, even);
  p.connect(even, sq);
  p.connect(sq, sink);
  PipelineResult r = p.run();
  std::vector<Tensors> got = out->results();
  ASSERT_EQ(got.size(), 500u);
  for (size_t k = 0; k < got.size(); ++k) {
    int64_t x = 2 * static_cast<int64_t>(k);
    ASSERT_EQ(got[k].at(0).to_vector<int64_t>().at(0), x * x) << "result " << k;
  }
  const NodeMetrics& m = r.metrics_of("evens");
  EXPECT_EQ(m.kind, "filter");
  EXPECT_EQ(m.messages_in, 1000u);
  EXPECT_EQ(m.figures.at("dropped"), 500);
  EXPECT_THAT(p.metrics_json(), HasSubstr("\"dropped\": 500"));
}

TEST(CustomNode, ItsOwnChecksFailTheRunNamingIt) {
  Pipeline p;
  auto src = p.source("floats", sources::list({tensor<float>({1, 2})}));
  auto even = p.add(std::make_unique<EvenFilter>("evens"));
  auto sink = p.sink("collect", sinks::collector());
  p.connect(src, even);
  p.connect(even, sink);
  try {
    p.run();
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) { EXPECT_THAT(e.what(), HasSubstr("filter 'evens': expects")); }
  // One input at most, as the kind says.
  Pipeline q;
  auto a = q.source("a", counter(1));
  auto b = q.source("b", counter(1));
  auto f = q.add(std::make_unique<EvenFilter>("evens"));
  q.connect(a, f);
  EXPECT_THROW(q.connect(b, f), PipelineError);
}

}  // namespace
}  // namespace sluice
