// Event time (pipeline/event_time.h): zip_by_time against a numpy alignment,
// its waits and late data; event windows by count and by time against rows
// picked out one by one; watermarks from one node to the next.

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sluice/pipeline/pipeline.h>

#include "tests/pipeline/ledger.h"
#include "tests/pipeline/partitioned_pipeline.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// The two streams of zip_by_time_reference.py.
constexpr int64_t kT0 = 1'000'000'000;
constexpr int64_t kARows = 50, kAChunks = 40, kBRows = 37, kBChunks = 56;
constexpr double kARate = 1000, kBRate = 1002;

Chunk a_chunk(int64_t c) {
  std::vector<float> v;
  for (int64_t r = 0; r < kARows; ++r) {
    const auto g = static_cast<float>(c * kARows + r);
    v.insert(v.end(), {g, -g});
  }
  Chunk chunk{{tensor(v, {kARows, 2})}, {}};
  chunk.tags.set_time(kT0 + c * 50'000'000, "a");
  chunk.tags.set_sample_rate(kARate);
  return chunk;
}

int64_t b_stamp(int64_t c) {
  const int64_t jitter = ((c * 7919) % 41 - 20) * 1000;
  return kT0 + 3'000'000 + row_offset_ns(c * kBRows, kBRate) + jitter;
}

Chunk b_chunk(int64_t c) {
  std::vector<float> v;
  for (int64_t r = 0; r < kBRows; ++r) {
    const auto g = static_cast<float>(c * kBRows + r);
    v.insert(v.end(), {g, g + 0.5f, -g});
  }
  Chunk chunk{{tensor(v, {kBRows, 3})}, {}};
  chunk.tags.set_time(b_stamp(c), "b");
  chunk.tags.set_sample_rate(kBRate);
  chunk.tags.set("chunk", c);
  return chunk;
}

// B as the reference script sends it: a gap (20 to 23 never come) and
// chunk 30 after 32.
std::vector<int64_t> b_order() {
  std::vector<int64_t> order;
  for (int64_t c = 0; c < kBChunks; ++c) {
    if (c >= 20 && c < 24) continue;
    if (c == 30) continue;
    order.push_back(c);
    if (c == 32) order.push_back(30);
  }
  return order;
}

std::shared_ptr<Source> chunks_of(std::vector<Spec> spec, std::vector<Chunk> chunks,
                                  std::function<void(size_t)> before = {}) {
  auto all = std::make_shared<std::vector<Chunk>>(std::move(chunks));
  return sources::indexed(std::move(spec), [all, before](uint64_t i) -> std::optional<Chunk> {
    if (i >= all->size()) return std::nullopt;
    if (before) before(i);
    return (*all)[i];
  });
}

std::vector<Chunk> a_chunks() {
  std::vector<Chunk> v;
  for (int64_t c = 0; c < kAChunks; ++c) v.push_back(a_chunk(c));
  return v;
}

std::vector<Chunk> b_chunks() {
  std::vector<Chunk> v;
  for (int64_t c : b_order()) v.push_back(b_chunk(c));
  return v;
}

// Printed by zip_by_time_reference.py (numpy searchsorted): runs of A's
// rows {first row, B's sample (-1: none within the tolerance), rows}.
// 1523 of 2000 rows matched.
struct MatchRun {
  int64_t row, sample, rows;
};
const std::vector<MatchRun> kExpectedRuns = {
    {0, -1, 3},     {3, 0, 206},      {209, -1, 85},  {294, 292, 416},   {710, -1, 179}, {889, 888, 222},
    {1111, -1, 37}, {1148, 1147, 60}, {1208, -1, 88}, {1296, 1296, 413}, {1709, -1, 85}, {1794, 1795, 206},
};

struct Zipped {
  std::vector<Tensors> out;
  std::vector<Tags> tags;
  std::shared_ptr<Collector> late = sinks::collector();
  NodeMetrics metrics;
};

// A's rows as chunks of `rows` rows, the same rows at the same times.
std::vector<Chunk> a_chunks_of(int64_t rows) {
  std::vector<Chunk> v;
  for (int64_t first = 0; first < kAChunks * kARows; first += rows) {
    std::vector<float> x;
    for (int64_t r = first; r < first + rows; ++r)
      x.insert(x.end(), {static_cast<float>(r), -static_cast<float>(r)});
    Chunk chunk{{tensor(x, {rows, 2})}, {}};
    chunk.tags.set_time(kT0 + first * 1'000'000, "a");
    chunk.tags.set_sample_rate(kARate);
    v.push_back(std::move(chunk));
  }
  return v;
}

Zipped zip(ZipOptions options, PipelineOptions pipeline_options, std::function<void(size_t)> before_b = {},
           std::vector<Chunk> a_input = a_chunks()) {
  Zipped z;
  options.late = z.late;
  Pipeline p(pipeline_options);
  const Spec a_spec = a_input.at(0).tensors.at(0).spec();
  auto a = p.source("a", chunks_of({a_spec}, std::move(a_input)));
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks(), std::move(before_b)));
  auto joined = p.zip_by_time("joined", options);
  auto got = sinks::collector();
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("out", got));
  PipelineResult r = p.run();
  z.out = got->results();
  z.tags = got->tags();
  z.metrics = r.metrics_of("joined");
  return z;
}

