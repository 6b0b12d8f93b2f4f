// A message's tags on the wire (kFlagTags; WIRE_FORMAT.md, "Tags"): every
// value type and offset round trips in frames and packed, the block's bytes
// are the documented layout, and every malformed block is refused by name.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#include <sluice/io/wire.h>
#include <sluice/ops/ops.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using test::frames_of;
using test::received;

Tags every_kind() {
  Tags t;
  t.set_time(1'700'000'000'123'456'789, "monotonic");
  t.set_sample_rate(16000.5);
  t.set("source", std::string("pump-3 ü"));  // UTF-8
  t.set("window", tensor<int16_t>({-3, 4, 5}, {3}));
  t.set("spike", int64_t{-7}, 0);
  t.set("gain", -0.25, 41);
  return t;
}

wire::Message tagged(uint64_t seq) {
  wire::Message m =
      test::data_message({test::random_tensor(f32({6, 7}), 1), test::random_tensor(s64({2}), 2)}, seq, 5);
  m.tags = every_kind();
  return m;
}

TEST(WireTags, EveryValueTypeAndOffsetRoundTripsInFramesAndPacked) {
  const wire::Message m = tagged(11);
  for (const wire::EncodeOptions& options :
       {wire::EncodeOptions{}, wire::EncodeOptions{.crc = true}, wire::EncodeOptions{.pack_below = 4096},
        wire::EncodeOptions{.crc = true, .pack_below = 4096}}) {
    std::vector<std::string> f = frames_of(m, options);
    ASSERT_EQ(f.size(), options.pack_below ? 1u : 6u) << "header, 2 per tensor, then the tags block";
    wire::Message back = wire::decode(received(f));
    EXPECT_TRUE(back.header.flags & wire::kFlagTags);
    EXPECT_EQ(back.tags, m.tags);
    ASSERT_EQ(back.tensors.size(), 2u);
    EXPECT_TRUE(test::identical(back.tensors[0], m.tensors[0]));
    EXPECT_TRUE(test::identical(back.tensors[1], m.tensors[1]));
    if (options.pack_below) {
      EXPECT_EQ(wire::packed_bytes(m, options), f[0].size()) << "the block counts in the packed size";
      std::string written(f[0].size(), '\0');
      wire::write_packed(m, options, reinterpret_cast<uint8_t*>(written.data()));
      EXPECT_EQ(written, f[0]);
    } else {
      size_t framed = 0;
      for (const std::string& frame : f) framed += frame.size();
      EXPECT_EQ(wire::unpacked_bytes(m), framed);
    }
  }
  // An update carries them the same way, after its tensors.
  wire::Message update = m;
  update.header.kind = wire::Kind::Update;
  update.target = "scale";
  std::vector<std::string> f = frames_of(update);
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(wire::decode(received(f)).tags, m.tags);
  // Untagged messages are as before: no flag, no frame.
  wire::Message plain = m;
  plain.tags = {};
  EXPECT_EQ(frames_of(plain).size(), 5u);
  EXPECT_FALSE(wire::decode(received(frames_of(plain))).header.flags & wire::kFlagTags);
}

TEST(WireTags, TheBlockIsTheDocumentedLayout) {
  Tags t;
  t.set("n", int64_t{0x0102030405060708}, 3);
  std::vector<uint8_t> block(wire::tags_block_bytes(t));
  wire::write_tags_block(t, block.data());
  const std::vector<uint8_t> expected = {'T', 'A', 'G', 'S', 1, 0, 0, 0,  // magic, u32 count
                                         1,   0,   0,   0,  // u16 key length, u8 type (integer), u8 0
                                         3,   0,   0,   0,   0, 0, 0, 0,   // i64 offset
                                         'n',                              // the key
                                         8,   7,   6,   5,   4, 3, 2, 1};  // i64 value
  EXPECT_EQ(block, expected);
  EXPECT_EQ(wire::read_tags_block(block, "test"), t);
}

// The block of `tags` with `edit` applied, read back: the error's text.
std::string refusal(const Tags& tags, const std::function<void(std::vector<uint8_t>&)>& edit) {
  std::vector<uint8_t> block(wire::tags_block_bytes(tags));
  wire::write_tags_block(tags, block.data());
  edit(block);
  try {
    wire::read_tags_block(block, "test");
  } catch (const WireError& e) { return e.what(); }
  return "accepted";
}

