// Batched stages (StageOptions::batch): each message's result is its own
// row of one run on a zero-padded batch, whether the batch filled or its
// timeout flushed it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <sluice/pipeline/node.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr int64_t kWidth = 16;

// Envelope i: 16 floats in [lo, hi), the same for the same i.
std::vector<float> row(uint64_t i, float lo = -1, float hi = 1) {
  std::vector<float> v(kWidth);
  for (int64_t j = 0; j < kWidth; ++j) {
    uint64_t h = (i * 16 + static_cast<uint64_t>(j)) * 2654435761u % 1000003u;
    v[static_cast<size_t>(j)] = lo + (hi - lo) * static_cast<float>(h) / 1000003.0f;
  }
  return v;
}

std::shared_ptr<Source> rows(uint64_t n, float lo = -1, float hi = 1) {
  return sources::indexed({f32({kWidth})}, [n, lo, hi](uint64_t i) -> std::optional<Tensors> {
    if (i >= n) return std::nullopt;
    return Tensors{tensor(row(i, lo, hi), Shape{kWidth})};
  });
}

// A small dense layer: the same function batched (x f32[64][16]) or not (f32[16]).
Expr dense(Expr x) {
  std::vector<float> w(kWidth * kWidth), b(kWidth);
  for (size_t k = 0; k < w.size(); ++k) w[k] = 0.05f * static_cast<float>(static_cast<int>(k % 7) - 3);
  for (size_t k = 0; k < b.size(); ++k) b[k] = 0.1f * static_cast<float>(k);
  return tanh(dot(x, constant(w, Shape{kWidth, kWidth})) * 2 + constant(b, Shape{kWidth}));
}

std::vector<std::vector<float>> run_rows(uint64_t n, StageOptions options, PipelineOptions popts = {},
                                         PipelineResult* result = nullptr) {
  Pipeline p(popts);
  auto src = p.source("rows", rows(n));
  auto st = p.stage("dense", dense, std::move(options));
  auto out = sinks::collector();
  p.connect(src, st);
  p.connect(st, p.sink("collect", out));
  PipelineResult r = p.run();
  if (result) *result = r;
  std::vector<std::vector<float>> got;
  for (const Tensors& t : out->results()) got.push_back(t.at(0).to_vector<float>());
  return got;
}

TEST(Batcher, ResultsEqualTheUnbatchedStagesInOrder) {
  constexpr uint64_t kN = 1000;
  PipelineResult r;
  auto batched = run_rows(kN, {.input = {f32({kWidth})}, .batch = {.size = 64, .timeout = 20ms}}, {}, &r);
  auto plain = run_rows(kN, {.input = {f32({kWidth})}, .concurrency = 4});
  ASSERT_EQ(batched.size(), kN);
  ASSERT_EQ(plain.size(), kN);
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_EQ(batched[i].size(), static_cast<size_t>(kWidth)) << "message " << i;
    for (size_t j = 0; j < batched[i].size(); ++j)
      ASSERT_NEAR(batched[i][j], plain[i][j], 1e-5) << "message " << i << ", element " << j;
  }
  const NodeMetrics& m = r.metrics_of("dense");
  EXPECT_EQ(m.messages_in, kN);
  EXPECT_EQ(m.messages_out, kN);
  EXPECT_EQ(m.errors, 0u);
}

TEST(Batcher, UnderLoadEveryBatchButTheLastIsFull) {
  // The source makes messages far faster than a batch computes, and its
  // capacity leaves room for several batches; the last 1000 - 15 * 64 = 40
  // wait for the timeout.
  PipelineResult r;
  auto got = run_rows(1000, {.input = {f32({kWidth})}, .batch = {.size = 64, .timeout = 300ms}},
                      {.capacity = 256}, &r);
  ASSERT_EQ(got.size(), 1000u);
  const auto& f = r.metrics_of("dense").figures;
  EXPECT_EQ(f.at("batches"), 16);
  EXPECT_EQ(f.at("timeouts"), 1);
  EXPECT_DOUBLE_EQ(f.at("batch_size_mean"), 1000.0 / 16);
  EXPECT_DOUBLE_EQ(f.at("batch_fill"), 1000.0 / 16 / 64);
  EXPECT_GT(f.at("queue_wait_p99_us"), 0);
  EXPECT_GE(f.at("queue_wait_p99_us"), f.at("queue_wait_p50_us"));
}

