// The sensor monitor's pieces against independent references: its source is
// deterministic, its spectrum stage agrees with a naive DFT and a direct
// mean and variance, its detector with a hand-derived gradient and Adam step, and its
// monitor with hand-counted scores.

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include <sensor_monitor/sensor_monitor.h>

namespace sluice::sensor_monitor {
namespace {

std::vector<float> floats(const Tensor& t) { return t.to_vector<float>(); }

TEST(SensorMonitor, VibrationIsDeterministicPerSeedWithFaultsSomeOfTheTime) {
  Config c;
  c.channels = 2;
  c.seconds = 1e6;
  auto first = vibration(c), again = vibration(c);
  c.seed = 2;
  auto other = vibration(c);
  int64_t windows = 0, faults = 0;
  bool other_differs = false;
  for (int chunk = 0; chunk < 100; ++chunk) {
    Tensors a = *first->next(), b = *again->next(), o = *other->next();
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].spec(), signal_spec(c)[0]);
    EXPECT_EQ(std::memcmp(a[0].host_data(), b[0].host_data(), static_cast<size_t>(a[0].spec().bytes())), 0)
        << "chunk " << chunk << " of the same seed differs";
    EXPECT_EQ(floats(a[1]), floats(b[1])) << "labels of chunk " << chunk << " differ for the same seed";
    other_differs = other_differs || floats(a[0]) != floats(o[0]);
    for (float label : floats(a[1])) {
      EXPECT_TRUE(label == 0.0f || label == 1.0f) << "a label is 0 or 1, found " << label;
      ++windows;
      faults += label == 1.0f;
    }
  }
  EXPECT_TRUE(other_differs) << "seeds 1 and 2 gave the same signal";
  double fraction = static_cast<double>(faults) / static_cast<double>(windows);
  EXPECT_GT(fraction, 0.1) << "faults should be injected a fair part of the time";
  EXPECT_LT(fraction, 0.6) << "faults should be the exception";
}

TEST(SensorMonitor, VibrationEndsAfterItsSeconds) {
  Config c;
  c.channels = 1;
  c.seconds = 0.05;
  auto source = vibration(c);
  int chunks = 0;
  while (source->next()) ASSERT_LT(++chunks, 100000) << "the source never ended";
  EXPECT_GT(chunks, 0) << "the source should produce something in 50 ms";
}

// Log band energies of one frame by a naive DFT in double.
std::vector<double> band_energies(const float* x, const Config& c) {
  const int64_t n = c.window, bins = n / 2, per_band = bins / c.bands;
  std::vector<double> energy(static_cast<size_t>(c.bands), 0.0);
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t i = 0; i < n; ++i) {
      double w = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n));
      double angle = -2 * std::numbers::pi * static_cast<double>(k * i) / static_cast<double>(n);
      re += w * x[i] * std::cos(angle);
      im += w * x[i] * std::sin(angle);
    }
    energy[static_cast<size_t>(k / per_band)] += re * re + im * im;
  }
  for (double& e : energy) e = std::log(e + 1e-6);
  return energy;
}

