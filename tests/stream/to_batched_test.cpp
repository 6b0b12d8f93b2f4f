// to_batched: Nx's semantics for exact multiples, leftovers and errors,
// and a tagged tensor's tags cut with its rows.

#include <gtest/gtest.h>

#include <sluice/stream/to_batched.h>

namespace sluice {
namespace {

Tensor rows(int64_t n) {  // s32[n][2]: row i is {10*i, 10*i + 1}
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i) {
    v.push_back(10 * i);
    v.push_back(10 * i + 1);
  }
  return tensor(v, {n, 2});
}

std::vector<std::vector<int32_t>> all(const Batches& b) {
  std::vector<std::vector<int32_t>> out;
  for (Tensor t : b) out.push_back(t.to_vector<int32_t>());
  return out;
}

TEST(ToBatched, EachBatchHasTheTagsOfItsRowsAndItsFirstRowsTime) {
  Tags t;
  t.set_time(2'000'000'000, "sensor-a");
  t.set_sample_rate(100);  // a row each 10 ms
  t.set("gain", 2.5);
  t.set("spike", int64_t{7}, 1);
  t.set("spike", int64_t{8}, 4);
  Batches b = to_batched(rows(5), t, 2, Leftover::Repeat);
  ASSERT_EQ(b.size(), 3);

  Tags first;
  first.set_time(2'000'000'000, "sensor-a");
  first.set_sample_rate(100);
  first.set("gain", 2.5);
  first.set("spike", int64_t{7}, 1);
  EXPECT_EQ(b.tags(0), first);

  Tags second;
  second.set_time(2'020'000'000, "sensor-a");
  second.set_sample_rate(100);
  second.set("gain", 2.5);
  EXPECT_EQ(b.tags(1), second);

  // Row 4, then row 0 again: its spike, then the first row's time where it wraps.
  Tags last;
  last.set_time(2'040'000'000, "sensor-a");
  last.set_sample_rate(100);
  last.set("gain", 2.5);
  last.set("spike", int64_t{8}, 0);
  last.set("time_ns", int64_t{2'000'000'000}, 1);
  EXPECT_EQ(b.tags(2), last);

  EXPECT_TRUE(to_batched(rows(4), 2).tags(1).empty());
  EXPECT_THROW(b.tags(3), ShapeError);
}

TEST(ToBatched, ATagPastTheLastRowIsRefused) {
  Tags t;
  t.set("spike", int64_t{1}, 5);
  try {
    to_batched(rows(5), t, 2);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "to_batched: tag 'spike': expected a row of s32[5][2] (below 5), found row 5");
  }
}

TEST(ToBatched, ExactMultiple) {
  Batches b = to_batched(rows(4), 2);
  EXPECT_EQ(b.size(), 2);
  EXPECT_EQ(all(b), (std::vector<std::vector<int32_t>>{{0, 1, 10, 11}, {20, 21, 30, 31}}));
  EXPECT_EQ(b[1].spec(), s32({2, 2}));
}

TEST(ToBatched, RepeatWrapsAroundToTheFirstRows) {
  Batches b = to_batched(rows(5), 2, Leftover::Repeat);
  ASSERT_EQ(b.size(), 3);
  EXPECT_EQ(all(b)[2], (std::vector<int32_t>{40, 41, 0, 1})) << "row 4, then row 0";
  for (Tensor t : b) EXPECT_EQ(t.spec(), s32({2, 2})) << "every batch has one shape";
}

TEST(ToBatched, DiscardDropsTheRemainder) {
  Batches b = to_batched(rows(5), 2, Leftover::Discard);
  EXPECT_EQ(b.size(), 2);
  EXPECT_EQ(all(b).back(), (std::vector<int32_t>{20, 21, 30, 31}));
}

TEST(ToBatched, HostBatchesAreViewsNotCopies) {
  Tensor whole = rows(6);
  Batches b = to_batched(whole, 3);
  const int32_t* base = whole.data<int32_t>().data();
  EXPECT_EQ(b[0].data<int32_t>().data(), base);
  EXPECT_EQ(b[1].data<int32_t>().data(), base + 6) << "batch 1 starts 3 rows of 2 into the tensor";
}

TEST(ToBatched, BatchesOutliveTheirTensorHandle) {
  Batches b = to_batched(rows(4), 2);
  Tensor second = b[1];
  EXPECT_EQ(second.to_vector<int32_t>()[0], 20);
}

TEST(ToBatched, RepeatWithMoreWrapThanRows) {
  // 3 rows in batches of 3 is exact; 4 rows in batches of 3: last batch is rows 3, 0, 1.
  Batches b = to_batched(rows(4), 3);
  ASSERT_EQ(b.size(), 2);
  EXPECT_EQ(all(b)[1], (std::vector<int32_t>{30, 31, 0, 1, 10, 11}));
}

TEST(ToBatched, ErrorsAsInNx) {
  EXPECT_THROW(to_batched(rows(2), 3), ShapeError) << "batch larger than the tensor";
  EXPECT_THROW(to_batched(rows(2), 0), ShapeError) << "batch size 0";
  EXPECT_THROW(to_batched(scalar(1.0f), 1), ShapeError) << "rank 0";
  try {
    to_batched(rows(2), 3);
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("found 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_batched(rows(4), 2)[2], ShapeError) << "index past the end";
}

}  // namespace
}  // namespace sluice
