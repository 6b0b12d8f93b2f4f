// Checkpoints of a pipeline in one process: barriers, restore, exactly-once
// after repeated cancels, torn checkpoints, spec checks, and live updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <sluice/base/error.h>
#include <sluice/io/npy.h>
#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/pipeline.h>
#include "tests/pipeline/ledger.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMessages = 1200;
constexpr uint64_t kEvery = 50;

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.spec() != b.spec()) return false;
  std::vector<uint8_t> x(static_cast<size_t>(a.spec().bytes())), y(x.size());
  a.copy_to_host(x.data());
  b.copy_to_host(y.data());
  return x == y;
}

// The ledger keeps each message's first tensor.
struct FirstTensor {
  static std::vector<float> read(const Tensors& t, const Tags&) { return t.at(0).to_vector<float>(); }
};
using Ledger = testing::Ledger<FirstTensor>;

Tensor input(uint64_t i, float scale) {
  std::vector<float> v(4);
  for (size_t k = 0; k < v.size(); ++k) v[k] = scale * std::sin(static_cast<float>(i * 4 + k) * 0.37f);
  return tensor(v, Shape{4});
}

// Two sources joined into one stateful stage, a second stateful stage, a
// sink: each accumulator depends on the order of every message before.
struct TwoStages {
  Pipeline p;
  // `xs`: the first source; null: a replayable one.
  // `device`: where both stages run; their accumulators are checkpointed from it.
  explicit TwoStages(const std::string& dir, std::shared_ptr<Sink> sink, PipelineOptions o = {},
                     std::shared_ptr<Source> xs_source = nullptr, DevicePreference device = host())
      : p([&] {
          o.checkpoint_dir = dir;
          if (!o.checkpoint_interval.set()) o.checkpoint_interval.messages = kEvery;
          o.capacity = 16;
          return o;
        }()) {
    std::vector<Tensor> ys;
    for (uint64_t i = 0; i < kMessages; ++i) ys.push_back(input(i, 2.0f));
    if (!xs_source)
      xs_source = sources::indexed({f32({4})}, [](uint64_t i) -> std::optional<Tensors> {
        if (i >= kMessages) return std::nullopt;
        return Tensors{input(i, 1.0f)};
      });
    NodeId xs = p.source("xs", std::move(xs_source));
    NodeId y = p.source("ys", sources::list(ys));
    NodeId mix = p.stage(
        "mix", [](Expr x, Expr yv, Expr acc) { return tuple(x * yv + acc * 0.5f, acc * 0.9f + x - yv); },
        {.acc = {zeros(f32({4}))}, .device = device});
    NodeId smooth =
        p.stage("smooth", [](Expr v, Expr acc) { return tuple(v + acc, tanh(acc * 0.99f + v * 0.01f)); },
                {.acc = {zeros(f32({4}))}, .device = device});
    p.connect(xs, mix);
    p.connect(y, mix);
    p.connect(mix, smooth);
    p.connect(smooth, p.sink("ledger", std::move(sink)));
    last = smooth;
  }
  NodeId last;  // the second stage, for more sinks
};

// On every platform this machine has (a GPU's accumulators are downloaded
// at each barrier and uploaded at restore).
class CheckpointsOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  Device device() const { return client(GetParam()).default_device(); }
};