TEST(Batcher, APartialBatchIsFlushedByItsTimeout) {
  constexpr auto kTimeout = 40ms;
  auto push = sources::push({f32({kWidth})});
  Pipeline p;
  auto src = p.source("requests", push);
  auto st = p.stage("plus1", [](Expr x) { return x + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 64, .timeout = kTimeout}});
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<Clock::time_point> at;
  std::vector<std::vector<float>> got;
  p.connect(src, st);
  p.connect(st, p.sink("collect", [&](const Tensor& t) {
    std::lock_guard lock(mutex);
    at.push_back(Clock::now());
    got.push_back(t.to_vector<float>());
    arrived.notify_all();
  }));
  p.start();
  for (int k = 0; k < 2; ++k) {
    Clock::time_point pushed = Clock::now();
    push->push(tensor(row(static_cast<uint64_t>(k)), Shape{kWidth}));
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, 5 * kTimeout, [&] {
      return got.size() == static_cast<size_t>(k + 1);
    })) << "a lone message must come out within 5x the timeout";
    EXPECT_GE(at.back() - pushed, kTimeout) << "it waited for more first";
    std::vector<float> want = row(static_cast<uint64_t>(k));
    for (float& x : want) x += 1;
    EXPECT_EQ(got.back(), want);
    lock.unlock();
    const NodeMetrics m = [&] {
      for (const NodeMetrics& n : p.metrics())
        if (n.name == "plus1") return n;
      return NodeMetrics{};
    }();
    EXPECT_EQ(m.figures.at("timeouts"), k + 1);
    EXPECT_EQ(m.figures.at("batches"), k + 1);
    EXPECT_EQ(m.figures.at("batch_size_mean"), 1);
  }
  push->close();
  PipelineResult r = p.wait();
  EXPECT_EQ(r.metrics_of("plus1").messages_out, 2u);
}

// A stage slow enough that its batch is still running while a test pushes
// the next one: a counter, made from its input so that nothing folds it,
// stepped `steps` times before the rows go on as they came.
Expr slow_stage(Expr x, int64_t steps) {
  const Expr n = while_loop([steps](Expr c) { return c < steps; }, [](Expr c) { return c + 1; },
                            as_type(sum(x) * 0, DType::S64));
  return x + as_type(n, DType::F32) * 0;
}

TEST(Batcher, APartialBatchWhoseTimeoutPassesWhileTheBatchBeforeRunsKeepsFilling) {
  // One batch at a time (concurrency 1): the second batch's first message
  // waits past its timeout while the first batch runs, and the rest of it
  // comes meanwhile. Run early, it would have been a batch of one sharing
  // the cores with the first; kept filling, it runs full once the first ends.
  // The timeout is long beside pushing a batch (the first must fill before
  // its own, under load too), and the stage slower than the timeout.
  constexpr int64_t kBatch = 8;
  constexpr auto kTimeout = 100ms;
  for (int64_t steps = int64_t{1} << 22;; steps *= 2) {  // about 0.3 s a run on a 2-core machine
    auto push = sources::push({f32({kWidth})});
    Pipeline p;
    auto st = p.stage("slow", [steps](Expr x) { return slow_stage(x, steps); },
                      {.input = {f32({kWidth})}, .batch = {.size = kBatch, .timeout = kTimeout}});
    std::mutex mutex;
    std::optional<Clock::time_point> first_out;
    p.connect(p.source("requests", push), st);
    p.connect(st, p.sink("collect", [&](const Tensor&) {
      std::lock_guard lock(mutex);
      if (!first_out) first_out = Clock::now();
    }));
    p.start();
    auto send = [&](int n) {
      for (int k = 0; k < n; ++k) push->push(tensor(row(static_cast<uint64_t>(k)), Shape{kWidth}));
    };
    send(kBatch);  // the first batch, full: it runs
    send(1);
    std::this_thread::sleep_for(kTimeout + 20ms);
    send(kBatch - 1);
    const Clock::time_point pushed = Clock::now();
    push->close();
    PipelineResult r = p.wait();
    ASSERT_TRUE(first_out.has_value());
    const std::map<std::string, double>& f = r.metrics_of("slow").figures;
    // This machine ran the first batch before the test had pushed the
    // second: nothing was tested. That shows as its output before the last
    // push or, where the sink ran late on a loaded machine, as the partial
    // batch flushed by its timeout. A slower stage, up to a bound: where
    // every try flushes it, the batcher does so while the batch before runs.
    if (*first_out < pushed || f.at("timeouts") > 0) {
      ASSERT_LT(steps, int64_t{1} << 26)
          << "the first batch always ended before the second was pushed, or the partial batch always went "
             "at its timeout while the batch before ran";
      continue;
    }
    EXPECT_EQ(f.at("batches"), 2);
    EXPECT_EQ(f.at("batch_size_mean"), kBatch);
    EXPECT_EQ(r.metrics_of("slow").messages_out, 2u * kBatch);
    break;
  }
}