TEST(ZipByTime, AlignsTwoClocksWithJitterDriftAGapAndLateDataAsNumpyDoes) {
  Zipped z = zip({.tolerance = 400us, .lateness = 1h}, {.capacity = 1000});
  ASSERT_EQ(z.out.size(), static_cast<size_t>(kAChunks));
  std::vector<int64_t> expected(kAChunks * kARows, -1);
  for (const MatchRun& run : kExpectedRuns)
    for (int64_t k = 0; k < run.rows; ++k)
      expected[static_cast<size_t>(run.row + k)] = run.sample < 0 ? -1 : run.sample + k;
  int64_t matched = 0;
  for (int64_t c = 0; c < kAChunks; ++c) {
    const Tensors& m = z.out[static_cast<size_t>(c)];
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].spec(), f32({kARows, 2}));
    EXPECT_EQ(m[1].spec(), f32({kARows, 3}));
    EXPECT_EQ(m[2].spec(), (Spec{DType::Pred, Shape{kARows}}));
    EXPECT_EQ(m[0].to_vector<float>(), a_chunk(c).tensors[0].to_vector<float>());
    const std::vector<float> b = m[1].to_vector<float>();
    const std::vector<bool> hit = m[2].to_vector<bool>();
    for (int64_t r = 0; r < kARows; ++r) {
      const int64_t want = expected[static_cast<size_t>(c * kARows + r)];
      const auto i = static_cast<size_t>(r);
      ASSERT_EQ(hit[i], want >= 0) << "row " << c * kARows + r;
      const float g = want >= 0 ? static_cast<float>(want) : 0.0f;
      ASSERT_EQ(b[3 * i], g) << "row " << c * kARows + r;
      ASSERT_EQ(b[3 * i + 1], want >= 0 ? g + 0.5f : 0.0f);
      ASSERT_EQ(b[3 * i + 2], -g);
      matched += hit[i];
    }
    // The reference's tags, and the watermark at its last row.
    const Tags& t = z.tags[static_cast<size_t>(c)];
    EXPECT_EQ(t.time_ns(), kT0 + c * 50'000'000);
    EXPECT_EQ(t.clock(), "a");
    EXPECT_EQ(t.get<int64_t>(tag_keys::kWatermark), kT0 + c * 50'000'000 + 49'000'000);
  }
  EXPECT_EQ(matched, 1523);
  // Chunk 30, after 32, went to the late sink: whole, with its tags and input.
  const std::vector<Tensors> late = z.late->results();
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0][0].to_vector<float>(), b_chunk(30).tensors[0].to_vector<float>());
  EXPECT_EQ(z.late->tags()[0].get<int64_t>("chunk"), 30);
  EXPECT_EQ(z.late->tags()[0].get<int64_t>("late_input"), 1);
  EXPECT_EQ(z.metrics.figures.at("late_messages"), 1);
  EXPECT_EQ(z.metrics.figures.at("late_rows"), kBRows);
  EXPECT_EQ(z.metrics.figures.at("matched_rows"), 1523);
  EXPECT_EQ(z.metrics.figures.at("unwaited"), 0);
  EXPECT_EQ(z.metrics.figures.at("held_full"), 0);
}

// A chunk of many rows is aligned in blocks, on several threads, each block
// finding where it starts with a search: the same rows match the same
// samples as in chunks of 50, block edges falling in runs, in the gap and
// at B's chunk edges.
TEST(ZipByTime, AReferenceChunkOfManyRowsIsAlignedInBlocksAsInSmallOnes) {
  for (int64_t rows : {1000, 2000}) {
    SCOPED_TRACE(::testing::Message() << "A in chunks of " << rows << " rows");
    Zipped z = zip({.tolerance = 400us, .lateness = 1h}, {.capacity = 1000}, {}, a_chunks_of(rows));
    ASSERT_EQ(z.out.size(), static_cast<size_t>(kAChunks * kARows / rows));
    std::vector<int64_t> expected(kAChunks * kARows, -1);
    for (const MatchRun& run : kExpectedRuns)
      for (int64_t k = 0; k < run.rows; ++k)
        expected[static_cast<size_t>(run.row + k)] = run.sample < 0 ? -1 : run.sample + k;
    int64_t row = 0;
    for (const Tensors& m : z.out) {
      ASSERT_EQ(m.size(), 3u);
      const std::vector<float> b = m[1].to_vector<float>();
      const std::vector<bool> hit = m[2].to_vector<bool>();
      for (size_t i = 0; i < hit.size(); ++i, ++row) {
        const int64_t want = expected[static_cast<size_t>(row)];
        ASSERT_EQ(hit[i], want >= 0) << "row " << row;
        ASSERT_EQ(b[3 * i], want >= 0 ? static_cast<float>(want) : 0.0f) << "row " << row;
        ASSERT_EQ(b[3 * i + 2], want >= 0 ? -static_cast<float>(want) : 0.0f) << "row " << row;
      }
    }
    EXPECT_EQ(row, kAChunks * kARows);
    EXPECT_EQ(z.metrics.figures.at("matched_rows"), 1523);
    EXPECT_EQ(z.metrics.figures.at("late_messages"), 1);
  }
}

// B holds back until the sink has most of A: the zip stops waiting for it
// once it is `lateness` behind, and B's chunks for rows already gone are
// late, each one counted and handed on.
TEST(ZipByTime, GoesWithoutAStreamLaterThanTheLateness) {
  std::atomic<size_t> emitted{0};
  auto late = sinks::collector();
  Pipeline p({.capacity = 1000});
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks(), [&](size_t i) {
                      const auto until = std::chrono::steady_clock::now() + 10s;
                      while (i == 0 && emitted.load() < 30 && std::chrono::steady_clock::now() < until)
                        std::this_thread::sleep_for(1ms);
                    }));
  auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 100ms, .late = late});
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("out", [&](const Tensors&) { emitted.fetch_add(1); }));
  PipelineResult r = p.run();
  const NodeMetrics& m = r.metrics_of("joined");
  EXPECT_EQ(m.messages_out, static_cast<uint64_t>(kAChunks));
  EXPECT_GE(m.figures.at("unwaited"), 30);
  EXPECT_GE(m.figures.at("late_messages"), 20);
  // Every chunk of B either took part or went to the late sink.
  EXPECT_EQ(m.figures.at("late_messages"), static_cast<double>(late->results().size()));
  EXPECT_EQ(m.figures.at("late_input1"), m.figures.at("late_messages"));
  EXPECT_LT(m.figures.at("matched_rows"), 1523);
}

// A stream that stalls (until the zip holds the reference's whole
// capacity) holds the reference back: nothing goes without it, and once it
// comes the alignment is numpy's to the row.
TEST(ZipByTime, AStalledStreamHoldsTheReferenceBackAtItsCapacity) {
  Pipeline p({.capacity = 8});
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
  // B's first chunk waits until the zip says it held A's whole capacity.
  auto held_full = [&p] {
    for (const NodeMetrics& m : p.metrics())
      if (m.name == "joined") return m.figures.count("held_full") ? m.figures.at("held_full") : 0.0;
    return 0.0;
  };
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks(), [&](size_t i) {
                      const auto until = std::chrono::steady_clock::now() + 10s;
                      while (i == 0 && held_full() < 1 && std::chrono::steady_clock::now() < until)
                        std::this_thread::sleep_for(1ms);
                    }));
  auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 1h, .late = sinks::collector()});
  auto got = sinks::collector();
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("out", got));
  PipelineResult r = p.run();
  const NodeMetrics& m = r.metrics_of("joined");
  EXPECT_EQ(m.messages_out, static_cast<uint64_t>(kAChunks));
  EXPECT_GE(m.figures.at("held_full"), 1);
  EXPECT_EQ(m.figures.at("unwaited"), 0);
  EXPECT_EQ(m.figures.at("late_messages"), 1);  // chunk 30, as always
  EXPECT_EQ(m.figures.at("matched_rows"), 1523);
}

