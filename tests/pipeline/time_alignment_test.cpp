// zip_by_time's alignment (pipeline/detail/time_alignment.h) against a
// search of every sample, over random clocks: rates alike and unlike,
// drift, jitter, gaps between chunks, and tolerances at and around half a
// period, where the runs the alignment computes rather than steps must
// end exactly where the search says.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <sluice/pipeline/detail/time_alignment.h>

namespace sluice {
namespace {

// A chunk of `rows` rows from `first` at `rate`, each row's values naming
// it: f32[rows, 2] (the stream's sample number, then its negation) and
// s64[rows] (the sample number).
std::shared_ptr<const Held> chunk(int64_t first, double rate, int64_t rows, int64_t& sample) {
  std::vector<float> values;
  std::vector<int64_t> numbers;
  for (int64_t r = 0; r < rows; ++r, ++sample) {
    values.insert(values.end(), {static_cast<float>(sample), -static_cast<float>(sample)});
    numbers.push_back(sample);
  }
  auto h = std::make_shared<Held>();
  h->host = {tensor(values, {rows, 2}), tensor(numbers, {rows})};
  for (const Tensor& t : h->host) h->data.push_back(static_cast<const std::byte*>(t.host_data()));
  h->rows = rows;
  h->times = RowTimes{first, row_period_ns(rate)};
  h->first = h->time(0);
  h->last = h->time(rows - 1);
  return h;
}

TEST(TimeAlignment, EveryRowTakesTheNearestSampleWithinTheToleranceAsASearchOfAllSamplesSays) {
  std::mt19937_64 rng(11);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const std::vector<double> rates = {16000, 16000 * (1 + 50e-6), 16000 * (1 - 3e-4), 8000, 44100, 1000, 1e6};
  const std::vector<Spec> specs = {f32({1, 2}), s64({1})};
  int64_t steady_rows = 0;  // rows matched with samples either side
  for (int trial = 0; trial < 200; ++trial) {
    SCOPED_TRACE(trial);
    Held ref;
    ref.rows = trial % 50 == 0 ? uniform(32768, 40000) : uniform(1, 3000);  // 32768 and more: in blocks
    const double ref_rate = rates[static_cast<size_t>(uniform(0, 6))];
    double rate = ref_rate;  // long chunks at like rates only, to keep the test short
    while (ref.rows < 32768 && uniform(0, 2) != 0 &&
           (rate == ref_rate || rate / ref_rate > 20 || ref_rate / rate > 20))
      rate = rates[static_cast<size_t>(uniform(0, 6))];
    const double period = row_period_ns(rate);
    ref.times = RowTimes{uniform(0, 1'000'000'000), row_period_ns(ref_rate)};

    // The other stream: chunks from before the reference to past it, each
    // starting about where the last left off, give or take a few periods
    // (a chunk overlapping the last is left out, as the zip holds them).
    HeldChunks held;
    std::vector<int64_t> times;  // every sample's, for the search
    int64_t sample = 0;
    const int64_t jitter = static_cast<int64_t>(period / 6);
    int64_t t = ref.times.first - uniform(0, 3000) * static_cast<int64_t>(period);
    const int64_t end = ref.times.at(ref.rows - 1) + uniform(-2000, 3000) * static_cast<int64_t>(period);
    while (t < end || held.empty()) {
      const int64_t rows = uniform(1, 2500);
      const std::shared_ptr<const Held> h = chunk(t, rate, rows, sample);
      if (held.empty() || h->first > held.back()->last) {
        held.push_back(h);
        for (int64_t j = 0; j < rows; ++j) times.push_back(h->time(j));
      } else {
        sample -= rows;
      }
      const int64_t gap = uniform(0, 4) == 0 ? uniform(1, 50) * static_cast<int64_t>(period) : 0;
      t = h->last + static_cast<int64_t>(period) + uniform(-jitter, jitter) + gap;
    }
    const int64_t half = static_cast<int64_t>(period / 2);
    const std::vector<int64_t> tolerances = {
        0, half - 2, half - 1, half, half + 1, static_cast<int64_t>(period), uniform(0, 100'000)};
    const int64_t tolerance = tolerances[static_cast<size_t>(uniform(0, 6))];

    Tensors out;
    const uint64_t matches = align_by_time(ref, held, specs, tolerance, "test", out);
    ASSERT_EQ(out.size(), 3u);
    const std::vector<float> values = out[0].to_vector<float>();
    const std::vector<int64_t> numbers = out[1].to_vector<int64_t>();
    const std::vector<bool> matched = out[2].to_vector<bool>();

    // The search (numpy's searchsorted): the nearest of the samples
    // either side of each row's time, ties to the earlier.
    uint64_t expected_matches = 0;
    for (int64_t r = 0; r < ref.rows; ++r) {
      const int64_t at = ref.time(r);
      const auto after = std::upper_bound(times.begin(), times.end(), at);
      auto best = after;
      if (after == times.end() || (after != times.begin() && at - *(after - 1) <= *after - at))
        best = after - 1;
      const int64_t number = best - times.begin();
      const bool hit = std::abs(*best - at) <= tolerance;
      const size_t i = static_cast<size_t>(r);
      ASSERT_EQ(matched[i], hit) << "row " << r;
      ASSERT_EQ(numbers[i], hit ? number : 0) << "row " << r;
      ASSERT_EQ(values[2 * i], hit ? static_cast<float>(number) : 0.f) << "row " << r;
      ASSERT_EQ(values[2 * i + 1], hit ? -static_cast<float>(number) : 0.f) << "row " << r;
      if (hit) {
        ++expected_matches;
        const bool inside = best != times.begin() && best + 1 != times.end();
        steady_rows += inside;
      }
    }
    ASSERT_EQ(matches, expected_matches);
  }
  // The trials did reach the runs: most rows matched inside a chunk.
  EXPECT_GT(steady_rows, 100'000);
}

}  // namespace
}  // namespace sluice
