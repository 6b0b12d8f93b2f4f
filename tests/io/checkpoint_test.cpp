// What checkpoints and exactly-once restarts need of channels, over real
// sockets: barriers in the stream, durable acknowledgement (finish, then
// commit) with replay to a receiver that restarts, and streams continued
// across sender sessions. Every wait is bounded.

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <sluice/io/channel.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
using test::value_of;
using test::Worker;
constexpr milliseconds kWait = test::kReceiveWait;  // every receive in these tests is bounded
wire::Message next(Channel& in, const std::string& what) { return test::next_message(in, what); }

// A receiver bound where one just closed: ZeroMQ closes a socket's
// listener in the background, and until it has, binding the ipc path again
// is refused (the channel takes it for a live process's).
std::unique_ptr<Channel> rebind(const std::string& endpoint, const ChannelOptions& options) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  for (;;) {
    try {
      return std::make_unique<Channel>(Pattern::Pull, "@" + endpoint, options);
    } catch (const WireError& e) {
      if (std::string(e.what()).find("live process") == std::string::npos ||
          std::chrono::steady_clock::now() >= deadline)
        throw;
      std::this_thread::sleep_for(milliseconds(10));
    }
  }
}

// Whether `done` becomes true within kWait.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

TEST(Barrier, TravelsInOrderBetweenDataOnAReliableChannel) {
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("barrier"));
  Channel out(Pattern::Push, ">" + dir.ipc("barrier"));
  out.send({scalar(int64_t{10})}, 0, 4);
  out.send_barrier(1, 0, 4);
  out.send({scalar(int64_t{11})}, 0, 4);
  EXPECT_TRUE(out.send_barrier(2, 0, 4, kWait)) << "the timed variant has room";
  out.send_end_of_stream(0, 4);

  wire::Message m = next(in, "data 0");
  EXPECT_EQ(m.header.kind, wire::Kind::Data);
  EXPECT_EQ(value_of(m), 10);
  m = next(in, "barrier 1");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 1u);
  EXPECT_EQ(m.header.seq, 1u) << "numbered by the channel like any message";
  EXPECT_EQ(m.header.stream_id, 4u);
  m = next(in, "data 2");
  EXPECT_EQ(value_of(m), 11);
  EXPECT_EQ(m.header.seq, 2u);
  m = next(in, "barrier 2");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 2u);
  EXPECT_EQ(next(in, "end").header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(in.recv(milliseconds(100))) << "nothing after the end (and everything taken is acknowledged)";
  out.flush(kWait);  // the barriers were acknowledged like the rest
  EXPECT_EQ(in.rejected(), 0u);
}

TEST(Barrier, ReachesPlainReceiversAndSubscribersOfItsStream) {
  Channel pull(Pattern::Pull, "@inproc://barrier-plain", {.delivery = Delivery::Plain});
  Channel push(Pattern::Push, ">inproc://barrier-plain", {.delivery = Delivery::Plain});
  push.send_barrier(5, 8, 2);
  wire::Message m = next(pull, "plain barrier");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 5u);
  EXPECT_EQ(m.header.seq, 8u) << "plain channels send the caller's seq";

  Channel pub(Pattern::Pub, "@inproc://barrier-pub");
  Channel sub(Pattern::Sub, ">inproc://barrier-pub", {.subscribe = {7}});
  ASSERT_TRUE(test::await_subscription(pub, sub, 7)) << "the subscription never took effect";
  pub.send_barrier(9, 1, 3);  // another stream: filtered out
  pub.send_barrier(9, 1, 7);
  do {
    m = next(sub, "subscribed barrier");
  } while (m.header.kind == wire::Kind::Data);  // probes still in flight
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.header.stream_id, 7u) << "a subscription takes its stream's barriers, not another's";
  EXPECT_EQ(m.checkpoint, 9u);
}

// ---- durable acknowledgement (Acknowledge::Checkpoint)

struct Credit {
  uint64_t messages;
  uint64_t bytes;
};
// The bytes of a message of one s64 scalar (packed: one frame).
uint64_t scalar_message_bytes() {
  uint64_t bytes = 0;
  for (const std::string& f :
       test::frames_of(test::data_message({scalar(int64_t{0})}, 0), {.pack_below = 4096}))
    bytes += f.size();
  return bytes;
}