TEST(ZipByTime, LateDataWithoutALateSinkIsCountedNotLost) {
  Pipeline p({.capacity = 1000});
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()));
  auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 1h});
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("out", sinks::collector()));
  PipelineResult r = p.run();
  EXPECT_EQ(r.metrics_of("joined").figures.at("late_messages"), 1);
  EXPECT_EQ(r.metrics_of("joined").figures.at("late_input1"), 1);
}

// B switched on a second before A: its first 27 chunks come before any of
// A's rows. Held until a reference is emitted, they would fill B's capacity
// of 4, A's first chunk would wait for B's later ones, and neither stream
// would move (across processes, for good; in one, until the graph ran dry
// and A went out unmatched: 1775 rows matched). They are let go as soon as
// no row to come can match them.
TEST(ZipByTime, AStreamThatStartsFarBeforeTheReferenceDoesNotHoldItBack) {
  std::vector<Chunk> early;
  for (int64_t c = -27; c < kBChunks; ++c) {
    Chunk chunk = b_chunk(std::max<int64_t>(c, 0));
    chunk.tags.set_time(b_stamp(0) + row_offset_ns(c * kBRows, kBRate), "b");
    early.push_back(std::move(chunk));
  }
  Pipeline p({.capacity = 4});
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, early));
  // A waits for B however far behind it is: the capacity decides, not the lateness.
  auto joined = p.zip_by_time("joined", {.tolerance = 500us, .lateness = 10s});
  std::shared_ptr<Collector> out = sinks::collector();
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("out", out));
  p.start();
  auto waited = std::async(std::launch::async, [&] { return p.wait(); });
  if (waited.wait_for(30s) != std::future_status::ready) {
    p.cancel();
    waited.wait();
    FAIL() << "the zip and its streams stood still";
  }
  const PipelineResult r = waited.get();
  ASSERT_EQ(out->results().size(), size_t{kAChunks});
  EXPECT_GT(r.metrics_of("joined").figures.at("matched_rows"), 1900) << "B covers all of A's rows";
}

// A scalar of the reference is a value of its whole chunk (a time it was
// made, say): it goes on with the chunk. Another input's cannot be aligned.
// Two streams that go quiet without ending: the reference's last chunk
// waits for the other stream's rows past it, unless the zip has an idle
// time, after which it goes without them. What it holds is the same either
// way (the rows never come): idle changes when, not what.
TEST(ZipByTime, WithAnIdleTimeAReferenceGoesWithoutAStreamGoneQuiet) {
  constexpr auto kIdle = 60ms;
  std::vector<Tensors> outputs[2];
  for (bool idle : {false, true}) {
    SCOPED_TRACE(idle ? "with an idle time" : "without");
    auto a = sources::push({f32({kARows, 2})});
    auto b = sources::push({f32({kBRows, 3})});
    Pipeline p;
    auto joined = p.zip_by_time("joined", {.tolerance = 500us, .lateness = 1h, .idle = idle ? kIdle : 0ns});
    std::mutex mutex;
    std::condition_variable arrived;
    std::vector<std::pair<Clock::time_point, Tensors>> seen;
    p.connect(p.source("a", a), joined);
    p.connect(p.source("b", b), joined);
    p.connect(joined, p.sink("out", [&](const Tensors& t) {
      std::lock_guard lock(mutex);
      seen.emplace_back(Clock::now(), t);
      arrived.notify_all();
    }));
    p.start();
    auto await = [&](size_t n, std::chrono::milliseconds within) {
      std::unique_lock lock(mutex);
      return arrived.wait_for(lock, within, [&] { return seen.size() >= n; });
    };
    b->push(b_chunk(0));
    const Clock::time_point last_pushed = Clock::now();  // the zip takes b's last chunk after this
    b->push(b_chunk(1));                                 // b's rows up to about 77 ms
    a->push(a_chunk(0));                                 // [0, 50 ms): b passes it
    a->push(a_chunk(1));                                 // [50, 100 ms): b never does
    ASSERT_TRUE(await(1, 10s)) << "a's first chunk goes once b passed it";
    if (!idle) {
      EXPECT_FALSE(await(2, 4 * kIdle)) << "a's second chunk waits for b";
    } else {
      ASSERT_TRUE(await(2, 10s)) << "a's second chunk goes once b stayed quiet";
      std::lock_guard lock(mutex);
      EXPECT_GE(seen[1].first - last_pushed, kIdle);
    }
    a->close();
    b->close();
    PipelineResult r = p.wait();
    std::lock_guard lock(mutex);
    ASSERT_EQ(seen.size(), 2u);
    for (auto& [at, t] : seen) outputs[idle].push_back(t);
    EXPECT_EQ(r.metrics_of("joined").figures.at("unwaited"), idle ? 1 : 0);
  }
  for (size_t m = 0; m < 2; ++m)
    for (size_t k = 0; k < outputs[0][m].size(); ++k) {
      const Tensor &without = outputs[0][m][k], &with = outputs[1][m][k];
      ASSERT_EQ(without.spec(), with.spec()) << "message " << m << ", tensor " << k;
      if (with.dtype() == DType::Pred)
        EXPECT_EQ(without.to_vector<bool>(), with.to_vector<bool>()) << "message " << m << ", tensor " << k;
      else
        EXPECT_EQ(without.to_vector<float>(), with.to_vector<float>()) << "message " << m << ", tensor " << k;
    }
  const std::vector<bool> matched = outputs[1][1].back().to_vector<bool>();
  EXPECT_TRUE(matched.front()) << "a's rows that b's samples reach match";
  EXPECT_FALSE(matched.back()) << "those past b's last sample do not";
}