TEST(SensorMonitor, SpectrumNormalisesLogBandEnergiesByEveryWindowSoFar) {
  Config c;
  c.channels = 2;
  c.window = 64;
  c.bands = 4;
  c.windows_per_chunk = 3;
  const int64_t w = c.windows_per_chunk, f = c.channels * c.bands;
  Executable spectrum = compile(spectrum_function(c));

  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Tensors acc = spectrum_acc(c);
  std::vector<std::vector<double>> energies;  // per window seen, C * B values
  for (int chunk = 0; chunk < 2; ++chunk) {
    std::vector<float> x(static_cast<size_t>(w * c.channels * c.window));
    for (float& v : x) v = normal(gen) * static_cast<float>(1 + chunk);  // the second chunk is louder
    for (int64_t win = 0; win < w; ++win) {
      std::vector<double> e;
      for (int64_t ch = 0; ch < c.channels; ++ch) {
        auto band = band_energies(&x[static_cast<size_t>((win * c.channels + ch) * c.window)], c);
        e.insert(e.end(), band.begin(), band.end());
      }
      energies.push_back(e);
    }
    Tensors args = {tensor(x, signal_spec(c)[0].shape),
                    tensor(std::vector<float>(static_cast<size_t>(w), 1.0f), Shape{w}), scalar<int64_t>(42)};
    args.insert(args.end(), acc.begin(), acc.end());
    Tensors out = spectrum.run(args);
    ASSERT_EQ(out.size(), 6u);
    acc = {out[3], out[4], out[5]};
    EXPECT_EQ(out[2].to_vector<int64_t>()[0], 42) << "born passes through";
    EXPECT_FLOAT_EQ(out[3].to_vector<float>()[0], static_cast<float>(energies.size()))
        << "count of windows so far";

    // Reference: mean and population variance over every window so far.
    std::vector<double> mean(static_cast<size_t>(f), 0), var(static_cast<size_t>(f), 0);
    for (const auto& e : energies)
      for (size_t j = 0; j < e.size(); ++j) mean[j] += e[j] / static_cast<double>(energies.size());
    for (const auto& e : energies)
      for (size_t j = 0; j < e.size(); ++j)
        var[j] += (e[j] - mean[j]) * (e[j] - mean[j]) / static_cast<double>(energies.size());
    std::vector<float> features = floats(out[0]);
    ASSERT_EQ(features.size(), static_cast<size_t>(w * f));
    for (int64_t win = 0; win < w; ++win)
      for (int64_t j = 0; j < f; ++j) {
        const auto& e = energies[energies.size() - static_cast<size_t>(w - win)];
        double want = (e[static_cast<size_t>(j)] - mean[static_cast<size_t>(j)]) /
                      std::sqrt(var[static_cast<size_t>(j)] + 1e-6);
        // f32 log energies, amplified by 1/std of a few windows.
        EXPECT_NEAR(features[static_cast<size_t>(win * f + j)], want, 2e-3)
            << "chunk " << chunk << ", window " << win << ", feature " << j;
      }
  }
}

// The detector's gradient (by value_and_grad) against the log loss's
// gradient derived by hand, x^T (p - y) / W and mean(p - y), taken through
// Adam's published rule (Kingma and Ba) in f64 here.
TEST(SensorMonitor, DetectorScoresThenTakesOneAdamStep) {
  Config c;
  c.channels = 1;
  c.bands = 3;
  c.windows_per_chunk = 4;
  c.learning_rate = 0.1f;
  const size_t w = 4, f = 3;
  Executable detector = compile(detector_function(c));
  const std::vector<float> x = {1, 0, -1, 0.5f, 2, 0, -1, 1, 1, 0, 0, -2};
  const std::vector<float> y = {1, 0, 1, 0};

  // weights then bias, with Adam's first and second moments of each.
  std::vector<double> params(f + 1, 0), m(f + 1, 0), v(f + 1, 0);
  Tensors acc = detector_acc(c);
  ASSERT_EQ(acc.size(), 7u) << "weights, bias, Adam's step count, m and v of each";
  for (int step = 1; step <= 3; ++step) {
    Tensors in{tensor(x, Shape{4, 3}), tensor(y, Shape{4}), scalar<int64_t>(7)};
    in.insert(in.end(), acc.begin(), acc.end());
    Tensors out = detector.run(in);
    std::vector<double> p(w), grad(f + 1, 0);
    for (size_t i = 0; i < w; ++i) {
      double logit = params[f];
      for (size_t j = 0; j < f; ++j) logit += x[i * f + j] * params[j];
      p[i] = 1 / (1 + std::exp(-logit));
      for (size_t j = 0; j < f; ++j) grad[j] += (p[i] - y[i]) * x[i * f + j] / w;
      grad[f] += (p[i] - y[i]) / w;
    }
    std::vector<float> scores = floats(out[0]);
    for (size_t i = 0; i < w; ++i)
      EXPECT_NEAR(scores[i], p[i], 1e-6)
          << "step " << step << ": the score of window " << i << " uses the old weights";
    EXPECT_EQ(floats(out[1]), y) << "labels pass through";
    for (size_t j = 0; j <= f; ++j) {
      m[j] = 0.9 * m[j] + 0.1 * grad[j];
      v[j] = 0.999 * v[j] + 0.001 * grad[j] * grad[j];
      const double m_hat = m[j] / (1 - std::pow(0.9, step)), v_hat = v[j] / (1 - std::pow(0.999, step));
      params[j] -= 0.1 * m_hat / (std::sqrt(v_hat) + 1e-8);
    }
    acc.assign(out.begin() + 3, out.end());
    std::vector<float> new_weights = floats(acc[0]);
    for (size_t j = 0; j < f; ++j)
      EXPECT_NEAR(new_weights[j], params[j], 1e-5) << "step " << step << ", weight " << j;
    EXPECT_NEAR(floats(acc[1])[0], params[f], 1e-5) << "step " << step << ", bias";
  }
}