TEST_P(CheckpointsOnDevice, TwentyCancelsAndRestoresGiveTheFaultFreeRunBitForBit) {
  TempDir clean_dir, faulty_dir;
  auto clean_ledger = std::make_shared<Ledger>();
  PipelineResult clean = TwoStages(clean_dir.path(), clean_ledger, {}, nullptr, device()).p.run();
  ASSERT_FALSE(clean.cancelled);
  EXPECT_GE(clean.checkpoints.completed, static_cast<int64_t>(kMessages / kEvery) - 1);
  const auto expected = clean_ledger->committed();
  ASSERT_EQ(expected.size(), kMessages);  // the end of the run commits the rest

  // Twenty cancels at random messages, each run restored from the last.
  std::mt19937_64 rng(20261124);
  std::set<uint64_t> points;
  while (points.size() < 20) points.insert(std::uniform_int_distribution<uint64_t>(10, kMessages - 10)(rng));
  auto ledger = std::make_shared<Ledger>();
  int cancels = 0, restores = 0;
  std::optional<PipelineResult> last;
  for (auto point = points.begin();; ++point) {
    TwoStages run(faulty_dir.path(), ledger, {}, nullptr, device());
    RestoreReport report = run.p.restore();
    EXPECT_TRUE(report.skipped.empty());
    restores += report.checkpoint > 0;
    if (point != points.end()) ledger->when_reaching(*point, [&run] { run.p.cancel(); });
    PipelineResult r = run.p.run();
    if (point == points.end()) {
      ASSERT_FALSE(r.cancelled);
      last = std::move(r);
      break;
    }
    EXPECT_TRUE(r.cancelled) << "run " << cancels << " was to be cancelled at message " << *point;
    ++cancels;
  }
  EXPECT_EQ(cancels, 20);
  // Once a cancel comes after the first barrier's message, every run after it restores.
  const auto early = std::count_if(points.begin(), points.end(), [](uint64_t p) { return p < kEvery; });
  EXPECT_EQ(restores, 20 - early);
  for (const char* stage : {"mix", "smooth"}) {
    const Tensors& want = clean.accumulators.at(stage);
    const Tensors& got = last->accumulators.at(stage);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << stage << " " << k;
  }
  // The sink committed every message exactly once, with the same values.
  auto got = ledger->committed();
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].first, i);
    ASSERT_EQ(got[i].second, expected[i].second) << "message " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, CheckpointsOnDevice, ::testing::ValuesIn(platforms()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The .npy file sink under the same faults: its directory ends holding
// each message once, as files numpy reads, with the values of a run
// without faults.
TEST(Checkpoints, TheNpyFileSinkHoldsEachMessageOnceAfterCancels) {
  TempDir clean_dir, checkpoints, files;
  auto clean_ledger = std::make_shared<Ledger>();
  TwoStages(clean_dir.path(), clean_ledger).p.run();
  const auto expected = clean_ledger->committed();
  for (uint64_t point : {130u, 410u, 415u, 777u, 1100u, 0u}) {
    auto ledger = std::make_shared<Ledger>();  // cancels the run; the files are what is checked
    TwoStages run(checkpoints.path(), ledger);
    run.p.connect(run.last, run.p.sink("files", sinks::npy_files(files.path())));
    run.p.restore();
    if (point > 0) ledger->when_reaching(point, [&run] { run.p.cancel(); });
    EXPECT_EQ(run.p.run().cancelled, point > 0);
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(files.path()))
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), kMessages) << "one file per message";
  EXPECT_TRUE(fs::is_empty(fs::path(files.path()) / ".pending")) << "the end published everything";
  for (uint64_t i = 0; i < kMessages; ++i) {
    char want[32];
    std::snprintf(want, sizeof want, "%012llu-0.npy", static_cast<unsigned long long>(i));
    ASSERT_EQ(names[i], want);
    EXPECT_EQ(npy::load((fs::path(files.path()) / names[i]).string()).to_vector<float>(), expected[i].second)
        << names[i];
  }
}

TEST(Checkpoints, ATornNewestCheckpointFallsBackToThePreviousAndSaysSo) {
  TempDir dir;
  auto ledger = std::make_shared<Ledger>();
  {
    TwoStages first(dir.path(), ledger);
    ledger->when_reaching(700, [&first] { first.p.cancel(); });
    first.p.run();
  }
  CheckpointStore store(dir.path());
  std::vector<int64_t> numbers = store.numbers();
  ASSERT_GE(numbers.size(), 2u);
  const fs::path newest =
      fs::path(dir.path()) /
      ("chk-" + std::string(8 - std::to_string(numbers.back()).size(), '0') + std::to_string(numbers.back()));
  // Corrupt one accumulator file of the newest: its hash no longer matches.
  fs::path npy;
  for (const auto& e : fs::directory_iterator(newest))
    if (e.path().extension() == ".npy") npy = e.path();
  ASSERT_FALSE(npy.empty());
  {
    std::fstream f(npy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');
  }
  auto fresh_ledger = std::make_shared<Ledger>();
  TwoStages again(dir.path(), fresh_ledger);
  RestoreReport report = again.p.restore();
  EXPECT_EQ(report.checkpoint, numbers[numbers.size() - 2]);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find(std::to_string(numbers.back())), std::string::npos) << report.skipped[0];
  PipelineResult r = again.p.run();
  // Resumed from the older one and ran to the end: the same final state as a run without faults.
  TempDir clean_dir;
  PipelineResult clean = TwoStages(clean_dir.path(), std::make_shared<Ledger>()).p.run();
  for (const char* stage : {"mix", "smooth"})
    for (size_t k = 0; k < clean.accumulators.at(stage).size(); ++k)
      EXPECT_TRUE(same_bits(r.accumulators.at(stage)[k], clean.accumulators.at(stage)[k])) << stage;
}