TEST(Batcher, ConcurrentClientsEachGetTheirOwnResult) {
  // Each client's message carries its number and request number; x * 2 + 1
  // keeps them readable, so a row sent to the wrong message shows.
  constexpr int kClients = 32, kRequests = 40;
  auto request = [](int client, int i) {
    std::vector<float> v(kWidth);
    v[0] = static_cast<float>(client);
    v[1] = static_cast<float>(i);
    for (int64_t j = 2; j < kWidth; ++j) v[static_cast<size_t>(j)] = static_cast<float>(client * 100 + j);
    return v;
  };
  auto push = sources::push({f32({kWidth})});
  Pipeline p;
  auto src = p.source("requests", push);
  auto st = p.stage("affine", [](Expr x) { return x * 2 + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 16, .timeout = 2ms}});
  std::mutex mutex;
  std::map<uint64_t, std::vector<float>> by_seq;
  std::map<std::pair<int, int>, std::vector<float>> by_request;
  class Recorder : public Sink {
   public:
    explicit Recorder(std::function<void(uint64_t, const Tensors&)> fn) : fn_(std::move(fn)) {}
    void consume(uint64_t seq, const Tensors& t) override { fn_(seq, t); }

   private:
    std::function<void(uint64_t, const Tensors&)> fn_;
  };
  p.connect(src, st);
  p.connect(st, p.sink("record", std::make_shared<Recorder>([&](uint64_t seq, const Tensors& t) {
                         std::vector<float> v = t.at(0).to_vector<float>();
                         std::lock_guard lock(mutex);
                         by_request[{static_cast<int>((v[0] - 1) / 2), static_cast<int>((v[1] - 1) / 2)}] = v;
                         by_seq[seq] = std::move(v);
                       })));
  p.start();
  std::atomic<int> mismatches{0}, unfinished{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kRequests; ++i) {
        std::vector<float> x = request(c, i);
        auto done = std::make_shared<std::promise<bool>>();
        std::future<bool> finished = done->get_future();
        push->push({tensor(x, Shape{kWidth})}, [done](bool f) { done->set_value(f); });
        if (finished.wait_for(30s) != std::future_status::ready || !finished.get()) {
          ++unfinished;
          return;
        }
        std::vector<float> want = x;
        for (float& w : want) w = w * 2 + 1;
        std::lock_guard lock(mutex);
        auto it = by_request.find({c, i});
        if (it == by_request.end() || it->second != want) ++mismatches;
      }
    });
  }
  for (auto& t : clients) t.join();
  push->close();
  PipelineResult r = p.wait();
  EXPECT_EQ(unfinished.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "a result must be its own request's";
  EXPECT_EQ(by_seq.size(), static_cast<size_t>(kClients * kRequests));
  EXPECT_EQ(by_request.size(), static_cast<size_t>(kClients * kRequests));
  const NodeMetrics& m = r.metrics_of("affine");
  EXPECT_EQ(m.messages_out, static_cast<uint64_t>(kClients * kRequests));
  EXPECT_GT(m.figures.at("batch_size_mean"), 1) << "concurrent requests share batches";
}

