// The pipeline contract of DESIGN.md and issue 4, through the public API.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

// n messages of s64[] counting 0, 1, 2, ...
std::shared_ptr<Source> counter(int64_t n) {
  auto i = std::make_shared<int64_t>(0);
  return sources::generator({s64()}, [i, n]() -> std::optional<Tensors> {
    if (*i >= n) return std::nullopt;
    return Tensors{scalar<int64_t>((*i)++)};
  });
}

std::vector<int64_t> values(const std::vector<Tensors>& results) {
  std::vector<int64_t> v;
  for (const Tensors& t : results) v.push_back(t.at(0).to_vector<int64_t>().at(0));
  return v;
}

TEST(PipelineContract, OrderIsPreservedThroughAConcurrentStatelessStage) {
  Pipeline p;
  auto src = p.source("numbers", counter(2000));
  auto sq = p.stage("square", [](Expr x) { return x * x; }, {.input = {s64()}, .concurrency = 4});
  auto out = sinks::collector();
  auto sink = p.sink("collect", out);
  p.connect(src, sq);
  p.connect(sq, sink);
  p.run();
  std::vector<int64_t> got = values(out->results());
  ASSERT_EQ(got.size(), 2000u);
  for (int64_t i = 0; i < 2000; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], i * i) << "message " << i << " out of order";
}

TEST(PipelineContract, OrderIsPreservedThroughAChainOfSerialStages) {
  // oneTBB may pass a serial node's messages on out of order; the pipeline may not.
  Pipeline p;
  NodeId prev = p.source("numbers", counter(3000));
  for (int s = 0; s < 4; ++s) {
    NodeId st = p.stage("plus" + std::to_string(s), [](Expr x) { return x + 1; }, {.input = {s64()}});
    p.connect(prev, st);
    prev = st;
  }
  auto out = sinks::collector();
  p.connect(prev, p.sink("collect", out));
  p.run();
  std::vector<int64_t> got = values(out->results());
  ASSERT_EQ(got.size(), 3000u);
  for (int64_t i = 0; i < 3000; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], i + 4) << "message " << i << " out of order";
}

TEST(PipelineContract, AnUnorderedStageStillDeliversEveryMessageOnce) {
  Pipeline p;
  auto src = p.source("numbers", counter(2000));
  auto sq = p.stage("square", [](Expr x) { return x * x; },
                    {.input = {s64()}, .concurrency = 4, .ordered = false});
  auto out = sinks::collector();
  p.connect(src, sq);
  p.connect(sq, p.sink("collect", out));
  p.run();
  std::vector<uint64_t> seqs = out->sequence_numbers();
  std::vector<int64_t> got = values(out->results());
  ASSERT_EQ(got.size(), 2000u);
  for (size_t k = 0; k < got.size(); ++k) {
    auto seq = static_cast<int64_t>(seqs[k]);
    EXPECT_EQ(got[k], seq * seq) << "the output at position " << k << " is not its own message's";
  }
  std::sort(seqs.begin(), seqs.end());
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_EQ(seqs[i], i) << "message " << i << " lost or delivered twice";
}

TEST(PipelineContract, AccumulatorStageEqualsASequentialFold) {
  Pipeline p;
  auto src = p.source("numbers", counter(500));
  // Output the running value; the accumulator is sum of x*3 - 1.
  auto fold = p.stage("fold", [](Expr x, Expr acc) { Expr next = acc + x * 3 - 1; return tuple(next, next); },
                      {.input = {s64()}, .acc = {scalar<int64_t>(7)}});
  auto out = sinks::collector();
  p.connect(src, fold);
  p.connect(fold, p.sink("collect", out));
  PipelineResult r = p.run();
  int64_t expected = 7;
  std::vector<int64_t> running;
  for (int64_t i = 0; i < 500; ++i) running.push_back(expected += i * 3 - 1);
  EXPECT_EQ(values(out->results()), running);
  EXPECT_EQ(r.accumulators.at("fold").at(0).to_vector<int64_t>()[0], expected);
}

TEST(PipelineContract, FanOutAndFanIn) {
  // numbers -> (double, negate) -> join -> sum of both -> collect
  Pipeline p;
  auto src = p.source("numbers", counter(300));
  auto twice = p.stage("twice", [](Expr x) { return x * 2; }, {.input = {s64()}});
  auto neg = p.stage("negate", [](Expr x) { return -x; }, {.input = {s64()}, .concurrency = 3});
  auto both = p.stage("both", [](Expr a, Expr b) { return tuple(a, b, a + b); }, {.input = {s64(), s64()}});
  auto out = sinks::collector();
  p.connect(src, twice);
  p.connect(src, neg);
  p.connect(twice, both);
  p.connect(neg, both);
  p.connect(both, p.sink("collect", out));
  p.run();
  auto results = out->results();
  ASSERT_EQ(results.size(), 300u);
  for (int64_t i = 0; i < 300; ++i) {
    const Tensors& t = results[static_cast<size_t>(i)];
    ASSERT_EQ(t.size(), 3u) << "the joined message carries both inputs' outputs, then the sum";
    EXPECT_EQ(t[0].to_vector<int64_t>()[0], 2 * i);
    EXPECT_EQ(t[1].to_vector<int64_t>()[0], -i) << "tensors follow connect order";
    EXPECT_EQ(t[2].to_vector<int64_t>()[0], i);
  }
}

TEST(PipelineContract, BoundedInFlightWithASlowSink) {
  constexpr size_t kCapacity = 8;
  Pipeline p({.capacity = kCapacity});
  std::atomic<int64_t> produced{0}, consumed{0}, peak{0};
  auto i = std::make_shared<int64_t>(0);
  auto src = p.source("fast", sources::generator({s64()}, [&, i]() -> std::optional<Tensors> {
    if (*i >= 200) return std::nullopt;
    int64_t in_flight = ++produced - consumed.load();
    int64_t prev = peak.load();
    while (in_flight > prev && !peak.compare_exchange_weak(prev, in_flight)) {
    }
    return Tensors{scalar<int64_t>((*i)++)};
  }));
  auto id = p.stage("identity", [](Expr x) { return x + 0; }, {.input = {s64()}});
  auto slow = p.sink("slow", [&](const Tensors&) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    ++consumed;
  });
  p.connect(src, id);
  p.connect(id, slow);
  p.run();
  EXPECT_EQ(consumed.load(), 200);
  EXPECT_LE(peak.load(), static_cast<int64_t>(kCapacity) + 1)
      << "a slow sink must slow the source: in-flight messages stay within the capacity";
}

TEST(PipelineContract, SkipPolicyDropsAndCountsFailingMessagesOnly) {
  Pipeline p({.on_error = ErrorPolicy::Skip});
  auto src = p.source("numbers", counter(100));
  auto id = p.stage("identity", [](Expr x) { return x + 0; }, {.input = {s64()}});
  auto out = sinks::collector();
  // The sink fails on every 10th message.
  auto picky = p.sink("picky", [&](const Tensors& t) {
    int64_t v = t[0].to_vector<int64_t>()[0];
    if (v % 10 == 3) throw ValueError("cannot take " + std::to_string(v));
    out->consume(0, t);
  });
  p.connect(src, id);
  p.connect(id, picky);
  PipelineResult r = p.run();
  EXPECT_EQ(out->results().size(), 90u) << "the other 90 messages are not lost";
  EXPECT_EQ(r.metrics_of("picky").errors, 10u);
}