ChannelOptions checkpoint_receiving(Credit credit) {
  return {.credit_messages = credit.messages,
          .credit_bytes = credit.bytes,
          .heartbeat_interval = milliseconds(100),
          .acknowledge = Acknowledge::Checkpoint};
}

class CheckpointCredit : public ::testing::TestWithParam<Credit> {};

// A credit of 4 messages (or 4 messages' bytes) on both sides and a
// receiver that finishes every message but commits only every 50th: 300
// messages flow, the sender keeping what waits for a commit beyond its
// own credit. A receiver that goes away without committing the last 50 is
// replaced by one that gets exactly those again, from the first after the
// last commit.
TEST_P(CheckpointCredit, CommitsEveryFiftyDoNotStallAndARestartedReceiverGetsWhatWasNotCommitted) {
  constexpr uint64_t kCount = 300, kEvery = 50, kLastCommit = 249;
  const Credit credit = GetParam();
  test::TempDir dir;
  const std::string endpoint = dir.ipc("checkpoint");
  auto first = std::make_unique<Channel>(Pattern::Pull, "@" + endpoint, checkpoint_receiving(credit));
  Channel out(Pattern::Push, ">" + endpoint,
              {.credit_messages = credit.messages,
               .credit_bytes = credit.bytes,
               .heartbeat_interval = milliseconds(100)});
  std::atomic<uint64_t> most_kept{0};
  Worker sender([&] {
    for (uint64_t i = 0; i < kCount; ++i) {
      if (!out.send(test::data_message({scalar(static_cast<int64_t>(i))}, i), kWait))
        throw std::runtime_error("send " + std::to_string(i) + ": no room within 5 s (stalled)");
      most_kept = std::max<uint64_t>(most_kept, out.counters().unacknowledged);
    }
    out.flush(milliseconds(20000));  // once the second receiver commits the rest
  });

  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kCount; ++i) {
    wire::Message m = next(*first, "message " + std::to_string(i));
    ASSERT_EQ(m.header.seq, i);
    ASSERT_EQ(value_of(m), static_cast<int64_t>(i));
    first->ack(m);  // finished: frees credit, acknowledges nothing
    if ((i + 1) % kEvery == 0 && i <= kLastCommit) first->commit(m.peer, m.header.seq);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(10000))
      << "300 small messages took too long";
  EXPECT_GT(most_kept.load(), 4u) << "the sender kept what waits for a commit beyond its own credit";
  EXPECT_LE(most_kept.load(), kEvery + 4) << "and no more than the credit and one checkpoint's worth";
  first.reset();  // goes away with 250..299 finished and not committed

  std::unique_ptr<Channel> restarted = rebind(endpoint, checkpoint_receiving(credit));
  Channel& second = *restarted;
  // Restored from the checkpoint of the last commit, it says where its
  // stream stands (a receiver that does not takes the stream from seq 0,
  // and reports 0..249 lost).
  second.resume_stream(0, kLastCommit + 1);
  wire::Message m = next(second, "the first message after the restart");
  EXPECT_EQ(m.header.seq, kLastCommit + 1) << "the replay starts after the last commit";
  second.commit(m.peer, 10);  // below what is acknowledged: a no-op
  for (uint64_t i = kLastCommit + 1; i < kCount; ++i) {
    if (i > kLastCommit + 1) m = next(second, "replayed message " + std::to_string(i));
    ASSERT_EQ(m.header.seq, i);
    ASSERT_EQ(value_of(m), static_cast<int64_t>(i));
    second.ack(m);
  }
  second.commit(m.peer, m.header.seq);
  EXPECT_FALSE(second.recv(milliseconds(200))) << "nothing after the replay";
  EXPECT_EQ(sender.join(), "") << "the sender's flush returns once everything is committed";
  EXPECT_EQ(out.counters().unacknowledged, 0u);
  EXPECT_GE(out.counters().resent, kCount - kLastCommit - 1) << "the uncommitted messages were sent again";
}

INSTANTIATE_TEST_SUITE_P(MessagesOrBytes, CheckpointCredit,
                         ::testing::Values(Credit{4, uint64_t{256} << 20},
                                           Credit{1000, 4 * scalar_message_bytes()}),
                         [](const auto& param_info) {
                           return param_info.param.messages == 4 ? "FourMessages" : "FourMessagesOfBytes";
                         });