TEST(ZipByTime, TheReferencesScalarsGoOnWithItsChunkAndAnotherInputsAreRefused) {
  auto with_scalar = [](std::vector<Chunk> chunks) {
    for (size_t c = 0; c < chunks.size(); ++c) chunks[c].tensors.push_back(scalar<int64_t>(int64_t(c) * 10));
    return chunks;
  };
  {
    Pipeline p;
    auto a = p.source("a", chunks_of({f32({kARows, 2}), s64({})}, with_scalar(a_chunks())));
    auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()));
    auto joined = p.zip_by_time("joined", {.tolerance = 500us});
    std::shared_ptr<Collector> out = sinks::collector();
    p.connect(a, joined);
    p.connect(b, joined);
    p.connect(joined, p.sink("out", out));
    p.run();
    const std::vector<Tensors> got = out->results();
    ASSERT_EQ(got.size(), size_t{kAChunks});
    for (size_t c = 0; c < got.size(); ++c) {
      ASSERT_EQ(got[c].size(), 4u) << "a's two tensors, b's one aligned, its mask";
      EXPECT_EQ(got[c][1].spec(), s64({}));
      EXPECT_EQ(got[c][1].to_vector<int64_t>()[0], int64_t(c) * 10);
      EXPECT_EQ(got[c][2].spec(), f32({kARows, 3}));
    }
  }
  {
    Pipeline p;
    auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
    auto b = p.source("b", chunks_of({f32({kBRows, 3}), s64({})}, with_scalar(b_chunks())));
    auto joined = p.zip_by_time("joined");
    p.connect(a, joined);
    p.connect(b, joined);
    p.connect(joined, p.sink("out", sinks::collector()));
    EXPECT_THAT([&] { p.run(); }, ::testing::ThrowsMessage<PipelineError>(HasSubstr("input 1")));
  }
}

TEST(ZipByTime, RefusesWhatItCannotAlign) {
  {  // one input
    Pipeline p;
    auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
    auto joined = p.zip_by_time("joined");
    p.connect(a, joined);
    p.connect(joined, p.sink("out", sinks::collector()));
    EXPECT_THAT([&] { p.run(); }, ::testing::ThrowsMessage<PipelineError>(HasSubstr("2 to 4 streams")));
  }
  {  // a negative tolerance
    Pipeline p;
    EXPECT_THAT([&] { p.zip_by_time("joined", {.tolerance = -1ns}); },
                ::testing::ThrowsMessage<PipelineError>(HasSubstr("tolerance")));
  }
  {  // chunks without a time: each message fails, by name
    Pipeline p({.on_error = ErrorPolicy::Skip});
    auto a = p.source("a", sources::indexed({f32({4})}, [](uint64_t i) -> std::optional<Tensors> {
                        if (i >= 3) return std::nullopt;
                        return Tensors{tensor<float>({1, 2, 3, 4}, {4})};
                      }));
    auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()));
    auto joined = p.zip_by_time("joined");
    p.connect(a, joined);
    p.connect(b, joined);
    p.connect(joined, p.sink("out", sinks::collector()));
    PipelineResult r = p.run();
    EXPECT_EQ(r.metrics_of("joined").errors, 3u);
  }
}

// What the ledger keeps of a joined message: every tensor's values, its
// time and its watermark.
struct JoinedSeen {
  static std::vector<double> read(const Tensors& t, const Tags& tags) {
    std::vector<double> v;
    for (const Tensor& x : t) {
      if (x.dtype() == DType::Pred) {
        for (bool b : x.to_vector<bool>()) v.push_back(b);
      } else {
        for (float f : x.to_vector<float>()) v.push_back(f);
      }
    }
    v.push_back(static_cast<double>(tags.time_ns().value_or(-1)));
    v.push_back(static_cast<double>(tags.get<int64_t>(tag_keys::kWatermark).value_or(-1)));
    return v;
  }
};

// The zip under checkpoints, cancelled at random points and each run
// restored from the newest checkpoint: the sink ends holding each joined
// message once, as a run without faults emits it. Each source places its
// barriers at its own count of messages, so a barrier comes on the two
// inputs far apart in time: the chunks the zip held at the first and what
// the other input brought until its own come back with a restore.
TEST(ZipByTime, CancelsAndRestoresGiveTheJoinOfARunWithoutThem) {
  using Ledger = testing::Ledger<JoinedSeen>;
  auto run = [&](const std::string& dir, std::shared_ptr<Ledger> ledger, std::optional<uint64_t> cancel_at) {
    Pipeline p({.capacity = 4, .checkpoint_dir = dir, .checkpoint_interval = {.messages = 6}});
    auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
    auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()));
    auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 1h});
    p.connect(a, joined);
    p.connect(b, joined);
    p.connect(joined, p.sink("ledger", ledger));
    const RestoreReport restored = p.restore();
    if (cancel_at) ledger->when_reaching(*cancel_at, [&p] { p.cancel(); });
    PipelineResult r = p.run();
    return std::make_tuple(r.cancelled, restored.checkpoint,
                           r.metrics_of("joined").figures.at("late_messages"));
  };
  TempDir clean_dir, faulty_dir;
  auto clean = std::make_shared<Ledger>();
  const auto [clean_cancelled, clean_restored, clean_late] = run(clean_dir.path(), clean, std::nullopt);
  ASSERT_FALSE(clean_cancelled);
  const auto expected = clean->committed();
  ASSERT_EQ(expected.size(), static_cast<size_t>(kAChunks));
  EXPECT_EQ(clean_late, 1);

  std::mt19937_64 rng(20261128);
  std::set<uint64_t> points;
  while (points.size() < 8)
    points.insert(std::uniform_int_distribution<uint64_t>(3, expected.back().first - 3)(rng));
  auto ledger = std::make_shared<Ledger>();
  int restores = 0;
  for (auto point = points.begin();; ++point) {
    const bool last = point == points.end();
    const auto [cancelled, restored, late] =
        run(faulty_dir.path(), ledger, last ? std::nullopt : std::optional<uint64_t>(*point));
    EXPECT_EQ(cancelled, !last);
    restores += restored > 0;
    if (last) {
      EXPECT_EQ(late, 1) << "the late chunk, counted once across the restores";
      break;
    }
  }
  EXPECT_GE(restores, 7);
  // In order of their numbers, each once. The numbers themselves depend on
  // when each barrier first came, which the two sources' threads decide.
  auto got = ledger->committed();
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (i > 0) { ASSERT_LT(got[i - 1].first, got[i].first) << "joined message " << i << ": numbered twice"; }
    ASSERT_EQ(got[i].second, expected[i].second) << "joined message " << i;
  }
}

// ---- event windows