TEST(PipelineContract, StopPolicyThrowsTheFirstErrorWithStageAndSequence) {
  Pipeline p;
  auto src = p.source("numbers", counter(1000));
  auto id = p.stage("identity", [](Expr x) { return x + 0; }, {.input = {s64()}});
  auto picky = p.sink("picky", [](const Tensors& t) {
    if (t[0].to_vector<int64_t>()[0] == 5) throw ValueError("five is bad");
  });
  p.connect(src, id);
  p.connect(id, picky);
  try {
    p.run();
    FAIL() << "expected PipelineError";
  } catch (const PipelineError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("sink 'picky'"), std::string::npos) << m;
    EXPECT_NE(m.find("message 5"), std::string::npos) << m;
    EXPECT_NE(m.find("five is bad"), std::string::npos) << m;
    // What the sink threw, with its type.
    ASSERT_TRUE(e.cause());
    EXPECT_THROW(std::rethrow_exception(e.cause()), ValueError);
  }
}

TEST(PipelineContract, CancelMidRunStopsCleanlyAndReportsProgress) {
  Pipeline p;
  auto src = p.source("endless", sources::generator({s64()}, [] { return std::optional<Tensors>(Tensors{scalar<int64_t>(1)}); }));
  auto acc = p.stage("count", [](Expr x, Expr n) { return tuple(n + x, n + x); },
                     {.input = {s64()}, .acc = {scalar<int64_t>(0)}});
  std::atomic<int> seen{0};
  p.connect(src, acc);
  p.connect(acc, p.sink("watch", [&](const Tensors&) { ++seen; }));
  p.start();
  while (seen.load() < 50) std::this_thread::yield();
  p.cancel();
  PipelineResult r = p.wait();
  EXPECT_TRUE(r.cancelled);
  EXPECT_GE(r.metrics_of("count").messages_out, 50u);
  EXPECT_EQ(r.accumulators.at("count")[0].to_vector<int64_t>()[0],
            static_cast<int64_t>(r.metrics_of("count").messages_out - r.metrics_of("count").skipped))
      << "the accumulator counts exactly the messages the stage processed";
}

TEST(PipelineContract, SpecMismatchFailsAtConnectNamingBoth) {
  Pipeline p;
  auto src = p.source("floats", sources::list({tensor<float>({1, 2, 3})}));
  auto st = p.stage("ints", [](Expr x) { return x + 1; }, {.input = {s32({3})}});
  try {
    p.connect(src, st);
    FAIL() << "expected PipelineError";
  } catch (const PipelineError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'floats' produces {f32[3]}"), std::string::npos) << m;
    EXPECT_NE(m.find("'ints' expects {s32[3]}"), std::string::npos) << m;
  }
}

// A node id of another pipeline once connected whatever node of this one
// had its index.
TEST(PipelineContract, ConnectRefusesNodeIdsOfAnotherPipeline) {
  Pipeline p, other;
  auto src = p.source("numbers", counter(3));
  auto sink = p.sink("drop", [](const Tensors&) {});
  auto foreign = other.sink("drop", [](const Tensors&) {});
  ASSERT_EQ(foreign.index, 0) << "an index this pipeline has too";
  try {
    p.connect(src, foreign);
    FAIL() << "expected PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("another pipeline"), std::string::npos) << e.what();
  }
  EXPECT_THROW(p.connect(NodeId{}, sink), PipelineError) << "a node id made by no pipeline";
  EXPECT_NO_THROW(p.connect(src, sink));
}

// A function that throws while it is traced (here, a user's own check)
// once escaped as that exception: the stage's PipelineError, the cause kept.
TEST(PipelineContract, AStageThatThrowsWhileTracedIsAPipelineErrorNamingIt) {
  auto throws = [](Expr x) -> Expr {
    if (x.spec().shape.rank() != 1) throw std::runtime_error("expected a vector");
    return x;
  };
  Pipeline p;
  try {
    p.stage("picky", throws, {.input = {s64()}});
    FAIL() << "expected PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 'picky'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected a vector"), std::string::npos) << e.what();
    EXPECT_THROW(std::rethrow_exception(e.cause()), std::runtime_error);
  }
  // Traced only when the run resolves its inputs.
  Pipeline q;
  auto src = q.source("numbers", counter(3));
  auto st = q.stage("picky", throws);
  q.connect(src, st);
  q.connect(st, q.sink("drop", [](const Tensors&) {}));
  try {
    q.run();
    FAIL() << "expected PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 'picky'"), std::string::npos) << e.what();
  }
}

