// Tags on a pipeline's messages (devices/tags.h): set by a source, carried,
// dropped or set by stages by their rule, merged at a join, kept per message
// through a batched stage, cut by to_batched, and read by a sink, with exact
// values. What is refused, and a stage's set_tags that fails, fail by name.

#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include <sluice/ops/ops.h>
#include <sluice/pipeline/pipeline.h>

#include "tests/pipeline/ledger.h"
#include "tests/pipeline/partitioned_pipeline.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

constexpr int kMessages = 20;
constexpr int64_t kRows = 8;

// Message i: f32[8] of i, 2i, ..., with the time of its first sample (a
// chunk of 8 samples at 1 kHz, 8 ms apart), its rate, its source, and an
// event at row i % 8.
Chunk chunk(int i, const std::string& source = "accelerometer") {
  std::vector<float> v(kRows);
  for (int64_t r = 0; r < kRows; ++r) v[static_cast<size_t>(r)] = static_cast<float>(i * (r + 1));
  Chunk c{{tensor(v, {kRows})}, {}};
  c.tags.set_time(1'000'000'000 + int64_t{i} * 8'000'000, "sensor-clock");
  c.tags.set_sample_rate(1000);
  c.tags.set("source", source);
  c.tags.set("event", int64_t{i}, i % kRows);
  return c;
}

std::shared_ptr<Source> tagged_source(const std::string& source = "accelerometer") {
  auto i = std::make_shared<int>(0);
  return sources::generator({f32({kRows})}, [i, source]() -> std::optional<Chunk> {
    if (*i == kMessages) return std::nullopt;
    return chunk((*i)++, source);
  });
}

TEST(PipelineTags, ASourcesTagsReachTheSinkThroughStagesThatCarryThem) {
  Pipeline p;
  auto src = p.source("sensor", tagged_source());
  auto twice = p.stage("twice", [](Expr x) { return x * 2; });
  auto plus = p.stage("plus", [](Expr x) { return x + 1; });
  auto out = sinks::collector();
  p.connect(src, twice);
  p.connect(twice, plus);
  p.connect(plus, p.sink("out", out));
  p.run();
  ASSERT_EQ(out->tags().size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i)
    EXPECT_EQ(out->tags()[static_cast<size_t>(i)], chunk(i).tags) << "message " << i;
}

TEST(PipelineTags, AStageSetsItsOutputsTagsFromItsInputsAndOutputsOrDropsThem) {
  Pipeline p;
  auto src = p.source("sensor", tagged_source());
  // The peak of the doubled chunk, and where it is, added to what came.
  auto twice = p.stage("twice", [](Expr x) { return x * 2; },
                       {.tags = TagRule::Set, .set_tags = [](const Tags& in, const Tensors& outputs) {
                          Tags t = in;
                          std::vector<float> v = outputs[0].to_vector<float>();
                          auto peak = std::max_element(v.begin(), v.end());
                          t.set("peak", static_cast<double>(*peak), peak - v.begin());
                          return t;
                        }});
  auto quiet = p.stage("quiet", [](Expr x) { return x + 0; }, {.tags = TagRule::Drop});
  auto set = sinks::collector(), dropped = sinks::collector();
  p.connect(src, twice);
  p.connect(twice, p.sink("set", set));
  p.connect(twice, quiet);
  p.connect(quiet, p.sink("dropped", dropped));
  p.run();
  ASSERT_EQ(set->tags().size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    Tags expected = chunk(i).tags;
    expected.set("peak", 2.0 * i * kRows, i == 0 ? 0 : kRows - 1);  // the last row holds i * 8, doubled
    EXPECT_EQ(set->tags()[static_cast<size_t>(i)], expected) << "message " << i;
    EXPECT_TRUE(dropped->tags()[static_cast<size_t>(i)].empty()) << "message " << i;
  }
}

TEST(PipelineTags, AJoinedMessageHoldsEveryInputsTagsTheFirstInputsWhereTheyMeet) {
  Pipeline p;
  auto a = p.source("a", tagged_source("left"));
  auto b = p.source("b", sources::generator({f32({kRows})}, [i = 0]() mutable -> std::optional<Chunk> {
                      if (i == kMessages) return std::nullopt;
                      Chunk c{{zeros(f32({kRows}))}, {}};
                      c.tags.set("source", std::string("right"));  // the first input's says otherwise
                      c.tags.set("gain", 0.5 * i, 2);
                      ++i;
                      return c;
                    }));
  auto sum = p.stage("sum", [](Expr x, Expr y) { return x + y; });
  auto out = sinks::collector();
  p.connect(a, sum);
  p.connect(b, sum);
  p.connect(sum, p.sink("out", out));
  p.run();
  ASSERT_EQ(out->tags().size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    Tags expected = chunk(i, "left").tags;
    expected.set("gain", 0.5 * i, 2);
    EXPECT_EQ(out->tags()[static_cast<size_t>(i)], expected) << "message " << i;
  }
}

TEST(PipelineTags, EachMessageOfABatchedStageKeepsItsOwnTags) {
  Pipeline p;
  auto src = p.source("sensor", tagged_source());
  auto scaled =
      p.stage("scaled", [](Expr x) { return x * 3; },
              {.input = {f32({kRows})}, .batch = {.size = 4, .timeout = std::chrono::milliseconds(5)}});
  auto out = sinks::collector();
  p.connect(src, scaled);
  p.connect(scaled, p.sink("out", out));
  p.run();
  ASSERT_EQ(out->tags().size(), static_cast<size_t>(kMessages));
  std::vector<uint64_t> seqs = out->sequence_numbers();
  for (size_t k = 0; k < seqs.size(); ++k)
    EXPECT_EQ(out->tags()[k], chunk(static_cast<int>(seqs[k])).tags) << "message " << seqs[k];
}

TEST(PipelineTags, BatchesOfATaggedTensorGoOnWithTheirRowsTags) {
  // 10 rows at 100 Hz cut in batches of 4: rows 0-3, 4-7, then 8, 9, 0, 1.
  std::vector<float> v(10);
  Tensor whole = tensor(v, {10});
  Tags t;
  t.set_time(5'000'000'000, "wall");
  t.set_sample_rate(100);
  t.set("marker", std::string("start"), 0);
  t.set("marker", std::string("knock"), 9);
  Pipeline p;
  auto src = p.source("rows", sources::range(to_batched(whole, t, 4)));
  auto out = sinks::collector();
  p.connect(src, p.sink("out", out));
  p.run();
  ASSERT_EQ(out->tags().size(), 3u);
  EXPECT_EQ(out->tags()[0].time_ns(), 5'000'000'000);
  EXPECT_EQ(out->tags()[0].get<std::string>("marker", 0), "start");
  EXPECT_EQ(out->tags()[1].time_ns(), 5'040'000'000);
  EXPECT_EQ(out->tags()[1].size(), 3u) << "time, clock, rate: no marker in rows 4-7";
  EXPECT_EQ(out->tags()[2].time_ns(), 5'080'000'000);
  EXPECT_EQ(out->tags()[2].get<std::string>("marker", 1), "knock");
  EXPECT_EQ(out->tags()[2].get<std::string>("marker", 2), "start") << "row 0 again, where it wraps";
  EXPECT_EQ(out->tags()[2].get<int64_t>("time_ns", 2), 5'000'000'000);
}

TEST(PipelineTags, ASinkCallbackReadsTheMessagesTags) {
  Pipeline p;
  auto src = p.source("sensor", tagged_source());
  std::vector<int64_t> times;
  p.connect(src, p.sink("times", [&](const Tensors& tensors, const Tags& tags) {
    EXPECT_EQ(tensors.size(), 1u);
    times.push_back(tags.time_ns().value_or(-1));
  }));
  p.run();
  ASSERT_EQ(times.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i)
    EXPECT_EQ(times[static_cast<size_t>(i)], 1'000'000'000 + int64_t{i} * 8'000'000);
}

// Process `me` of a program whose source and stage run in "a" and whose
// sink runs in "b": what the sink took, with its tags.
std::shared_ptr<Collector> run_tagged_process(const std::string& me, const Placement& placement) {
  Pipeline p(testing::thread_process_options(me, placement));
  auto src = p.source("sensor", tagged_source(), {.process = "a"});
  auto noted = p.stage("noted", [](Expr x) { return x * 2; },
                       {.process = "a", .tags = TagRule::Set, .set_tags = [](const Tags& in, const Tensors&) {
                          Tags t = in;
                          t.set("window", tensor<int32_t>({1, 2, 3}), 3);
                          return t;
                        }});
  auto out = sinks::collector();
  p.connect(src, noted);
  p.connect(noted, p.sink("out", out, {.process = "b"}));
  p.run();
  return out;
}

TEST(PipelineTags, TagsCrossToAnotherProcessWithTheirMessages) {
  TempDir dir;
  Placement placement = local_placement({"a", "b"}, dir.path());
  auto a = std::async(std::launch::async, [&] { return run_tagged_process("a", placement); });
  std::shared_ptr<Collector> got = run_tagged_process("b", placement);
  EXPECT_TRUE(a.get()->tags().empty()) << "the sink runs in b";
  ASSERT_EQ(got->tags().size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    Tags expected = chunk(i).tags;
    expected.set("window", tensor<int32_t>({1, 2, 3}), 3);
    EXPECT_EQ(got->tags()[static_cast<size_t>(i)], expected) << "message " << i;
  }
}

// A ledger (two-phase commit) keeping each message's tags.
struct TheTags {
  static Tags read(const Tensors&, const Tags& tags) { return tags; }
};
using TagLedger = testing::Ledger<TheTags>;

TEST(PipelineTags, ARestoredRunGivesTheReplayedMessagesTheirTagsEachOnce) {
  constexpr int kLong = 200;
  TempDir dir;
  auto ledger = std::make_shared<TagLedger>();
  for (uint64_t cancel_at : {uint64_t{57}, uint64_t{133}, UINT64_MAX}) {
    Pipeline p({.capacity = 8, .checkpoint_dir = dir.path(), .checkpoint_interval = {.messages = 10}});
    auto src = p.source("sensor", sources::indexed({f32({kRows})}, [](uint64_t i) -> std::optional<Chunk> {
                          if (i == kLong) return std::nullopt;
                          return chunk(static_cast<int>(i));
                        }));
    auto total = p.stage("total", [](Expr x, Expr acc) { return tuple(x + acc, acc + x); },
                         {.acc = {zeros(f32({kRows}))}});
    p.connect(src, total);
    p.connect(total, p.sink("ledger", ledger));
    p.restore();
    if (cancel_at != UINT64_MAX) ledger->when_reaching(cancel_at, [&p] { p.cancel(); });
    EXPECT_EQ(p.run().cancelled, cancel_at != UINT64_MAX);
  }
  auto got = ledger->committed();
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_EQ(got.size(), static_cast<size_t>(kLong)) << "each message committed once";
  for (int i = 0; i < kLong; ++i) {
    ASSERT_EQ(got[static_cast<size_t>(i)].first, static_cast<uint64_t>(i));
    EXPECT_EQ(got[static_cast<size_t>(i)].second, chunk(i).tags) << "message " << i;
  }
}

TEST(PipelineTags, ATagAtARowTheMessageLacksFailsItsSource) {
  Pipeline p;
  auto src = p.source("sensor", sources::generator({f32({kRows})}, []() -> std::optional<Chunk> {
                        Chunk c{{zeros(f32({kRows}))}, {}};
                        c.tags.set("late", int64_t{1}, kRows);
                        return c;
                      }));
  p.connect(src, p.sink("out", sinks::collector()));
  try {
    p.run();
    FAIL() << "no error";
  } catch (const PipelineError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "source 'sensor': tag 'late': expected a row of its first tensor, f32[8] (below 8), found row 8"),
        std::string::npos)
        << e.what();
  }
}

TEST(PipelineTags, SetTagsGoesWithTagRuleSetAndWhatItThrowsFailsThatMessage) {
  Pipeline refused;
  EXPECT_THROW(refused.stage("s", [](Expr x) { return x; }, {.tags = TagRule::Set}), PipelineError);
  EXPECT_THROW(refused.stage("s", [](Expr x) { return x; },
                             {.set_tags = [](const Tags& in, const Tensors&) { return in; }}),
               PipelineError);

  Pipeline p({.on_error = ErrorPolicy::Skip});
  auto src = p.source("sensor", tagged_source());
  auto picky = p.stage("picky", [](Expr x) { return x; },
                       {.tags = TagRule::Set, .set_tags = [](const Tags& in, const Tensors&) {
                          if (in.get<int64_t>("event", 3)) throw ValueError("no events at row 3");
                          return in;
                        }});
  auto out = sinks::collector();
  p.connect(src, picky);
  p.connect(picky, p.sink("out", out));
  PipelineResult r = p.run();
  EXPECT_EQ(r.metrics_of("picky").errors, 3u) << "messages 3, 11 and 19 have their event at row 3";
  EXPECT_EQ(out->results().size(), static_cast<size_t>(kMessages - 3));
}

TEST(PipelineTags, ASourceWithNeitherNextNorNextChunkFailsByName) {
  struct Empty : Source {
    std::vector<Spec> spec() const override { return {f32({1})}; }
  };
  Pipeline p;
  p.connect(p.source("empty", std::make_shared<Empty>()), p.sink("out", sinks::collector()));
  try {
    p.run();
    FAIL() << "no error";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("expected next() or next_chunk() implemented, found neither"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice
