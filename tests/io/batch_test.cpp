// Coalescing (WIRE_FORMAT.md, "Batches"): a reliable sender packs small
// messages sent close together into one frame; the receiver splits it.
// The batch frame's layout and every malformed class, then channels over
// ipc and tcp: bursts coalesced and whole, a zero delay and spaced
// messages never coalesced, and a malformed batch from a raw peer rejected
// while its stream goes on.

#include <gtest/gtest.h>
#include <algorithm>

#include <cstring>
#include <thread>

#include <zmq.hpp>

#include <sluice/io/channel.h>
#include <sluice/io/wire.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kWait{5000};  // every receive in these tests is bounded

// A batch frame of `messages` (each one frame), as a sender writes it.
std::vector<uint8_t> batch_of(const std::vector<std::vector<uint8_t>>& messages, uint64_t first_seq = 0) {
  size_t bytes = wire::kHeaderBytes;
  for (const auto& m : messages) bytes += wire::batch_entry_bytes(m.size());
  std::vector<uint8_t> frame(bytes);
  wire::write_header({wire::Kind::Batch, 0, 7, first_seq, static_cast<uint32_t>(messages.size()), 0},
                     frame.data());
  uint8_t* out = frame.data() + wire::kHeaderBytes;
  for (const auto& m : messages) {
    std::copy(m.begin(), m.end(), wire::begin_batch_entry(m.size(), out));
    out += wire::batch_entry_bytes(m.size());
  }
  return frame;
}

// One frame of a packed data message holding value, value + 1 (and value
// + 2 when `three`: 4 bytes short of a multiple of 8).
std::vector<uint8_t> packed_message(float value, uint64_t seq, bool three = false) {
  wire::Message m;
  m.header = {wire::Kind::Data, 0, 7, seq, 0, 0};
  m.tensors = {three ? tensor<float>({value, value + 1, value + 2}) : tensor<float>({value, value + 1})};
  const std::vector<wire::Frame> frames = wire::encode(m, {.pack_below = 4096});
  EXPECT_EQ(frames.size(), 1u);
  const auto* bytes = static_cast<const uint8_t*>(frames[0].data);
  return {bytes, bytes + frames[0].size};
}

std::vector<uint8_t> end_of_stream(uint64_t seq) {
  wire::Message m;
  m.header = {wire::Kind::EndOfStream, 0, 7, seq, 0, 0};
  const std::vector<wire::Frame> frames = wire::encode(m);
  const auto* bytes = static_cast<const uint8_t*>(frames[0].data);
  return {bytes, bytes + frames[0].size};
}

TEST(Batches, SplitGivesEachMessageItsFrameInOrder) {
  const std::vector<std::vector<uint8_t>> messages = {packed_message(1, 3), end_of_stream(4),
                                                      packed_message(5, 5)};
  const std::vector<uint8_t> frame = batch_of(messages, 3);
  const std::vector<wire::Bytes> entries = wire::split_batch(frame, "test");
  ASSERT_EQ(entries.size(), 3u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(std::vector<uint8_t>(entries[i].begin(), entries[i].end()), messages[i]) << "message " << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(entries[i].data()) % 8,
              reinterpret_cast<uintptr_t>(frame.data()) % 8)
        << "each message as aligned as the frame";
  }
  // Each entry is a message of its own, read as one.
  wire::Message first = wire::decode({{entries[0], nullptr}});
  EXPECT_EQ(first.header.seq, 3u);
  EXPECT_EQ(first.tensors.at(0).to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(wire::decode({{entries[1], nullptr}}).header.kind, wire::Kind::EndOfStream);
}

TEST(Batches, ParseRefusesABatchAsOneMessage) {
  const std::vector<uint8_t> frame = batch_of({packed_message(1, 0)});
  const wire::Bytes view = frame;
  EXPECT_THROW(
      {
        try {
          wire::parse({&view, 1}, {}, "test");
        } catch (const WireError& e) {
          EXPECT_NE(std::string(e.what()).find("a batch"), std::string::npos) << e.what();
          throw;
        }
      },
      WireError);
}