// A receiver that commits through seq 49 and goes; the next one is not
// told where the stream stands (its owner's checkpoints are gone): it
// takes the stream from seq 0, finds a sender that kept only from 50, and
// says so once, naming the range, before it takes the rest.
TEST(Checkpoint, AReceiverThatCannotCoverWhatItsSenderForgotSaysWhatWasLost) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("forgot");
  const ChannelOptions receiving = checkpoint_receiving({1000, uint64_t{256} << 20});
  auto first = std::make_unique<Channel>(Pattern::Pull, "@" + endpoint, receiving);
  Channel out(Pattern::Push, ">" + endpoint, {.heartbeat_interval = milliseconds(100)});
  for (uint64_t i = 0; i < 100; ++i) out.send({scalar(static_cast<int64_t>(i))}, i);
  for (uint64_t i = 0; i < 100; ++i) {
    wire::Message m = next(*first, "message " + std::to_string(i));
    first->ack(m);
    if (i == 49) first->commit(m.peer, m.header.seq);
  }
  ASSERT_TRUE(eventually([&] { return out.counters().unacknowledged == 50; })) << "the commit never reached it";
  first.reset();

  std::unique_ptr<Channel> second = rebind(endpoint, receiving);
  try {
    second->recv(kWait);
    FAIL() << "a stream taken from seq 50 without a word";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("50 message(s) lost (seq 0..49)"), std::string::npos) << e.what();
  }
  for (int64_t i = 50; i < 100; ++i) EXPECT_EQ(value_of(next(*second, "message " + std::to_string(i))), i);
}

// An owner that learns how to acknowledge only when its run starts sets
// it before the first recv; after that it is refused.
TEST(Checkpoint, TheAcknowledgeModeIsSetBeforeTheFirstRecvOnly) {
  Channel in(Pattern::Pull, "@inproc://set-acknowledge", {.heartbeat_interval = milliseconds(100)});
  Channel out(Pattern::Push, ">inproc://set-acknowledge", {.heartbeat_interval = milliseconds(100)});
  in.set_acknowledge(Acknowledge::Checkpoint);
  out.send({scalar(1.0f)}, 0);
  wire::Message m = next(in, "the message");
  in.ack(m);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  EXPECT_THROW(out.flush(milliseconds(300)), WireError) << "finished, not committed: the sender keeps it";
  in.commit(m.peer, m.header.seq);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
  EXPECT_THROW(in.set_acknowledge(Acknowledge::Manual), WireError);
}

// Finishing is what frees credit: with nothing finished the sender's
// credit stops it; a commit is what lets it forget.
TEST(Checkpoint, FinishingFreesCreditAndOnlyACommitAcknowledges) {
  Channel in(Pattern::Pull, "@inproc://checkpoint-finish", checkpoint_receiving({4, uint64_t{1} << 20}));
  Channel out(Pattern::Push, ">inproc://checkpoint-finish",
              {.credit_messages = 4, .heartbeat_interval = milliseconds(100)});
  std::atomic<uint64_t> sent{0};
  Worker sender([&] {
    for (uint64_t i = 0; i < 8; ++i, ++sent) out.send({scalar(static_cast<int64_t>(i))}, i);
  });
  std::vector<wire::Message> taken;
  for (int i = 0; i < 4; ++i) taken.push_back(next(in, "message " + std::to_string(i)));
  EXPECT_FALSE(in.recv(milliseconds(300))) << "four taken and none finished: the credit is used up";
  EXPECT_LE(sent.load(), 5u) << "the sender keeps its own credit's worth and waits";
  for (const wire::Message& m : taken) in.ack(m);
  for (int i = 4; i < 8; ++i) taken.push_back(next(in, "message " + std::to_string(i)));
  for (int i = 4; i < 8; ++i) in.ack(taken[static_cast<size_t>(i)]);
  EXPECT_EQ(sender.join(), "");
  EXPECT_FALSE(in.recv(milliseconds(100)));
  EXPECT_EQ(out.counters().unacknowledged, 8u) << "finished, not committed: the sender keeps all";
  std::function<void(uint64_t, uint64_t)> commit = in.committer();
  commit(taken[5].peer, 5);
  EXPECT_FALSE(in.recv(milliseconds(100)));  // sends the commit
  EXPECT_TRUE(eventually([&] { return out.counters().unacknowledged == 2; }))
      << "a commit of 5 lets the sender forget 0..5; it keeps " << out.counters().unacknowledged;
  in.commit(taken[7].peer, 7);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
}