TEST(Batcher, PaddingRowsAreNeverSent) {
  // x + 1 on inputs in [2, 3): a padding row (zeros) would come out as ones,
  // which no message's row can. 1000 = 15 * 64 + 40: the last batch has 24
  // padding rows.
  constexpr uint64_t kN = 1000;
  Pipeline p({.capacity = 256});
  auto src = p.source("rows", rows(kN, 2, 3));
  auto st = p.stage("plus1", [](Expr x) { return x + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 64, .timeout = 5ms}});
  auto out = sinks::collector();
  p.connect(src, st);
  p.connect(st, p.sink("collect", out));
  PipelineResult r = p.run();
  std::vector<Tensors> got = out->results();
  ASSERT_EQ(got.size(), kN) << "one result per message, none for padding";
  EXPECT_EQ(r.metrics_of("plus1").messages_out, kN);
  const std::vector<float> padding(kWidth, 1.0f);
  for (size_t i = 0; i < kN; ++i) {
    std::vector<float> v = got[i].at(0).to_vector<float>();
    ASSERT_NE(v, padding) << "result " << i << " is a padding row";
    std::vector<float> want = row(i, 2, 3);
    for (float& x : want) x += 1;
    ASSERT_EQ(v, want) << "result " << i;
  }
  EXPECT_THAT(out->sequence_numbers(), ::testing::ElementsAreArray([&] {
                std::vector<uint64_t> s(kN);
                for (uint64_t i = 0; i < kN; ++i) s[i] = i;
                return s;
              }()));
}

// Passes messages on through `change` (a filter, a mangler).
class Through : public PipelineNode {
 public:
  Through(std::string name, std::function<Envelope(Envelope)> change)
      : PipelineNode(std::move(name)), change_(std::move(change)) {}
  const char* kind() const override { return "through"; }
  std::optional<std::vector<Spec>> output_spec() const override { return spec_; }
  void resolve(const std::vector<Spec>& inputs) override { spec_ = inputs; }
  NodePorts join(NodeContext& ctx) override {
    auto* body = ctx.own(std::make_shared<tbb::flow::function_node<Envelope, Envelope>>(
        ctx.graph(), tbb::flow::unlimited, [this](const Envelope& in) {
          Visit v(counters(), in);
          Envelope out = change_(in);
          v.leave(out);
          return out;
        }));
    return {body, body};
  }

 private:
  std::function<Envelope(Envelope)> change_;
  std::optional<std::vector<Spec>> spec_;
};

TEST(Batcher, SkippedMessagesPassStraightOnAndAMisfitFailsAlone) {
  Pipeline p({.on_error = ErrorPolicy::Skip, .capacity = 128});
  auto src = p.source("rows", rows(1000));
  auto filter = p.add(std::make_unique<Through>("odd-out", [](Envelope m) {
    if (m.seq % 2 == 1) {
      m.skipped = true;
      m.tensors.clear();
    } else if (m.seq == 500) {
      m.tensors = {tensor(std::vector<float>(8, 0.0f), Shape{8})};  // not a row of f32[16]
    }
    return m;
  }));
  auto st = p.stage("plus1", [](Expr x) { return x + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 32, .timeout = 5ms}});
  auto out = sinks::collector();
  p.connect(src, filter);
  p.connect(filter, st);
  p.connect(st, p.sink("collect", out));
  PipelineResult r = p.run();
  const NodeMetrics& m = r.metrics_of("plus1");
  EXPECT_EQ(m.messages_in, 1000u);
  EXPECT_EQ(m.messages_out, 1000u);
  EXPECT_EQ(m.skipped, 500u);
  EXPECT_EQ(m.errors, 1u) << "only the misfit fails, not the batch it would have joined";
  EXPECT_EQ(m.figures.at("batch_size_mean") * m.figures.at("batches"), 499);
  std::vector<uint64_t> seqs = out->sequence_numbers();
  ASSERT_EQ(seqs.size(), 499u);
  std::vector<Tensors> got = out->results();
  for (size_t k = 0; k < seqs.size(); ++k) {
    uint64_t i = seqs[k];
    ASSERT_EQ(i % 2, 0u);
    ASSERT_NE(i, 500u);
    if (k > 0) { ASSERT_GT(i, seqs[k - 1]) << "in order"; }
    std::vector<float> want = row(i);
    for (float& x : want) x += 1;
    ASSERT_EQ(got[k].at(0).to_vector<float>(), want) << "message " << i;
  }
}