// A stream of `chunks` chunks of `rows` rows at 1000 Hz from kT0: row g
// holds g. `skip`: chunks that never come.
std::vector<Chunk> counted(int64_t chunks, int64_t rows, std::vector<int64_t> skip = {}) {
  std::vector<Chunk> v;
  for (int64_t c = 0; c < chunks; ++c) {
    if (std::find(skip.begin(), skip.end(), c) != skip.end()) continue;
    std::vector<float> x;
    for (int64_t r = 0; r < rows; ++r) x.push_back(static_cast<float>(c * rows + r));
    Chunk chunk{{tensor(x, {rows, 1})}, {}};
    chunk.tags.set_time(kT0 + c * rows * 1'000'000, "c");
    chunk.tags.set_sample_rate(1000);
    chunk.tags.set("chunk", c);
    v.push_back(std::move(chunk));
  }
  return v;
}

struct Windowed {
  std::vector<Tensors> out;
  std::vector<Tags> tags;
  NodeMetrics metrics;
};

Windowed windows(std::vector<Chunk> chunks, EventWindowOptions options, PipelineOptions po = {}) {
  const int64_t rows = chunks.at(0).tensors[0].shape().dim(0);
  Pipeline p(po);
  auto src = p.source("s", chunks_of({f32({rows, 1})}, std::move(chunks)));
  auto w = p.event_window("w", options);
  auto got = sinks::collector();
  p.connect(src, w);
  p.connect(w, p.sink("out", got));
  PipelineResult r = p.run();
  return {got->results(), got->tags(), r.metrics_of("w")};
}

std::vector<float> values(const Tensor& t, int64_t n) {
  std::vector<float> v = t.to_vector<float>();
  v.resize(static_cast<size_t>(n));
  return v;
}

// A tag at a row goes with its row into every window holding it, at the
// row's place there; a later chunk's own tags (its time, its number) at
// its first row in the window; the window's whole tags are its first row's
// chunk's, the time moved to that row.
TEST(EventWindow, TagsAtRowsGoWithTheirRowsIntoTheWindowsThatHoldThem) {
  std::vector<Chunk> chunks = counted(12, 30);
  chunks[2].tags.set("event", int64_t{7}, 5);   // row 65
  chunks[3].tags.set("event", int64_t{8}, 29);  // row 119
  chunks[6].tags.set("event", int64_t{9}, 0);   // row 180
  struct Case {
    EventWindowOptions options;
    int64_t first_row;                  // of the window looked at
    std::map<int64_t, int64_t> events;  // its events by offset
  };
  for (const Case& c : {Case{{.rows = 101, .length = 100ms}, 100, {{19, 8}, {80, 9}}},  // [100, 200) ms
                        Case{{.rows = 101, .length = 100ms, .every = 50ms}, 50, {{15, 7}, {69, 8}}},
                        Case{{.rows = 40, .every_rows = 40}, 40, {{25, 7}}}}) {  // rows 40 to 79
    Windowed w = windows(chunks, c.options);
    const auto at = std::find_if(w.out.begin(), w.out.end(),
                                 [&](const Tensors& t) { return t[0].to_vector<float>()[0] == c.first_row; });
    ASSERT_NE(at, w.out.end()) << "no window from row " << c.first_row;
    const Tags& tags = w.tags[static_cast<size_t>(at - w.out.begin())];
    const int64_t rows = c.options.every_rows > 0 ? 40 : 100;
    std::map<int64_t, int64_t> events;
    for (int64_t r = 0; r < rows; ++r)
      if (auto e = tags.get<int64_t>("event", r)) events[r] = *e;
    EXPECT_EQ(events, c.events) << "window from row " << c.first_row;
    EXPECT_EQ(tags.time_ns(), kT0 + c.first_row * 1'000'000);
    EXPECT_EQ(tags.get<int64_t>("chunk"), c.first_row / 30);
    // Each later chunk's number and time at its first row here.
    for (int64_t row = (c.first_row / 30 + 1) * 30; row < c.first_row + rows; row += 30) {
      EXPECT_EQ(tags.get<int64_t>("chunk", row - c.first_row), row / 30) << row;
      EXPECT_EQ(tags.get<int64_t>(std::string(tag_keys::kTime), row - c.first_row), kT0 + row * 1'000'000)
          << row;
    }
  }
}

TEST(EventWindow, ByCountTumblingSlidingAndHopping) {
  for (auto [size, every] : {std::pair<int64_t, int64_t>{5, 5}, {4, 2}, {4, 6}, {16, 16}}) {
    Windowed w = windows(counted(10, 7), {.rows = size, .every_rows = every});
    // Windows start at rows 0, every, 2 every, ... while `size` rows remain.
    size_t n = 0;
    for (int64_t start = 0; start + size <= 70; start += every, ++n) {
      ASSERT_LT(n, w.out.size()) << size << "/" << every;
      std::vector<float> want;
      for (int64_t r = start; r < start + size; ++r) want.push_back(static_cast<float>(r));
      ASSERT_EQ(w.out[n].size(), 1u);
      EXPECT_EQ(w.out[n][0].spec(), f32({size, 1}));
      EXPECT_EQ(w.out[n][0].to_vector<float>(), want) << size << "/" << every << " window " << n;
      // Its first row's chunk's tags, the time moved to that row.
      EXPECT_EQ(w.tags[n].get<int64_t>("chunk"), start / 7);
      EXPECT_EQ(w.tags[n].time_ns(), kT0 + start * 1'000'000);
    }
    EXPECT_EQ(w.out.size(), n) << size << "/" << every;
    // What is left after the last window slid on: too few rows for another.
    const int64_t left = std::max<int64_t>(0, 70 - static_cast<int64_t>(n) * every);
    EXPECT_EQ(w.metrics.figures.at("rows_unwindowed"), static_cast<double>(left)) << size << "/" << every;
  }
}