TEST(WireTags, EveryMalformedBlockIsRefusedNamingWhatWasWrong) {
  Tags one;
  one.set("k", std::string("text"), 2);
  auto refused = [&](const std::function<void(std::vector<uint8_t>&)>& edit, const std::string& reason) {
    const std::string what = refusal(one, edit);
    EXPECT_NE(what.find(reason), std::string::npos) << "expected '" << reason << "' in: " << what;
  };
  refused([](auto& b) { b[0] = 'X'; }, "test: tags: magic: expected 'TAGS'");
  refused([](auto& b) { b[4] = 0; }, "count: expected 1 to 256, found 0");
  refused([](auto& b) { b[5] = 2; }, "count: expected 1 to 256, found 513");
  refused([](auto& b) { b[4] = 2; }, "tag 1: expected 2 bytes, found 0 left");
  refused([](auto& b) { b[8] = 0; }, "tag 0: expected a key of 1 to 128 bytes, found 0 bytes");
  refused([](auto& b) { b[10] = 4; }, "k: expected a type of 0 to 3");
  refused([](auto& b) { b[11] = 1; }, "tag 0: expected a reserved byte of 0");
  refused(
      [](auto& b) {
        b[12] = 0xfe;
        for (size_t i = 13; i < 20; ++i) b[i] = 0xff;
      },
      "offset: expected a row (0 or more) or Tag::kWhole (-1), found -2");
  refused([](auto& b) { b[20] = ' '; }, "key: expected 1 to 128 bytes of printable ASCII");
  refused([](auto& b) { b[21] = 0xff; }, "k: expected 255 bytes, found 4 left");  // past the block
  refused([](auto& b) { b[22] = 0x10; }, "k: expected a string of at most 4096 bytes, found 4100");
  refused([](auto& b) { b[25] = 0xc3; }, "k: expected UTF-8 text, found invalid bytes");
  refused([](auto& b) { b.push_back(0); }, "block: expected nothing after the last tag, found more bytes");
  // Every prefix of a valid block is refused (a length that runs past its end).
  std::vector<uint8_t> whole(wire::tags_block_bytes(every_kind()));
  wire::write_tags_block(every_kind(), whole.data());
  for (size_t n = 0; n < whole.size(); ++n)
    EXPECT_THROW(wire::read_tags_block(std::span(whole.data(), n), "test"), WireError) << n << " bytes";
  // One key at one offset twice.
  Tags twice;
  twice.set("k", int64_t{1});
  twice.set("l", int64_t{1});
  EXPECT_NE(refusal(twice, [](auto& b) { b[41] = 'k'; }).find("expected one value per key and offset"),
            std::string::npos);
  // A tensor value whose .npy is not one.
  Tags t;
  t.set("w", tensor<float>({1, 2}));
  EXPECT_NE(refusal(t, [](auto& b) { b[25] = 'X'; }).find("tag 'w'"), std::string::npos);
}

TEST(WireTags, RandomlyDamagedBlocksAreReadOrRefusedNeverWorse) {
  std::vector<uint8_t> whole(wire::tags_block_bytes(every_kind()));
  wire::write_tags_block(every_kind(), whole.data());
  std::mt19937 random(7);
  int refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint8_t> block = whole;
    for (int k = 0, n = 1 + static_cast<int>(random() % 4); k < n; ++k)
      block[random() % block.size()] = static_cast<uint8_t>(random());
    try {
      wire::read_tags_block(block, "fuzz");
    } catch (const WireError&) { ++refused; }
  }
  EXPECT_GT(refused, 10000) << "most damage is seen";
}

TEST(WireTags, TheFlagAndTheBlockGoTogetherOnDataAndUpdatesOnly) {
  std::vector<std::string> f = frames_of(tagged(3));
  // The flag without its frame, or on a message that carries no tensors.
  std::vector<std::string> no_block(f.begin(), f.end() - 1);
  EXPECT_THROW(wire::decode(received(no_block)), WireError);
  std::vector<std::string> packed = frames_of(tagged(3), {.pack_below = 4096});
  packed[0].resize(packed[0].size() - wire::tags_block_bytes(every_kind()));
  try {
    wire::decode(received(packed), {}, "test");
    ADD_FAILURE() << "accepted";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("tags: expected a tags block (flag bit 9), found none"),
              std::string::npos)
        << e.what();
  }
  wire::Message end;
  end.header = {wire::Kind::EndOfStream, 0, 5, 4, 0, 0};
  std::vector<std::string> e = frames_of(end);
  e[0][7] = '\x02';  // bit 9
  EXPECT_THROW(wire::decode(received(e)), WireError);
  end.tags.set("k", int64_t{1});
  EXPECT_THROW(wire::encode(end), WireError) << "encode refuses what a reader would";
}

}  // namespace
}  // namespace sluice