TEST(Checkpoint, CommitsNeedACheckpointingReceiverAndHandlesOutliveTheChannel) {
  Channel manual(Pattern::Pull, "@inproc://checkpoint-manual", {.acknowledge = Acknowledge::Manual});
  EXPECT_THROW(manual.commit(1, 1), WireError) << "a Manual receiver's acks acknowledge already";
  EXPECT_THROW(manual.committer(), WireError);
  Channel plain(Pattern::Pull, "@inproc://checkpoint-plain", {.delivery = Delivery::Plain});
  EXPECT_NO_THROW(plain.commit(1, 1)) << "a no-op, as ack is";
  std::function<void(uint64_t, uint64_t)> commit;
  {
    Channel in(Pattern::Pull, "@inproc://checkpoint-gone", checkpoint_receiving({4, 1024}));
    commit = in.committer();
  }
  EXPECT_NO_THROW(commit(1, 1)) << "a committer outliving its channel does nothing";
}

// ---- streams continued across sessions (continue_streams, resume_stream, first_seq)

ChannelOptions sending(uint64_t first_seq = 0) {
  return {.heartbeat_interval = milliseconds(100), .first_seq = first_seq};
}

// Sends values first..last-1 as data messages of stream 7, then (when
// `end`) the end of stream.
void send_values(Channel& out, int64_t first, int64_t last, bool end) {
  for (int64_t v = first; v < last; ++v) out.send({scalar(v)}, 0, 7);
  if (end) out.send_end_of_stream(0, 7);
}

// A sender restarted: session A of stream 7 sends 0..9, the receiver takes
// them, A goes away; session B of stream 7, restored to seq 5, sends 5..14
// and the end. The receiver takes 0..14 once each and counts B's 5..9 as
// duplicates, which it acknowledges (B's flush returns).
TEST(ContinueStreams, ASecondSessionOfAStreamGoesOnWhereTheFirstStopped) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("continued");
  Channel in(Pattern::Pull, "@" + endpoint,
             {.heartbeat_interval = milliseconds(100), .continue_streams = true});
  {
    Channel a(Pattern::Push, ">" + endpoint, sending());
    send_values(a, 0, 10, /*end=*/false);
    for (uint64_t i = 0; i < 10; ++i) {
      wire::Message m = next(in, "session A's message " + std::to_string(i));
      ASSERT_EQ(m.header.seq, i);
      ASSERT_EQ(value_of(m), static_cast<int64_t>(i));
    }
    EXPECT_FALSE(in.recv(milliseconds(100)));  // acknowledges A's last
    a.flush(kWait);
  }
  Channel b(Pattern::Push, ">" + endpoint, sending(/*first_seq=*/5));
  send_values(b, 5, 15, /*end=*/true);
  for (uint64_t i = 10; i < 15; ++i) {
    wire::Message m = next(in, "session B's message " + std::to_string(i));
    ASSERT_EQ(m.header.seq, i) << "B's 5..9 were taken from A";
    ASSERT_EQ(value_of(m), static_cast<int64_t>(i));
  }
  wire::Message end = next(in, "the end of stream");
  EXPECT_EQ(end.header.kind, wire::Kind::EndOfStream);
  EXPECT_EQ(end.header.seq, 15u);
  EXPECT_FALSE(in.recv(milliseconds(100))) << "nothing twice";
  EXPECT_EQ(in.counters().duplicates, 5u);
  b.flush(kWait);  // the duplicates were acknowledged with the rest
}

// The same when the receiver meets B before B's first message names its
// stream (a sender's first heartbeat cannot: it learns its stream id from
// its first message), as a restored process that starts slowly does.
TEST(ContinueStreams, ASessionMetBeforeItNamesItsStreamStillGoesOn) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("continued-late");
  Channel in(Pattern::Pull, "@" + endpoint,
             {.heartbeat_interval = milliseconds(100), .continue_streams = true});
  {
    Channel a(Pattern::Push, ">" + endpoint, sending());
    send_values(a, 0, 10, /*end=*/false);
    for (uint64_t i = 0; i < 10; ++i) ASSERT_EQ(next(in, "session A's message").header.seq, i);
    EXPECT_FALSE(in.recv(milliseconds(100)));
    a.flush(kWait);
  }
  Channel b(Pattern::Push, ">" + endpoint, sending(/*first_seq=*/5));
  EXPECT_FALSE(in.recv(milliseconds(300))) << "B's heartbeat only";
  send_values(b, 5, 15, /*end=*/true);
  for (uint64_t i = 10; i < 15; ++i) {
    wire::Message m = next(in, "session B's message " + std::to_string(i));
    ASSERT_EQ(m.header.seq, i) << "B's 5..9 were taken from A";
    ASSERT_EQ(value_of(m), static_cast<int64_t>(i));
  }
  EXPECT_EQ(next(in, "the end of stream").header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(in.recv(milliseconds(100))) << "nothing twice";
  EXPECT_EQ(in.counters().duplicates, 5u);
  b.flush(kWait);
}

// Without continue_streams each session is a stream of its own, as
// before: B's messages from its first seq on are all taken.
TEST(ContinueStreams, OffEachSessionIsTakenFromItsOldestMessage) {
  Channel in(Pattern::Pull, "@inproc://not-continued", {.heartbeat_interval = milliseconds(100)});
  {
    Channel a(Pattern::Push, ">inproc://not-continued", sending());
    send_values(a, 0, 3, /*end=*/false);
    for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(next(in, "A's message").header.seq, i);
    EXPECT_FALSE(in.recv(milliseconds(100)));
    a.flush(kWait);
  }
  Channel b(Pattern::Push, ">inproc://not-continued", sending(/*first_seq=*/1));
  send_values(b, 1, 3, /*end=*/true);
  wire::Message m = next(in, "B's first message");
  EXPECT_EQ(m.header.seq, 1u) << "numbered from first_seq and taken: B is a stream of its own";
  EXPECT_EQ(value_of(m), 1);
  EXPECT_EQ(next(in, "B's second").header.seq, 2u);
  EXPECT_EQ(next(in, "B's end").header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  EXPECT_EQ(in.counters().duplicates, 0u);
  b.flush(kWait);
}

class ResumeStream : public ::testing::TestWithParam<Acknowledge> {};

// A receiver restored from a checkpoint that says stream 7 stood at 6,
// facing a sender that still keeps 0..9 (its receiver took them and went
// away without acknowledging): it gets 6 first, and the sender forgets
// 0..5 as they come again.
TEST_P(ResumeStream, ARestoredReceiverTakesAStreamFromWhereItsCheckpointSays) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("resumed");
  Channel out(Pattern::Push, ">" + endpoint, sending());
  {
    Channel lost(Pattern::Pull, "@" + endpoint,
                 {.heartbeat_interval = milliseconds(100), .acknowledge = Acknowledge::Manual});
    send_values(out, 0, 10, /*end=*/true);
    for (uint64_t i = 0; i < 10; ++i) ASSERT_EQ(next(lost, "the lost receiver's message").header.seq, i);
  }  // nothing acknowledged
  ChannelOptions options{.heartbeat_interval = milliseconds(100), .acknowledge = GetParam()};
  std::unique_ptr<Channel> restored = rebind(endpoint, options);
  restored->resume_stream(7, 6);
  wire::Message m = next(*restored, "the first message after the restart");
  EXPECT_EQ(m.header.seq, 6u) << "0..5 are in the checkpoint: dropped";
  EXPECT_EQ(value_of(m), 6);
  for (uint64_t i = 7; i <= 10; ++i) {
    if (GetParam() == Acknowledge::Checkpoint) restored->ack(m);
    m = next(*restored, "message " + std::to_string(i));
    EXPECT_EQ(m.header.seq, i);
  }
  EXPECT_EQ(m.header.kind, wire::Kind::EndOfStream);
  if (GetParam() == Acknowledge::Checkpoint) restored->commit(m.peer, m.header.seq);
  EXPECT_FALSE(restored->recv(milliseconds(100)));
  EXPECT_EQ(restored->counters().duplicates, 6u);
  out.flush(kWait);  // 0..5 acknowledged as duplicates, 6..10 as taken
}

INSTANTIATE_TEST_SUITE_P(AcknowledgeModes, ResumeStream,
                         ::testing::Values(Acknowledge::OnNextRecv, Acknowledge::Checkpoint),
                         [](const auto& param_info) {
                           return param_info.param == Acknowledge::Checkpoint ? "Checkpoint" : "OnNextRecv";
                         });