// Each window by time, against the rows whose times fall in it, picked out
// one by one: tumbling, sliding and hopping, over a gap.
TEST(EventWindow, ByTimeHoldsTheRowsOfItsSpan) {
  struct Case {
    std::chrono::milliseconds length, every;
  };
  for (Case k : {Case{100ms, 100ms}, Case{100ms, 40ms}, Case{30ms, 70ms}}) {
    const std::vector<int64_t> skip = {4, 5};  // rows 120 to 179 never come
    Windowed w = windows(counted(12, 30, skip), {.rows = 101, .length = k.length, .every = k.every});
    std::vector<int64_t> present;
    for (int64_t g = 0; g < 360; ++g)
      if (g < 120 || g >= 180) present.push_back(g);
    const int64_t len = k.length.count() * 1'000'000, every = k.every.count() * 1'000'000;
    size_t n = 0;
    for (int64_t start = (kT0 - len) / every * every + every; start <= kT0 + 359'000'000; start += every) {
      std::vector<float> want;
      for (int64_t g : present)
        if (kT0 + g * 1'000'000 >= start && kT0 + g * 1'000'000 < start + len)
          want.push_back(static_cast<float>(g));
      if (want.empty()) continue;  // not emitted
      ASSERT_LT(n, w.out.size());
      const Tensors& m = w.out[n];
      ASSERT_EQ(m.size(), 2u);
      EXPECT_EQ(m[0].spec(), f32({101, 1}));
      const int64_t count = m[1].to_vector<int64_t>().at(0);
      ASSERT_EQ(count, static_cast<int64_t>(want.size())) << "window at " << start;
      EXPECT_EQ(values(m[0], count), want) << "window at " << start;
      std::vector<float> pad = m[0].to_vector<float>();
      EXPECT_TRUE(std::all_of(pad.begin() + count, pad.end(), [](float x) { return x == 0; }));
      EXPECT_EQ(w.tags[n].get<int64_t>("window_start_ns"), start);
      EXPECT_EQ(w.tags[n].get<int64_t>("window_end_ns"), start + len);
      EXPECT_EQ(w.tags[n].time_ns(), kT0 + static_cast<int64_t>(want[0]) * 1'000'000);
      ++n;
    }
    EXPECT_EQ(w.out.size(), n) << k.length.count() << "/" << k.every.count();
  }
}

TEST(EventWindow, AChunkBeforeAnEmittedWindowIsLateAndAnOverfullWindowFails) {
  std::vector<Chunk> chunks = counted(12, 30);
  std::swap(chunks[5], chunks[8]);  // 8 before 6, 7 and 5: those three are late
  auto late = sinks::collector();
  Windowed w = windows(chunks, {.rows = 101, .length = 100ms, .late = late});
  EXPECT_EQ(w.metrics.figures.at("late_messages"), 3);
  EXPECT_EQ(w.metrics.figures.at("late_rows"), 90);
  ASSERT_EQ(late->results().size(), 3u);
  EXPECT_EQ(late->tags()[0].get<int64_t>("chunk"), 6);
  EXPECT_EQ(late->tags()[0].get<int64_t>("late_input"), 0);

  // 360 rows in windows of 100 ms: three of 100 rows, over its 60, and one of 60.
  Windowed over = windows(counted(12, 30), {.rows = 60, .length = 100ms}, {.on_error = ErrorPolicy::Skip});
  EXPECT_EQ(over.out.size(), 1u);
  EXPECT_EQ(over.metrics.errors, 3u);
}

// What the ledger keeps of a window: its rows' values (padding and count
// too) and its tags that say where it is.
struct WindowSeen {
  static std::vector<double> read(const Tensors& t, const Tags& tags) {
    std::vector<double> v;
    for (float x : t.at(0).to_vector<float>()) v.push_back(x);
    if (t.size() > 1) v.push_back(static_cast<double>(t[1].to_vector<int64_t>().at(0)));
    for (const char* key : {"chunk", "window_start_ns", "window_end_ns", "watermark"})
      v.push_back(static_cast<double>(tags.get<int64_t>(key).value_or(-1)));
    v.push_back(static_cast<double>(tags.time_ns().value_or(-1)));
    return v;
  }
};

// Windows under checkpoints, cancelled at random points and each run
// restored from the newest checkpoint: the sink ends holding each window
// once, as a run without faults emits it. The rows a window held at each
// barrier, their times and their chunks' tags come back with it.
TEST(EventWindow, CancelsAndRestoresGiveTheWindowsOfARunWithoutThem) {
  using Ledger = testing::Ledger<WindowSeen>;
  const std::vector<EventWindowOptions> cases = {{.rows = 16, .every_rows = 10},
                                                 {.rows = 101, .length = 100ms, .every = 40ms}};
  for (const EventWindowOptions& options : cases) {
    const std::string which = options.length.count() > 0 ? "by time" : "by count";
    auto run = [&](const std::string& dir, std::shared_ptr<Ledger> ledger,
                   std::optional<uint64_t> cancel_at) {
      Pipeline p({.capacity = 4, .checkpoint_dir = dir, .checkpoint_interval = {.messages = 7}});
      auto src = p.source("s", chunks_of({f32({30, 1})}, counted(60, 30)));
      auto w = p.event_window("w", options);
      p.connect(src, w);
      p.connect(w, p.sink("ledger", ledger));
      const RestoreReport restored = p.restore();
      if (cancel_at) ledger->when_reaching(*cancel_at, [&p] { p.cancel(); });
      PipelineResult r = p.run();
      return std::make_tuple(r.cancelled, restored.checkpoint, r.metrics_of("w").figures.at("windows"));
    };
    TempDir clean_dir, faulty_dir;
    auto clean = std::make_shared<Ledger>();
    const auto [clean_cancelled, clean_restored, clean_windows] = run(clean_dir.path(), clean, std::nullopt);
    ASSERT_FALSE(clean_cancelled);
    const auto expected = clean->committed();
    ASSERT_GT(expected.size(), 40u) << which;
    ASSERT_EQ(clean_windows, static_cast<double>(expected.size())) << which;

    std::mt19937_64 rng(20261128);
    std::set<uint64_t> points;
    while (points.size() < 8)
      points.insert(std::uniform_int_distribution<uint64_t>(5, expected.back().first - 5)(rng));
    auto ledger = std::make_shared<Ledger>();
    int restores = 0;
    double last_windows = 0;
    for (auto point = points.begin();; ++point) {
      const bool last = point == points.end();
      const auto [cancelled, restored, windows] =
          run(faulty_dir.path(), ledger, last ? std::nullopt : std::optional<uint64_t>(*point));
      EXPECT_EQ(cancelled, !last) << which;
      restores += restored > 0;
      last_windows = windows;
      if (last) break;
    }
    EXPECT_GE(restores, 7) << which;
    EXPECT_EQ(last_windows, clean_windows) << which << ": windows counted across the restores";
    auto got = ledger->committed();
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), expected.size()) << which;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].first, expected[i].first) << which << " window " << i;
      ASSERT_EQ(got[i].second, expected[i].second) << which << " window " << i;
    }
  }
}