TEST(SensorMonitor, MonitorJudgesTheSecondHalf) {
  Config c;
  c.windows_per_chunk = 4;
  std::ostringstream out;
  Monitor monitor(c, out, Progress::Off);
  const int64_t born = now_ns() - 2'000'000;  // made 2 ms ago
  // Chunk 0: right, right, a false alarm, right. Chunk 1: right, a miss, right, right.
  monitor.consume(0, {tensor<float>({0.9f, 0.1f, 0.6f, 0.2f}), tensor<float>({1, 0, 0, 0}), scalar(born)});
  monitor.consume(1, {tensor<float>({0.8f, 0.3f, 0.7f, 0.4f}), tensor<float>({1, 1, 1, 0}), scalar(born)});
  monitor.finish();
  Summary s = monitor.summary();
  EXPECT_EQ(s.windows, 8);
  EXPECT_EQ(s.samples, 8 * c.channels * c.window);
  EXPECT_DOUBLE_EQ(s.accuracy, 6.0 / 8);
  EXPECT_EQ(s.late_windows, 4) << "the second half is chunk 1";
  EXPECT_EQ(s.late_faults, 3);
  EXPECT_DOUBLE_EQ(s.late_accuracy, 3.0 / 4);
  EXPECT_DOUBLE_EQ(s.late_precision, 1.0) << "no false alarm in the second half";
  EXPECT_DOUBLE_EQ(s.late_recall, 2.0 / 3);
  EXPECT_GE(s.latency_p50_ms, 1.9) << "the chunks were made 2 ms before they were scored";
  EXPECT_FALSE(s.judged()) << "4 windows are too few to judge a detector by";
  EXPECT_FALSE(s.learned());
  EXPECT_TRUE(out.str().empty()) << "Progress::Off writes nothing";

  std::ostringstream table;
  print_summary(table, s, c);
  EXPECT_NE(table.str().find("precision 1.000, recall 0.667"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("too short to judge"), std::string::npos) << table.str();
}

// A second half of 100 windows, 50 faulty, of which the detector gets `wrong` wrong.
Summary judge_with_mistakes(int wrong) {
  Config c;
  c.windows_per_chunk = 100;
  std::ostringstream out;
  Monitor monitor(c, out, Progress::Off);
  std::vector<float> labels(100), scores(100);
  for (size_t i = 0; i < 100; ++i) {
    labels[i] = i < 50 ? 1.0f : 0.0f;
    scores[i] = (i < static_cast<size_t>(wrong)) == (labels[i] == 1.0f) ? 0.0f : 1.0f;
  }
  monitor.consume(0, {tensor(scores, Shape{100}), tensor(labels, Shape{100}), scalar(now_ns())});
  monitor.consume(1, {tensor(scores, Shape{100}), tensor(labels, Shape{100}), scalar(now_ns())});
  return monitor.summary();
}

TEST(SensorMonitor, TheDetectorLearnedAtNinetyPercentOverTheSecondHalf) {
  Summary pass = judge_with_mistakes(10), fail = judge_with_mistakes(11);
  EXPECT_TRUE(pass.judged()) << "100 windows, 50 of each kind";
  EXPECT_DOUBLE_EQ(pass.late_accuracy, 0.90);
  EXPECT_DOUBLE_EQ(pass.late_recall, 0.80) << "10 of 50 faults missed";
  EXPECT_TRUE(pass.learned()) << "0.90 meets the pass mark";
  EXPECT_DOUBLE_EQ(fail.late_accuracy, 0.89);
  EXPECT_FALSE(fail.learned()) << "0.89 is below the pass mark";
}

// The whole pipeline joins each scored window to the tachometer's reading
// nearest the window's start: checked against a plain search over the
// tachometer's own messages, made again alone (no machine clock: the same
// readings, stamps and losses for the seed), on their own clock.
TEST(SensorMonitor, EachWindowIsJoinedToTheTachometerReadingNearestItsStart) {
  Config c;
  c.channels = 2;
  c.chunks = 60;  // 960 windows, 61 s of the machine
  Pipeline p(pipeline_options(c));
  std::shared_ptr<Collector> out = sinks::collector();
  add_sensor_monitor(p, c, out);
  p.run();

  struct Reading {
    int64_t ns;
    float hz;
  };
  std::vector<Reading> readings;
  int64_t lost = 0, last_stamp = -1;
  const double message_ns = 1e9 * static_cast<double>(c.tachometer_rows) / c.tachometer_rate;
  for (auto t = tachometer(c); auto chunk = t->next_chunk();) {
    const int64_t stamp = *chunk->tags.time_ns();
    if (last_stamp >= 0) lost += std::llround(static_cast<double>(stamp - last_stamp) / message_ns) - 1;
    last_stamp = stamp;
    const std::vector<float> hz = chunk->tensors[0].to_vector<float>();
    for (size_t j = 0; j < hz.size(); ++j)
      readings.push_back(
          {*chunk->tags.time_ns() + row_offset_ns(static_cast<int64_t>(j), *chunk->tags.sample_rate()),
           hz[j]});
  }
  const double window_ns = 1e9 * static_cast<double>(c.window) / c.sample_rate;
  const auto tolerance = static_cast<int64_t>(c.join_tolerance_ms * 1e6);
  int64_t windows = 0, joined = 0;
  for (const Tensors& m : out->results()) {
    ASSERT_EQ(m.size(), joined_spec(c).size());
    const std::vector<float> hz = m[3].to_vector<float>();
    const std::vector<bool> matched = m[4].to_vector<bool>();
    for (size_t w = 0; w < hz.size(); ++w, ++windows) {
      const auto start = static_cast<int64_t>(std::llround(static_cast<double>(windows) * window_ns));
      const Reading* nearest = nullptr;
      for (const Reading& r : readings)
        if (!nearest || std::llabs(r.ns - start) < std::llabs(nearest->ns - start)) nearest = &r;
      const bool within = nearest && std::llabs(nearest->ns - start) <= tolerance;
      ASSERT_EQ(matched[w], within) << "window " << windows;
      EXPECT_EQ(hz[w], within ? nearest->hz : 0.0f) << "window " << windows;
      EXPECT_TRUE(!within || (hz[w] >= 19.9f && hz[w] <= 60.1f)) << "a shaft speed, found " << hz[w];
      joined += within;
    }
  }
  EXPECT_EQ(windows, c.chunks * c.windows_per_chunk);
  EXPECT_GT(lost, 0) << "some of the tachometer's messages are lost, as configured";
  EXPECT_LT(joined, windows) << "the windows in a lost message's span have no reading";
  EXPECT_GT(joined, windows * 8 / 10);
}

// The compute stages restored from a checkpoint half-way end bit-identical
// to a run straight through (the cross-process test, demo_checkpoint_test.py,
// does the same with SIGKILL).
TEST(SensorMonitor, StagesRestoredHalfWayEndBitIdentical) {
  Config c;
  c.channels = 4;
  c.chunks = 120;
  // Chunk i is the same whenever it is made: made once here, replayed from any position.
  std::vector<Tensors> chunks;
  for (auto v = vibration(c); auto t = v->next();) chunks.push_back(*t);
  auto run = [&](const std::string& dir, std::optional<uint64_t> stop_at) {
    PipelineOptions o = pipeline_options(c);
    o.checkpoint_dir = dir;
    o.checkpoint_interval.messages = 25;
    Pipeline p(o);
    NodeId detector =
        add_compute_stages(p,
                           p.source("vibration", sources::indexed(signal_spec(c),
                                                                  [&](uint64_t i) -> std::optional<Tensors> {
                                                                    if (i >= chunks.size())
                                                                      return std::nullopt;
                                                                    return chunks[i];
                                                                  })),
                           c);
    uint64_t seen = 0;
    p.connect(detector, p.sink("count", [&](const Tensors&) {
      if (stop_at && ++seen == *stop_at) p.cancel();
    }));
    p.restore();
    return p.run();
  };
  auto dir_of = [](const char* name) {
    std::string d = (std::filesystem::temp_directory_path() /
                     (std::string("sluice-sm-") + name + "-" + std::to_string(::getpid())))
                        .string();
    std::filesystem::remove_all(d);
    return d;
  };
  const std::string straight = dir_of("straight"), restored = dir_of("restored");
  PipelineResult want = run(straight, std::nullopt);
  run(restored, 70);
  PipelineResult got = run(restored, std::nullopt);
  for (const char* stage : {"spectrum", "detector"}) {
    const Tensors &a = want.accumulators.at(stage), &b = got.accumulators.at(stage);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      std::vector<uint8_t> x(static_cast<size_t>(a[i].spec().bytes())), y(x.size());
      a[i].copy_to_host(x.data());
      b[i].copy_to_host(y.data());
      EXPECT_EQ(x, y) << stage << " accumulator " << i;
    }
  }
  std::filesystem::remove_all(straight);
  std::filesystem::remove_all(restored);
}

}  // namespace
}  // namespace sluice::sensor_monitor