// resume_stream on a receiver that already takes from a sender of the
// stream: what lies between is dropped and acknowledged.
TEST(ResumeStreamLive, MovesASessionAlreadyMetForward) {
  Channel in(Pattern::Pull, "@inproc://resume-live", {.heartbeat_interval = milliseconds(100)});
  Channel out(Pattern::Push, ">inproc://resume-live", sending());
  send_values(out, 0, 10, /*end=*/true);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(next(in, "message").header.seq, i);
  in.resume_stream(7, 6);
  EXPECT_EQ(next(in, "the message after the resume").header.seq, 6u);
  EXPECT_EQ(in.counters().duplicates, 3u) << "3, 4 and 5, dropped";
  for (uint64_t i = 7; i <= 10; ++i) EXPECT_EQ(next(in, "message").header.seq, i);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
  Channel plain(Pattern::Pull, "@inproc://resume-plain", {.delivery = Delivery::Plain});
  EXPECT_THROW(plain.resume_stream(7, 6), WireError) << "a plain channel cannot drop what it took before";
}

// ---- aligned barriers across senders (a stage fed by several processes)

// Complete checkpoints in `dir`.
size_t checkpoints_in(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    n += e.path().filename().string().starts_with("chk-");
  return n;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Two senders, each an upstream pipeline placing barriers on its own
// (every 100 and every 70 messages, at different paces), feed one stage
// in another process that stores checkpoints. That process is killed with
// SIGKILL mid-stream and started again: it restores from its checkpoint,
// whose cut holds each stream up to its barrier (aligned: a sender whose
// barrier came waits for the other's), and the senders replay the rest.
// Every message counts once: the sums are the fault-free ones. (Barriers
// of several senders were once not taken at all, so no checkpoint held.)
TEST(AlignedBarriers, TwoSendersOneStageKilledAndRestoredCountEveryMessageOnce) {
  constexpr int64_t kCount = 3000;
  test::TempDir dir;
  const std::string endpoint = dir.ipc("aligned"), store = dir.path() + "/checkpoints";
  const std::string out = dir.path() + "/sums", log = dir.path() + "/receiver.log";
  auto receiver = [&] {
    return std::make_unique<test::Child>(
        std::vector<std::string>{SLUICE_WIRE_PEER, "aligned-sum", endpoint, store, out, "--sleep-us=300"},
        std::vector<std::string>{}, log);
  };
  auto first = receiver();
  auto sender = [&](int64_t stream, int64_t every, std::chrono::microseconds pace) {
    return Worker([&, stream, every, pace] {
      Channel c(Pattern::Push, ">" + endpoint, {.peer_timeout = milliseconds(60000)});
      int64_t barrier = 0;
      for (int64_t i = 0; i < kCount; ++i) {
        if (i > 0 && i % every == 0) c.send_barrier(static_cast<uint64_t>(++barrier), 0, stream);
        c.send({scalar(stream), scalar(i)}, 0, stream);
        std::this_thread::sleep_for(pace);
      }
      c.send_end_of_stream(0, stream);
      c.flush(milliseconds(60000));
    });
  };
  Worker a = sender(1, 100, std::chrono::microseconds(200));
  Worker b = sender(2, 70, std::chrono::microseconds(350));
  ASSERT_TRUE(eventually([&] { return checkpoints_in(store) >= 3 || first->exited(); }))
      << "no three checkpoints stored: " << file_text(log);
  ASSERT_FALSE(first->exited()) << "the receiver ended before it was killed: " << file_text(log);
  first->signal(SIGKILL);
  first->wait(milliseconds(5000));
  auto second = receiver();
  EXPECT_EQ(a.join(), "") << "sender 1";
  EXPECT_EQ(b.join(), "") << "sender 2";
  ASSERT_EQ(second->wait(milliseconds(60000)), 0) << file_text(log);
  const std::string said = file_text(log);
  const size_t at = said.rfind("resumed ");
  ASSERT_NE(at, std::string::npos) << said;
  EXPECT_GT(std::stoll(said.substr(at + 8)), 0) << "the second life did not resume from a checkpoint: " << said;
  int64_t count = 0, sum = 0, squares = 0;
  std::istringstream(file_text(out)) >> count >> sum >> squares;
  EXPECT_EQ(count, 2 * kCount);
  EXPECT_EQ(sum, 2 * (kCount * (kCount - 1) / 2));
  EXPECT_EQ(squares, 2 * ((kCount - 1) * kCount * (2 * kCount - 1) / 6));
}

}  // namespace
}  // namespace sluice