// A stream that goes quiet without ending: its last window waits for rows
// that do not come, unless the window has an idle time, after which it
// goes out; a row that comes later into it is late.
TEST(EventWindow, WithAnIdleTimeAQuietStreamsLastWindowGoesOut) {
  constexpr auto kIdle = 60ms;
  for (bool idle : {false, true}) {
    SCOPED_TRACE(idle ? "with an idle time" : "without");
    auto push = sources::push({f32({30, 1})});
    auto late = sinks::collector();
    Pipeline p;
    auto w = p.event_window("w", {.rows = 101, .length = 100ms, .late = late, .idle = idle ? kIdle : 0ns});
    struct Seen {
      Clock::time_point at;
      std::vector<float> rows;
      Tags tags;
    };
    std::mutex mutex;
    std::condition_variable arrived;
    std::vector<Seen> seen;
    p.connect(p.source("s", push), w);
    p.connect(w, p.sink("out", [&](const Tensors& t, const Tags& tags) {
      std::lock_guard lock(mutex);
      seen.push_back({Clock::now(), values(t[0], t[1].to_vector<int64_t>().at(0)), tags});
      arrived.notify_all();
    }));
    p.start();
    auto await = [&](size_t n, std::chrono::milliseconds within) {
      std::unique_lock lock(mutex);
      return arrived.wait_for(lock, within, [&] { return seen.size() >= n; });
    };
    const std::vector<Chunk> chunks = counted(11, 30);
    for (int c = 0; c < 7; ++c) push->push(chunks[c]);
    const Clock::time_point last_pushed = Clock::now();  // the window takes its last row after this
    push->push(chunks[7]);                               // rows 0 to 239 ms in all
    ASSERT_TRUE(await(2, 10s)) << "[0, 100) and [100, 200) go as the watermark passes them";
    if (!idle) {
      EXPECT_FALSE(await(3, 4 * kIdle)) << "[200, 300) waits for the watermark";
    } else {
      ASSERT_TRUE(await(3, 10s)) << "[200, 300) goes once the stream stayed quiet";
      std::lock_guard lock(mutex);
      EXPECT_GE(seen[2].at - last_pushed, kIdle);
      std::vector<float> want(40);
      std::iota(want.begin(), want.end(), 200.0f);
      EXPECT_EQ(seen[2].rows, want);
      EXPECT_EQ(seen[2].tags.get<int64_t>("window_start_ns"), kT0 + 200'000'000);
    }
    push->push(chunks[8]);   // rows 240 to 269: late once [200, 300) went
    push->push(chunks[10]);  // rows 300 to 329: the next window
    push->close();
    PipelineResult r = p.wait();
    const auto& f = r.metrics_of("w").figures;
    std::lock_guard lock(mutex);
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[2].rows.size(), idle ? 40u : 70u);
    EXPECT_EQ(seen[3].tags.get<int64_t>("window_start_ns"), kT0 + 300'000'000);
    EXPECT_EQ(seen[3].rows.size(), 30u);
    EXPECT_EQ(f.at("late_messages"), idle ? 1 : 0);
    EXPECT_EQ(late->results().size(), idle ? 1u : 0u);
    if (idle) {
      EXPECT_GE(f.at("idle_flushes"), 1);
    } else {
      EXPECT_EQ(f.count("idle_flushes"), 0u);
    }
  }
}

// A watermark on its input, ahead of the rows, tells the window more than
// the rows do: a source that knows its stream is complete up to a time
// (a gap, a sensor's own clock) closes the windows before it at once.
TEST(EventWindow, AnInputsWatermarkAheadOfItsRowsClosesTheWindowsBeforeIt) {
  auto push = sources::push({f32({30, 1})});
  Pipeline p;
  auto w = p.event_window("w", {.rows = 101, .length = 100ms});
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<std::pair<std::vector<float>, Tags>> seen;
  p.connect(p.source("s", push), w);
  p.connect(w, p.sink("out", [&](const Tensors& t, const Tags& tags) {
    std::lock_guard lock(mutex);
    seen.push_back({values(t[0], t[1].to_vector<int64_t>().at(0)), tags});
    arrived.notify_all();
  }));
  p.start();
  std::vector<Chunk> chunks = counted(11, 30);
  // Rows 0 to 239 ms; the last chunk says nothing comes before 300 ms.
  chunks[7].tags.set(std::string(tag_keys::kWatermark), kT0 + 299'999'999);
  for (int c = 0; c < 8; ++c) push->push(chunks[c]);
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, 10s, [&] { return seen.size() >= 3; }))
        << "[200, 300) goes on the watermark, with the stream still open";
    std::vector<float> want(40);
    std::iota(want.begin(), want.end(), 200.0f);
    EXPECT_EQ(seen[2].first, want);
    EXPECT_EQ(seen[2].second.get<int64_t>("window_start_ns"), kT0 + 200'000'000);
    EXPECT_EQ(seen[2].second.get<int64_t>(tag_keys::kWatermark), kT0 + 299'999'999);
  }
  push->push(chunks[10]);  // rows 300 to 329: after the watermark, not late
  push->close();
  PipelineResult r = p.wait();
  std::lock_guard lock(mutex);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3].first.size(), 30u);
  EXPECT_EQ(r.metrics_of("w").figures.at("late_messages"), 0);
}

TEST(EventWindow, RefusesOptionsThatCutNothing) {
  Pipeline p;
  EXPECT_THAT([&] { p.event_window("w", {.rows = 0}); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("rows")));
  EXPECT_THAT([&] { p.event_window("w", {.rows = 4, .every_rows = -1}); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("every_rows")));
  EXPECT_THAT([&] { p.event_window("w", {.rows = 4, .length = 1ms, .every = -1ms}); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("every")));
  EXPECT_THAT(
      [&] { p.event_window("w", {.rows = 4, .idle = 1ms}); },
      ::testing::ThrowsMessage<PipelineError>(HasSubstr("idle: expected 0, or more ns for windows by time")));
  EXPECT_THAT([&] { p.event_window("w", {.rows = 4, .length = 1ms, .idle = -1ms}); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("idle")));
}