TEST(PipelineContract, CyclesAndUnconnectedStagesFailAtRun) {
  {
    Pipeline p;
    auto src = p.source("numbers", counter(3));
    auto a = p.stage("a", [](Expr x, Expr y) { return x + y; }, {.input = {s64(), s64()}});
    auto b = p.stage("b", [](Expr x) { return x + 1; }, {.input = {s64()}});
    p.connect(src, a);
    p.connect(b, a);
    p.connect(a, b);
    EXPECT_THROW(p.run(), PipelineError) << "a -> b -> a is a cycle";
  }
  {
    Pipeline p;
    auto src = p.source("numbers", counter(3));
    p.stage("orphan", [](Expr x) { return x + 1; }, {.input = {s64()}});
    p.connect(src, p.sink("drop", [](const Tensors&) {}));
    EXPECT_THROW(p.run(), PipelineError) << "a stage with no input";
  }
}

TEST(PipelineContract, MetricsCountWhatFlowed) {
  Pipeline p;
  auto src = p.source("rows", sources::list({tensor<float>({1, 2}), tensor<float>({3, 4}), tensor<float>({5, 6})}));
  auto total = p.stage("total", [](Expr x) { return sum(x); }, {.input = {f32({2})}});
  p.connect(src, total);
  p.connect(total, p.sink("drop", [](const Tensors&) {}));
  PipelineResult r = p.run();
  const NodeMetrics& m = r.metrics_of("total");
  EXPECT_EQ(m.messages_in, 3u);
  EXPECT_EQ(m.messages_out, 3u);
  EXPECT_EQ(m.bytes_in, 3u * 8u) << "three f32[2]";
  EXPECT_EQ(m.bytes_out, 3u * 4u) << "three f32 scalars";
  EXPECT_EQ(m.errors, 0u);
  EXPECT_GT(m.latency_p99_us, 0.0);
  EXPECT_GE(m.latency_p99_us, m.latency_p50_us);
  EXPECT_EQ(r.metrics_of("rows").messages_out, 3u);
  std::string json = p.metrics_json();
  EXPECT_NE(json.find("\"name\": \"total\""), std::string::npos) << json;
}

TEST(PipelineContract, PushSourceFedFromAnotherThread) {
  Pipeline p({.capacity = 4});
  auto feed = sources::push({s64()});
  auto src = p.source("feed", feed);
  auto st = p.stage("plus1", [](Expr x) { return x + 1; }, {.input = {s64()}});
  auto out = sinks::collector();
  p.connect(src, st);
  p.connect(st, p.sink("collect", out));
  p.start();
  std::thread producer([&] {
    for (int64_t i = 0; i < 100; ++i) feed->push(scalar<int64_t>(i));
    feed->close();
  });
  p.wait();
  producer.join();
  std::vector<int64_t> got = values(out->results());
  ASSERT_EQ(got.size(), 100u);
  EXPECT_EQ(got.front(), 1);
  EXPECT_EQ(got.back(), 100);
}

TEST(PipelineContract, RangeSourceTakesToBatched) {
  std::vector<float> data(10);
  for (int i = 0; i < 10; ++i) data[static_cast<size_t>(i)] = static_cast<float>(i);
  Pipeline p;
  auto src = p.source("batches", sources::range(to_batched(tensor(data, {10}), 4)));
  auto st = p.stage("sum", [](Expr x, Expr acc) { return tuple(sum(x), acc + sum(x)); },
                    {.input = {f32({4})}, .acc = {scalar(0.0f)}});
  p.connect(src, st);
  p.connect(st, p.sink("drop", [](const Tensor&) {}));
  PipelineResult r = p.run();
  // Batches 0..3, 4..7, then 8, 9 wrapped with 0, 1.
  EXPECT_EQ(r.accumulators.at("sum")[0].to_vector<float>()[0], 45.0f + 1.0f);
}

}  // namespace
}  // namespace sluice