TEST(Batcher, CancelWithAPendingBatchEndsTheRunPromptly) {
  auto push = sources::push({f32({kWidth})});
  Pipeline p;
  auto src = p.source("requests", push);
  auto st = p.stage("plus1", [](Expr x) { return x + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 64, .timeout = 60s}});
  p.connect(src, st);
  p.connect(st, p.sink("collect", sinks::collector()));
  p.start();
  std::atomic<int> dropped{0}, finished{0};
  for (int k = 0; k < 3; ++k)
    push->push({tensor(row(static_cast<uint64_t>(k)), Shape{kWidth})},
               [&](bool f) { ++(f ? finished : dropped); });
  std::this_thread::sleep_for(50ms);
  Clock::time_point start = Clock::now();
  p.cancel();
  PipelineResult r = p.wait();
  EXPECT_LT(Clock::now() - start, 10s) << "the pending batch must not hold the run until its timeout";
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(dropped.load(), 3);
  EXPECT_EQ(finished.load(), 0);
  EXPECT_EQ(r.metrics_of("plus1").figures.at("batches"), 0);
}

TEST(Batcher, MetricsFiguresAreInTheJson) {
  Pipeline p;
  auto src = p.source("rows", rows(100));
  auto st = p.stage("plus1", [](Expr x) { return x + 1; },
                    {.input = {f32({kWidth})}, .batch = {.size = 8, .timeout = 1ms}});
  p.connect(src, st);
  p.connect(st, p.sink("collect", sinks::collector()));
  p.run();
  std::string json = p.metrics_json();
  for (const char* figure :
       {"batches", "batch_size_mean", "batch_fill", "queue_wait_p50_us", "queue_wait_p99_us", "timeouts"})
    EXPECT_THAT(json, HasSubstr(std::string("\"") + figure + "\"")) << json;
}

void expect_refused(const std::function<void()>& build, const std::string& what) {
  try {
    build();
    FAIL() << "expected a PipelineError saying " << what;
  } catch (const PipelineError& e) {
    EXPECT_THAT(e.what(), HasSubstr("stage 'b'"));
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(Batcher, ABatchedStageThatCannotBeIsRefusedNamingIt) {
  auto plus1 = [](Expr x) { return x + 1; };
  const std::vector<Spec> in{f32({kWidth})};
  expect_refused(
      [&] {
        Pipeline p;
        p.stage("b", [](Expr x, Expr acc) { return tuple(x, acc); },
                {.input = in, .acc = {scalar(0.0f)}, .batch = {.size = 4}});
      },
      "accumulator");
  expect_refused([&] { Pipeline().stage("b", plus1, {.input = in, .batch = {.size = -1}}); }, "batch.size");
  expect_refused(
      [&] {
        Pipeline().add(batched_stage_node("b", [&](const std::vector<Spec>& s) { return trace(s, plus1); },
                                          {.input = in, .batch = {.size = 0}}));
      },
      "batch.size");
  expect_refused([&] { Pipeline().stage("b", plus1, {.input = in, .batch = {.size = 4, .timeout = 0us}}); },
                 "batch.timeout");
  expect_refused([&] { Pipeline().stage("b", plus1, {.batch = {.size = 4}}); }, "input");
  expect_refused([&] { Pipeline().stage("b", plus1, {.input = in, .concurrency = 0, .batch = {.size = 4}}); },
                 "concurrency: expected at least 1");
  // Outputs must keep the batch dimension in front.
  expect_refused(
      [&] { Pipeline().stage("b", [](Expr x) { return sum(x); }, {.input = in, .batch = {.size = 4}}); },
      "output 0: expected a leading batch dimension of 4, found f32");
  expect_refused(
      [&] {
        Pipeline().stage("b", [](Expr x) { return tuple(x, transpose(x)); },
                         {.input = in, .batch = {.size = 4}});
      },
      "output 1: expected a leading batch dimension of 4, found f32[16][4]");
}

}  // namespace
}  // namespace sluice