// zip_by_time's watermark tells the window after it where the joined stream
// is complete: each window goes out as soon as the zip passed its end.
TEST(EventTime, AWindowAfterAZipFollowsItsWatermark) {
  Pipeline p({.capacity = 1000});
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()));
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()));
  auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 1h, .late = sinks::collector()});
  auto second = p.event_window("second", {.rows = 1000, .length = 1s, .every = 500ms});
  auto got = sinks::collector();
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, second);
  p.connect(second, p.sink("out", got));
  p.run();
  // Windows of 1 s every 500 ms over 2 s of A from kT0 (a multiple of 500 ms): starts at
  // 0.5, 1, 1.5, 2 and 2.5 s, the first and last half full.
  const std::vector<Tensors> out = got->results();
  const std::vector<Tags> tags = got->tags();
  ASSERT_EQ(out.size(), 5u);
  const std::vector<int64_t> counts = {500, 1000, 1000, 1000, 500};
  for (size_t n = 0; n < 5; ++n) {
    const Tensors& m = out[n];
    ASSERT_EQ(m.size(), 4u);  // A's rows, B's, which matched, the count
    EXPECT_EQ(m[3].to_vector<int64_t>().at(0), counts[n]);
    EXPECT_EQ(tags[n].get<int64_t>("window_start_ns"),
              kT0 - 500'000'000 + static_cast<int64_t>(n) * 500'000'000);
  }
  // The first three went out on the zip's watermark; the last two, ending
  // after the last row (at 2.999 s), when the streams ended, with none.
  EXPECT_FALSE(tags[3].get<int64_t>(tag_keys::kWatermark));
  EXPECT_FALSE(tags[4].get<int64_t>(tag_keys::kWatermark));
  for (size_t n = 0; n < 3; ++n)
    EXPECT_GE(tags[n].get<int64_t>(tag_keys::kWatermark).value_or(0),
              tags[n].get<int64_t>("window_end_ns").value_or(1) - 1);
}

// The same across two processes: the sensors in one, the zip, the windows
// and the sink in the other. Each stream crosses on a channel of its own,
// its time and rate with it, and the zip's watermark reaches the windows.
std::vector<Tensors> joined_windows(const std::string& me, const Placement& placement,
                                    std::vector<Tags>* tags) {
  Pipeline p(testing::thread_process_options(me, placement));
  auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()), {.process = "sensors"});
  auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_chunks()), {.process = "sensors"});
  auto joined = p.zip_by_time("joined", {.tolerance = 400us, .lateness = 1h}, {.process = "features"});
  auto second =
      p.event_window("second", {.rows = 1000, .length = 1s, .every = 500ms}, {.process = "features"});
  auto got = sinks::collector();
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, second);
  p.connect(second, p.sink("out", got, {.process = "features"}));
  p.run();
  if (tags) *tags = got->tags();
  return got->results();
}

TEST(EventTime, StreamsJoinedAndWindowedInAnotherProcess) {
  TempDir dir;
  Placement placement = local_placement({"sensors", "features"}, dir.path());
  auto sensors =
      std::async(std::launch::async, [&] { return joined_windows("sensors", placement, nullptr); });
  std::vector<Tags> tags;
  std::vector<Tensors> out = joined_windows("features", placement, &tags);
  EXPECT_TRUE(sensors.get().empty());
  ASSERT_EQ(out.size(), 5u);
  const std::vector<int64_t> counts = {500, 1000, 1000, 1000, 500};
  int64_t matched = 0;
  for (size_t n = 0; n < 5; ++n) {
    ASSERT_EQ(out[n].size(), 4u);
    EXPECT_EQ(out[n][3].to_vector<int64_t>().at(0), counts[n]);
    for (bool m : out[n][2].to_vector<bool>()) matched += m;
  }
  // The windows overlap by half: each row is in two of them.
  EXPECT_EQ(matched, 2 * 1523);
  for (size_t n = 0; n < 3; ++n)
    EXPECT_GE(tags[n].get<int64_t>(tag_keys::kWatermark).value_or(0),
              tags[n].get<int64_t>("window_end_ns").value_or(1) - 1);
}

// A reference that crosses a process before the join, and a stream B that
// ends early, 10 chunks in (a sensor switched off), from the same process
// as A. The zip holds A's capacity waiting for B's later rows; A's sender
// then waits for credit, and its process, whose every end of stream went
// out only once all its nodes were done, never sent B's. Now B's channel
// ends as soon as B's last message is sent, and the zip, told B ended once
// it has taken its 10 chunks, waits for it no more.
TEST(EventTime, AStreamThatEndsEarlyInAnotherProcessDoesNotHoldTheJoin) {
  TempDir dir;
  const Placement placement = local_placement({"sensors", "middle", "join"}, dir.path());
  std::vector<Chunk> b_first = b_chunks();
  b_first.resize(10);
  std::shared_ptr<Collector> got = sinks::collector();
  // Each process a thread that makes, runs and drops its part; the parts
  // still running, by name, for a test that must stop them.
  std::mutex mutex;
  std::map<std::string, Pipeline*> running;
  auto part = [&](const std::string& me) {
    Pipeline p(testing::thread_process_options(me, placement));
    auto a = p.source("a", chunks_of({f32({kARows, 2})}, a_chunks()), {.process = "sensors"});
    auto b = p.source("b", chunks_of({f32({kBRows, 3})}, b_first), {.process = "sensors"});
    auto doubled = p.stage("doubled", [](Expr x) { return x * 2; }, {.process = "middle"});
    auto joined = p.zip_by_time("joined", {.tolerance = 500us, .lateness = 1h}, {.process = "join"});
    p.connect(a, doubled);
    p.connect(doubled, joined);
    p.connect(b, joined);
    p.connect(joined, p.sink("out", got, {.process = "join"}));
    {
      std::lock_guard lock(mutex);
      running[me] = &p;
    }
    p.run();
    std::lock_guard lock(mutex);
    running.erase(me);
  };
  std::vector<std::future<void>> runs;
  for (const std::string me : {"sensors", "middle", "join"})
    runs.push_back(std::async(std::launch::async, part, me));
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  bool stuck = false;
  for (auto& r : runs) stuck = stuck || r.wait_until(deadline) != std::future_status::ready;
  if (stuck) {
    {
      std::lock_guard lock(mutex);
      for (auto& [me, p] : running) p->cancel();
    }
    for (auto& r : runs) r.wait();
    FAIL() << "the join and the processes before it stood still";
  }
  for (auto& r : runs) r.get();
  const std::vector<Tensors> out = got->results();
  ASSERT_EQ(out.size(), size_t{kAChunks}) << "every chunk of A went out";
  int64_t matched = 0;
  for (const Tensors& m : out)
    for (bool hit : m[2].to_vector<bool>()) matched += hit;
  EXPECT_GT(matched, 0);
  EXPECT_LE(matched, 10 * kBRows) << "no row past B's end matched";
}

}  // namespace
}  // namespace sluice