TEST(Batches, RejectsEveryMalformedBatchNamingWhatWasWrong) {
  const std::vector<uint8_t> good = batch_of({packed_message(1, 0, true), packed_message(2, 1)});
  struct Case {
    std::string name, expect;
    std::vector<uint8_t> frame;
  };
  std::vector<Case> cases;
  auto with = [&](const std::string& name, const std::string& expect, auto change) {
    std::vector<uint8_t> f = good;
    change(f);
    cases.push_back({name, expect, f});
  };
  auto put32 = [](std::vector<uint8_t>& f, size_t at, uint32_t v) { std::memcpy(f.data() + at, &v, 4); };
  const size_t first_length = wire::kHeaderBytes;
  const size_t first_entry = wire::batch_entry_bytes(packed_message(1, 0, true).size());
  with("count 0", "message count", [&](auto& f) { put32(f, 24, 0); });
  with("a count beyond what the bytes hold", "message count", [&](auto& f) { put32(f, 24, 1000000); });
  with("one message fewer than counted", "message count", [&](auto& f) { put32(f, 24, 3); });
  with("one message more than counted", "size", [&](auto& f) { put32(f, 24, 1); });
  with("a length past the end", "message 0", [&](auto& f) { put32(f, first_length, 100000); });
  with("a length below a header", "message 0", [&](auto& f) { put32(f, first_length, 8); });
  with("a reserved word not 0", "reserved", [&](auto& f) { put32(f, first_length + 4, 1); });
  with("padding not 0", "padding", [&](auto& f) {
    const size_t length = packed_message(1, 0, true).size();
    ASSERT_NE(length % 8, 0u) << "the test message needs padding";
    f[first_length + wire::kBatchEntryHeaderBytes + length] = 1;
  });
  with("cut inside a message", "message 1",
       [&](auto& f) { f.resize(wire::kHeaderBytes + first_entry + 20); });
  with("not a batch", "kind", [&](auto& f) { f[5] = static_cast<uint8_t>(wire::Kind::Data); });
  for (const Case& c : cases) {
    try {
      wire::split_batch(c.frame, "test");
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

// Coalescing is for edges between hosts, which share no memory: this
// receiver declines it, or its messages would take a same-host ring.
class CoalescingOver : public ::testing::TestWithParam<std::string> {
 protected:
  static ChannelOptions between_hosts() { return {.shared_memory = false}; }
  std::string bind_address() {
    static int counter = 0;
    if (GetParam() == "ipc") return "@" + dir_.ipc("batch-" + std::to_string(counter++));
    return "@tcp://127.0.0.1:*";
  }
  test::TempDir dir_;
};

// A burst of `count` small messages, then the end of stream; the receiver
// takes every one in order. The sender's counters after it.
ChannelCounters send_burst(Channel& pull, Channel& push, uint64_t count) {
  std::thread sender([&] {
    for (uint64_t i = 0; i < count; ++i) push.send({scalar(static_cast<int64_t>(i))}, i, 3);
    push.send_end_of_stream(count, 3);
    push.flush(kWait);
  });
  for (uint64_t i = 0; i < count; ++i) {
    std::optional<wire::Message> m = pull.recv(kWait);
    if (!m) {
      ADD_FAILURE() << "message " << i << " did not arrive";
      break;
    }
    EXPECT_EQ(m->tensors.at(0).to_vector<int64_t>()[0], static_cast<int64_t>(i)) << "in order";
  }
  std::optional<wire::Message> end = pull.recv(kWait);
  EXPECT_TRUE(end && end->header.kind == wire::Kind::EndOfStream);
  EXPECT_FALSE(pull.recv(milliseconds(50))) << "nothing after the end";
  sender.join();
  EXPECT_EQ(pull.counters().duplicates, 0u);
  return push.counters();
}

TEST_P(CoalescingOver, ABurstOfSmallMessagesTravelsInBatchesAndArrivesWholeInOrder) {
  Channel pull(Pattern::Pull, bind_address(), between_hosts());
  Channel push(Pattern::Push, ">" + pull.bound_endpoint());
  constexpr uint64_t kCount = 20000;
  const ChannelCounters sent = send_burst(pull, push, kCount);
  // Sent as fast as a loop goes, nearly all wait for company: a burst that
  // went one message a frame would count 0.
  EXPECT_GT(sent.coalesced, kCount / 2) << "of " << kCount;
  EXPECT_EQ(sent.unacknowledged, 0u);
}

TEST_P(CoalescingOver, AZeroDelaySendsEveryMessageAlone) {
  Channel pull(Pattern::Pull, bind_address(), between_hosts());
  Channel push(Pattern::Push, ">" + pull.bound_endpoint(), {.coalesce_delay = std::chrono::microseconds(0)});
  EXPECT_EQ(send_burst(pull, push, 2000).coalesced, 0u);
}

TEST_P(CoalescingOver, MessagesFurtherApartThanTheDelayGoAtOnceAndAlone) {
  Channel pull(Pattern::Pull, bind_address(), between_hosts());
  Channel push(Pattern::Push, ">" + pull.bound_endpoint());
  for (uint64_t i = 0; i < 20; ++i) {
    push.send({scalar(static_cast<int64_t>(i))}, i);
    std::optional<wire::Message> m = pull.recv(kWait);
    ASSERT_TRUE(m) << "message " << i;
    EXPECT_EQ(m->tensors.at(0).to_vector<int64_t>()[0], static_cast<int64_t>(i));
    std::this_thread::sleep_for(milliseconds(1));  // 20 times the default coalesce_delay
  }
  EXPECT_EQ(push.counters().coalesced, 0u) << "a message after a quiet spell waits for nothing";
  // Everything acknowledged and confirmed, so that neither end lingers.
  pull.keep_alive();
  push.flush(kWait);
  EXPECT_FALSE(pull.recv(milliseconds(20)));
}

// A packed message is written straight into its batch (or its lone frame):
// messages whose frames are no multiple of 8 bytes (three floats), with two
// tensors and tags, keep every byte, padding or not, in or out of a batch.
TEST_P(CoalescingOver, PackedMessagesOfAnySizeAndTagsKeepTheirBytesInBatches) {
  Channel pull(Pattern::Pull, bind_address(), between_hosts());
  Channel push(Pattern::Push, ">" + pull.bound_endpoint());
  constexpr int kCount = 3000;
  auto values = [](int i) {
    const float f = static_cast<float>(i);
    return std::vector<float>{f, f + 0.5f, f + 0.25f};
  };
  std::thread sender([&] {
    for (int i = 0; i < kCount; ++i) {
      wire::Message m;
      m.header = {wire::Kind::Data, 0, 0, static_cast<uint64_t>(i), 0, 0};
      m.tensors = {tensor(values(i), Shape{3}), scalar(static_cast<int32_t>(-i))};
      if (i % 3 == 0) m.tags.set_time(1000 * int64_t{i}, "machine");
      push.send(m);
    }
    push.send_end_of_stream(kCount);
    push.flush(kWait);
  });
  for (int i = 0; i < kCount; ++i) {
    std::optional<wire::Message> m = pull.recv(kWait);
    if (!m || m->tensors.size() != 2) {
      ADD_FAILURE() << "message " << i << (m ? " holds other than two tensors" : " did not arrive");
      break;
    }
    EXPECT_EQ(m->tensors[0].to_vector<float>(), values(i)) << "message " << i;
    EXPECT_EQ(m->tensors[1].to_vector<int32_t>()[0], -i) << "message " << i;
    EXPECT_EQ(m->tags.time_ns(), i % 3 == 0 ? std::optional<int64_t>(1000 * int64_t{i}) : std::nullopt)
        << "message " << i;
  }
  std::optional<wire::Message> end = pull.recv(kWait);
  EXPECT_TRUE(end && end->header.kind == wire::Kind::EndOfStream);
  EXPECT_FALSE(pull.recv(milliseconds(50))) << "nothing after the end";  // and the end acknowledged
  sender.join();
  EXPECT_GT(push.counters().coalesced, static_cast<uint64_t>(kCount / 2)) << "of " << kCount;
}

INSTANTIATE_TEST_SUITE_P(Transports, CoalescingOver, ::testing::Values("ipc", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(Batches, AReceiverSaysItTakesBatchesAndAMalformedOneTakesItsPlacesWhileTheStreamGoesOn) {
  test::TempDir dir;
  Channel pull(Pattern::Pull, "@" + dir.ipc("raw-batch"));
  // A raw DEALER speaking the reliable protocol as a sender (WIRE_FORMAT.md,
  // "Reliable mode"): its routing id, a heartbeat, then batches.
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  const uint64_t session = 0x5eed0fba7c4e5001;
  std::string id(9, '\0');
  id[0] = 'S';
  for (size_t i = 0; i < 8; ++i) id[1 + i] = static_cast<char>(session >> (8 * i));
  dealer.set(zmq::sockopt::routing_id, id);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, static_cast<int>(kWait.count()));
  dealer.connect(pull.bound_endpoint());
  auto send = [&](const std::vector<uint8_t>& frame) { ASSERT_TRUE(dealer.send(zmq::buffer(frame))); };

  wire::Message hello;
  hello.header = {wire::Kind::Heartbeat, 0, 7, 0, 0, 0};
  hello.control.session = session;
  const std::vector<wire::Frame> hello_frames = wire::encode(hello);
  const auto* hello_bytes = static_cast<const uint8_t*>(hello_frames[0].data);
  send({hello_bytes, hello_bytes + hello_frames[0].size});
  EXPECT_FALSE(pull.recv(milliseconds(200))) << "a heartbeat is not for the owner";
  zmq::message_t reply;
  ASSERT_TRUE(dealer.recv(reply)) << "the receiver answers a heartbeat with its record";
  const wire::Header record =
      wire::read_header({static_cast<const uint8_t*>(reply.data()), reply.size()}, "test", true);
  EXPECT_TRUE(wire::is_control(record.kind));
  EXPECT_NE(record.flags & wire::kFlagTakesBatches, 0) << "its records say it takes batches";

  // Seqs 0 and 1, counted as two messages but holding one: rejected, and
  // their places taken (a sender would otherwise send them again for ever).
  std::vector<uint8_t> malformed = batch_of({packed_message(1, 0)}, 0);
  const uint32_t two = 2;
  std::memcpy(malformed.data() + 24, &two, 4);
  send(malformed);
  send(batch_of({packed_message(10, 2), packed_message(20, 3)}, 2));
  for (float expected : {10.f, 20.f}) {
    std::optional<wire::Message> m = pull.recv(kWait);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->tensors.at(0).to_vector<float>()[0], expected);
    EXPECT_EQ(m->peer, session);
  }
  EXPECT_EQ(pull.rejected(), 1u);
  EXPECT_NE(pull.last_rejection().find("message count"), std::string::npos) << pull.last_rejection();
}

}  // namespace
}  // namespace sluice