TEST(Checkpoints, RestoreChecksStagesSpecsAndSourcesBeforeChangingAnything) {
  TempDir dir;
  {
    TwoStages first(dir.path(), std::make_shared<Ledger>());
    first.p.run();
  }
  auto expect_refusal = [&](Pipeline& p, const std::string& part) {
    try {
      p.restore(dir.path());
      ADD_FAILURE() << "restore accepted a pipeline that does not match";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  {  // another accumulator spec
    Pipeline p;
    NodeId xs = p.source("xs", sources::list({input(0, 1)}));
    NodeId ys = p.source("ys", sources::list({input(0, 1)}));
    NodeId mix = p.stage("mix", [](Expr x, Expr y, Expr acc) { return tuple(x + y, acc + 1.0); },
                         {.acc = {zeros(f64({4}))}});
    NodeId smooth =
        p.stage("smooth", [](Expr v, Expr acc) { return tuple(v, acc); }, {.acc = {zeros(f32({4}))}});
    p.connect(xs, mix);
    p.connect(ys, mix);
    p.connect(mix, smooth);
    p.connect(smooth, p.sink("ledger", std::make_shared<Ledger>()));
    expect_refusal(p, "stage 'mix': expected an accumulator {f64[4]}, found {f32[4]}");
  }
  {  // a source that cannot replay, then the same accepted at most once
    for (bool accept : {false, true}) {
      PipelineOptions o;
      if (accept) o.at_most_once = {"xs"};
      TwoStages live(dir.path(), std::make_shared<Ledger>(), o, sources::push({f32({4})}));
      Pipeline& p = live.p;
      if (!accept) {
        expect_refusal(p, "source 'xs' cannot replay");
      } else {
        EXPECT_GT(p.restore(dir.path()).checkpoint, 0);
      }
    }
  }
  {  // a stage the checkpoint does not have
    Pipeline p;
    NodeId xs = p.source("xs", sources::list({input(0, 1)}));
    NodeId other =
        p.stage("other", [](Expr x, Expr acc) { return tuple(x, acc + x); }, {.acc = {zeros(f32({4}))}});
    p.connect(xs, other);
    p.connect(other, p.sink("ledger", std::make_shared<Ledger>()));
    expect_refusal(p, "stage 'other': expected its accumulator, found none");
  }
}

TEST(Checkpoints, AFreshDirectoryStartsAfreshAndTimedBarriersCheckpoint) {
  TempDir dir;
  PipelineOptions o;
  o.checkpoint_dir = dir.path();
  o.checkpoint_interval.time = std::chrono::milliseconds(5);
  Pipeline p(o);
  // About 80 ms of messages: a dozen or so barriers at 5 ms.
  NodeId src = p.source("slow", sources::indexed({f32({4})}, [](uint64_t i) -> std::optional<Tensors> {
                          if (i >= 400) return std::nullopt;
                          std::this_thread::sleep_for(std::chrono::microseconds(200));
                          return Tensors{input(i, 1.0f)};
                        }));
  NodeId sum = p.stage("sum", [](Expr x, Expr acc) { return tuple(x, acc + x); }, {.acc = {zeros(f32({4}))}});
  auto ledger = std::make_shared<Ledger>();
  p.connect(src, sum);
  p.connect(sum, p.sink("ledger", ledger));
  EXPECT_EQ(p.restore().checkpoint, 0);
  PipelineResult r = p.run();
  EXPECT_GE(r.checkpoints.completed, 4);  // three timed ones at least, and the final one
  EXPECT_EQ(r.checkpoints.failed, 0);
  EXPECT_GT(r.checkpoints.last_bytes, 0);
  EXPECT_GE(r.checkpoints.last_duration_s, r.checkpoints.last_alignment_s);
  EXPECT_EQ(ledger->committed().size(), 400u);
  EXPECT_GE(CheckpointStore(dir.path()).numbers().size(), 3u);  // retained
}

// ---- live updates

TEST(LiveUpdate, AFunctionAndAnAccumulatorSwapAtTheNextBarrierEachMessageOnce) {
  constexpr uint64_t n = 600;
  PipelineOptions o;
  o.checkpoint_interval.messages = kEvery;
  o.capacity = 8;
  Pipeline p(o);
  // Each message carries its number, so the sink knows which one it has.
  NodeId src = p.source("n", sources::indexed({s64({}), f32({})}, [](uint64_t i) -> std::optional<Tensors> {
                          if (i >= n) return std::nullopt;
                          return Tensors{scalar(static_cast<int64_t>(i)), scalar(static_cast<float>(i))};
                        }));
  NodeId scale =
      p.stage("scale", [](Expr i, Expr x) { return tuple(i, x * 2.0f); }, {.input = {s64({}), f32({})}});
  // acc counts messages; the new accumulator value restarts it at 1000.
  NodeId count = p.stage("count", [](Expr i, Expr x, Expr acc) { return tuple(i, x, acc, acc + 1.0f); },
                         {.acc = {scalar(0.0f)}});
  p.connect(src, scale);
  p.connect(scale, count);
  std::vector<std::pair<float, float>> seen(n, {-1, -1});
  std::vector<int> times(n, 0);
  std::string refusal;
  p.connect(count, p.sink("out", [&](const Tensors& t) {
    const auto i = static_cast<size_t>(t.at(0).to_vector<int64_t>()[0]);
    seen[i] = {t.at(1).to_vector<float>()[0], t.at(2).to_vector<float>()[0]};
    ++times[i];
    if (i == 120) {
      // An incompatible swap is refused and changes nothing.
      try {
        p.update("scale",
                 {.function = trace({s64({}), f64({})}, [](Expr j, Expr x) { return tuple(j, x * 5.0); })});
      } catch (const PipelineError& e) { refusal = e.what(); }
      p.update("scale",
               {.function = trace({s64({}), f32({})}, [](Expr j, Expr x) { return tuple(j, x * 3.0f); })});
      p.update("count", {.acc = {scalar(1000.0f)}});
    }
  }));
  PipelineResult r = p.run();
  EXPECT_NE(refusal.find("update of stage 'scale'"), std::string::npos) << refusal;
  // Every message exactly once; the old version before the boundary, the new one from it.
  uint64_t boundary = 0;
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(times[i], 1) << "message " << i;
    if (boundary == 0 && i > 0 && seen[i].first == 3.0f * static_cast<float>(i)) boundary = i;
  }
  ASSERT_GT(boundary, 120u);
  EXPECT_EQ(boundary % kEvery, 0u) << "the swap happened off a barrier, at message " << boundary;
  for (uint64_t i = 0; i < n; ++i) {
    const float factor = i < boundary ? 2.0f : 3.0f;
    EXPECT_EQ(seen[i].first, factor * static_cast<float>(i)) << "message " << i;
    const float count_before =
        i < boundary ? static_cast<float>(i) : 1000.0f + static_cast<float>(i - boundary);
    EXPECT_EQ(seen[i].second, count_before) << "message " << i;
  }
  EXPECT_EQ(r.accumulators.at("count")[0].to_vector<float>()[0], 1000.0f + static_cast<float>(n - boundary));
}

TEST(LiveUpdate, IsRefusedWithoutBarriersOrForAStageThatIsNotThere) {
  Pipeline p;
  NodeId src = p.source("n", sources::list({scalar(1.0f)}));
  NodeId scale = p.stage("scale", [](Expr x) { return x * 2.0f; }, {.input = {f32({})}});
  p.connect(src, scale);
  p.connect(scale, p.sink("out", [](const Tensor&) {}));
  EXPECT_THROW(p.update("scale", {.function = trace({f32({})}, [](Expr x) { return x; })}), PipelineError);
  PipelineOptions o;
  o.checkpoint_interval.messages = 10;
  Pipeline q(o);
  q.connect(q.source("n", sources::list({scalar(1.0f)})), q.sink("out", [](const Tensor&) {}));
  EXPECT_THROW(q.update("nothing", {.acc = {scalar(1.0f)}}), PipelineError);
  EXPECT_THROW(q.update("out", {.acc = {scalar(1.0f)}}), PipelineError);
}

}  // namespace
}  // namespace sluice
