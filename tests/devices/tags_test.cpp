// Tags (devices/tags.h): setting and reading typed values by key and
// offset, what is refused, and how slicing and joining chunks move them.
// Expected values are worked out by hand.

#include <gtest/gtest.h>

#include <sluice/devices/tags.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

TEST(Tags, HoldOneTypedValuePerKeyAndOffsetInOffsetOrder) {
  Tags t;
  t.set("burst", int64_t{3}, 412);
  t.set_time(1'700'000'000'000'000'000, "monotonic");
  t.set_sample_rate(16000);
  t.set("source", std::string("pump-3"));
  t.set("burst", int64_t{4}, 7);
  t.set("window", tensor<float>({0.5f, 1.5f}));
  t.set("burst", int64_t{5}, 412);  // replaces the value at 412

  EXPECT_EQ(t.size(), 7u);
  EXPECT_EQ(t.time_ns(), 1'700'000'000'000'000'000);
  EXPECT_EQ(t.clock(), "monotonic");
  EXPECT_EQ(t.sample_rate(), 16000.0);
  EXPECT_EQ(t.get<std::string>("source"), "pump-3");
  EXPECT_EQ(t.get<int64_t>("burst", 412), 5);
  EXPECT_EQ(t.get<int64_t>("burst", 7), 4);
  EXPECT_EQ(t.get<int64_t>("burst"), std::nullopt);  // not about the whole chunk
  EXPECT_EQ(t.get<Tensor>("window")->to_vector<float>(), (std::vector<float>{0.5f, 1.5f}));
  EXPECT_EQ(t.get<double>("burst", 7), 4.0);  // an integer read as a float

  std::vector<std::pair<std::string, int64_t>> order;
  for (const Tag& tag : t.all()) order.emplace_back(tag.key, tag.offset);
  EXPECT_EQ(order, (std::vector<std::pair<std::string, int64_t>>{{"time_ns", -1},
                                                                 {"clock", -1},
                                                                 {"sample_rate", -1},
                                                                 {"source", -1},
                                                                 {"window", -1},
                                                                 {"burst", 7},
                                                                 {"burst", 412}}));
  EXPECT_TRUE(t.erase("burst", 7));
  EXPECT_FALSE(t.erase("burst", 7));
  EXPECT_EQ(t.size(), 6u);
}

TEST(Tags, ReadingAValueAsAnotherTypeIsATypeError) {
  Tags t;
  t.set("source", std::string("a"));
  try {
    t.get<int64_t>("source");
    FAIL() << "no error";
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "tag 'source': value: expected an integer, found a string");
  }
  EXPECT_THROW(t.get<double>("source"), TypeError);
}

TEST(Tags, RefuseWhatWouldNotStaySmallOrCannotBeRead) {
  Tags t;
  EXPECT_THROW(t.set("", int64_t{1}), ValueError);
  EXPECT_THROW(t.set("has space", int64_t{1}), ValueError);
  EXPECT_THROW(t.set(std::string(kMaxTagKeyBytes + 1, 'k'), int64_t{1}), ValueError);
  EXPECT_THROW(t.set("k", int64_t{1}, -2), ValueError);
  EXPECT_THROW(t.set("k", std::string(kMaxTagValueBytes + 1, 'x')), ValueError);
  EXPECT_THROW(t.set("k", Tensor()), ValueError);
  EXPECT_THROW(t.set("k", zeros(f32({kMaxTagValueBytes / 4 + 1}))), ValueError);
  EXPECT_THROW(t.set_sample_rate(0), ValueError);
  EXPECT_THROW(t.set_sample_rate(std::nan("")), ValueError);
  EXPECT_TRUE(t.empty());
  try {
    t.set("k", int64_t{1}, -3);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "tag 'k': offset: expected a row (0 or more) or Tag::kWhole (-1), found -3");
  }
  for (size_t i = 0; i < kMaxTags; ++i) t.set("k", int64_t{1}, static_cast<int64_t>(i));
  EXPECT_THROW(t.set("k", int64_t{1}, static_cast<int64_t>(kMaxTags)), ValueError);
  t.set("k", int64_t{2}, 0);  // a replacement is no new tag
  EXPECT_EQ(t.size(), kMaxTags);
}

TEST(Tags, ASliceKeepsItsRowsTagsAndMovesTheTimeToItsFirstRow) {
  Tags t;
  t.set_time(1'000'000'000, "monotonic");
  t.set_sample_rate(1000);  // a row a millisecond
  t.set("source", std::string("s"));
  t.set("event", int64_t{1}, 2);
  t.set("event", int64_t{2}, 5);
  t.set("event", int64_t{3}, 9);

  Tags middle = slice_tags(t, 4, 8);
  Tags expected;
  expected.set_time(1'004'000'000, "monotonic");
  expected.set_sample_rate(1000);
  expected.set("source", std::string("s"));
  expected.set("event", int64_t{2}, 1);
  EXPECT_EQ(middle, expected);

  EXPECT_EQ(slice_tags(t, 0, 10), t);
  EXPECT_EQ(slice_tags(t, 10, 10).get<int64_t>("time_ns"),
            1'010'000'000);  // past the last row: still on time

  Tags no_rate;
  no_rate.set_time(5, "monotonic");
  EXPECT_EQ(slice_tags(no_rate, 0, 3).time_ns(), 5);
  EXPECT_EQ(slice_tags(no_rate, 1, 3).time_ns(), std::nullopt);  // nobody knows when row 1 was
  EXPECT_THROW(slice_tags(t, 3, 2), ValueError);
}

TEST(Tags, JoinedChunksKeepEveryTagAtItsRow) {
  Tags a, b, c;
  a.set_time(100, "monotonic");
  a.set_sample_rate(10);
  a.set("event", int64_t{1}, 1);
  b.set_time(400'000'100, "monotonic");  // its own time: at its first row
  b.set_sample_rate(10);                 // as the first's: said once
  b.set("event", int64_t{2}, 0);
  c.set("source", std::string("late"));

  const Tags parts[] = {a, b, c};
  const int64_t rows[] = {4, 3, 2};
  Tags joined = join_tags(parts, rows);
  Tags expected;
  expected.set_time(100, "monotonic");
  expected.set_sample_rate(10);
  expected.set("event", int64_t{1}, 1);
  expected.set("time_ns", int64_t{400'000'100}, 4);
  expected.set("event", int64_t{2}, 4);
  expected.set("source", std::string("late"), 7);
  EXPECT_EQ(joined, expected);

  // Slicing what was joined gives each part's tags back (b's whole-chunk
  // time is then a tag at its first row).
  Tags b_again = slice_tags(joined, 4, 7);
  EXPECT_EQ(b_again.get<int64_t>("time_ns", 0), 400'000'100);
  EXPECT_EQ(b_again.get<int64_t>("event", 0), 2);

  const int64_t too_few[] = {4, 3};
  EXPECT_THROW(join_tags(parts, too_few), ValueError);
  const int64_t negative[] = {4, -1, 2};
  EXPECT_THROW(join_tags(parts, negative), ValueError);
}

}  // namespace
}  // namespace sluice
