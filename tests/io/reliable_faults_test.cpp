// Reliable channels under the faults that happen: two real processes
// (wire_peer), a receiver slower than its sender with a short or long
// queue, a receiver killed with SIGKILL and started again, a receiver
// stopped with SIGSTOP, a network link cut between two network namespaces.
// Every message must arrive, bit for bit, and a sender must never exit 0
// having lost one. Every wait is bounded.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <sluice/devices/shared_memory.h>
#include <sluice/io/channel.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
constexpr int64_t kLargeFloats = int64_t{1} << 22;  // 16 MiB messages

// What a receiver logged: one vector of indices per life.
std::vector<std::vector<uint64_t>> lives_in(const std::string& log) {
  std::vector<std::vector<uint64_t>> lives;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line == "life") {
      lives.emplace_back();
    } else if (!line.empty() && !lives.empty()) {
      lives.back().push_back(std::stoull(line));
    }
  }
  return lives;
}

// Waits for a receiver's bound address (wire_peer writes LOG.endpoint).
std::string endpoint_of(const std::string& log, test::Child& receiver) {
  auto deadline = std::chrono::steady_clock::now() + milliseconds(20000);
  while (std::chrono::steady_clock::now() < deadline && !receiver.exited()) {
    std::ifstream in(log + ".endpoint");
    std::string endpoint;
    if (in >> endpoint) return endpoint;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What came through a same-host ring in the receiver's life that ended
// with the stream (wire_peer writes LOG.ringed); 0 when none ended.
uint64_t ringed_in(const std::string& log) {
  std::ifstream in(log + ".ringed");
  uint64_t n = 0, last = 0;
  while (in >> n) last = n;
  return last;
}

// Every index 0..count-1 exactly once over all lives, each life in order.
void expect_all_once_in_order(const std::vector<std::vector<uint64_t>>& lives, uint64_t count) {
  std::vector<int> seen(count, 0);
  for (size_t l = 0; l < lives.size(); ++l) {
    for (size_t k = 0; k < lives[l].size(); ++k) {
      ASSERT_LT(lives[l][k], count) << "life " << l;
      if (k > 0) {
        ASSERT_EQ(lives[l][k], lives[l][k - 1] + 1) << "life " << l << ": out of order or twice";
      }
      ++seen[lives[l][k]];
    }
  }
  for (uint64_t i = 0; i < count; ++i) ASSERT_GE(seen[i], 1) << "message " << i << " never arrived";
}

struct LossCase {
  std::string transport;  // ipc or tcp
  uint64_t count;
  int64_t floats;
  int hwm;
  int sleep_us;
};

std::string name_of(const ::testing::TestParamInfo<LossCase>& info) {
  const LossCase& c = info.param;
  return c.transport + "_" + std::to_string(c.count) + "x" + (c.floats > 16 ? "16MiB" : "small") + "_hwm" +
         std::to_string(c.hwm);
}

class LossMatrix : public ::testing::TestWithParam<LossCase> {};

// The cases that lost messages before reliable channels: a sender faster
// than its receiver, which keeps a short or a long queue, and a sender that
// exits right after its last send.
TEST_P(LossMatrix, EveryMessageAndTheEndArriveInOrder) {
  const LossCase& c = GetParam();
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  const std::string bind = c.transport == "ipc" ? dir.ipc("loss") : "tcp://127.0.0.1:*";
  test::Child receiver({SLUICE_WIRE_PEER, "receive", bind, std::to_string(c.count), log,
                        "--floats=" + std::to_string(c.floats), "--hwm=" + std::to_string(c.hwm),
                        "--sleep-us=" + std::to_string(c.sleep_us)});
  const std::string endpoint = endpoint_of(log, receiver);
  ASSERT_FALSE(endpoint.empty()) << "the receiver did not bind";
  test::Child sender({SLUICE_WIRE_PEER, "produce", endpoint, std::to_string(c.count),
                      "--floats=" + std::to_string(c.floats), "--capacity=4"});
  EXPECT_EQ(sender.wait(milliseconds(120000)), 0) << "the sender failed or hung (its stderr is above)";
  EXPECT_EQ(receiver.wait(milliseconds(30000)), 0) << "the receiver did not get everything and the end of stream";
  auto lives = lives_in(log);
  ASSERT_EQ(lives.size(), 1u);
  EXPECT_EQ(lives[0].size(), c.count) << "delivered exactly once";
  expect_all_once_in_order(lives, c.count);
  // Two processes of one host, over ipc or tcp: through a ring.
  EXPECT_GT(ringed_in(log), 0u) << "no message came through the same-host ring";
}

INSTANTIATE_TEST_SUITE_P(Reliable, LossMatrix,
                         ::testing::Values(LossCase{"ipc", 2000, 16, 4, 500}, LossCase{"ipc", 2000, 16, 1000, 500},
                                           LossCase{"tcp", 2000, 16, 4, 500}, LossCase{"tcp", 2000, 16, 1000, 500},
                                           LossCase{"ipc", 50, kLargeFloats, 4, 5000},
                                           LossCase{"ipc", 50, kLargeFloats, 1000, 5000},
                                           LossCase{"tcp", 50, kLargeFloats, 4, 5000},
                                           LossCase{"tcp", 50, kLargeFloats, 1000, 5000}),
                         name_of);

// A receiver killed with SIGKILL ten times mid-stream, started again each
// time on the same address: the sender sends what was unacknowledged to
// each new one; every message is handed on at least once, none twice
// within one life, and the sender ends with 0 only once all was taken.
TEST(ReliableFaults, ReceiverKilledTenTimesLosesNothing) {
  constexpr uint64_t kCount = 3000;
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  const std::string bind = dir.ipc("killed");
  auto start_receiver = [&] {
    return std::make_unique<test::Child>(std::vector<std::string>{SLUICE_WIRE_PEER, "receive", bind,
                                                                  std::to_string(kCount), log, "--sleep-us=1000"});
  };
  auto receiver = start_receiver();
  const std::string endpoint = endpoint_of(log, *receiver);
  ASSERT_FALSE(endpoint.empty());
  test::Child sender({SLUICE_WIRE_PEER, "produce", endpoint, std::to_string(kCount), "--peer-timeout-ms=30000"});
  for (int kill = 0; kill < 10; ++kill) {
    // Killed 150 ms into its life, once it has begun it (a loaded machine
    // may take longer than that to start a process).
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(20000);
    while (lives_in(log).size() < static_cast<size_t>(kill) + 1 && std::chrono::steady_clock::now() < deadline &&
           !receiver->exited())
      std::this_thread::sleep_for(milliseconds(5));
    std::this_thread::sleep_for(milliseconds(150));
    ASSERT_FALSE(receiver->exited()) << "the receiver ended before kill " << kill;
    receiver->signal(SIGKILL);
    receiver->wait(milliseconds(5000));
    receiver = start_receiver();
  }
  EXPECT_EQ(sender.wait(milliseconds(120000)), 0) << "the sender failed or hung";
  EXPECT_EQ(receiver->wait(milliseconds(30000)), 0) << "the last receiver did not end with everything";
  auto lives = lives_in(log);
  EXPECT_EQ(lives.size(), 11u);
  expect_all_once_in_order(lives, kCount);
  EXPECT_GT(ringed_in(log), 0u) << "the last receiver took nothing through its ring";
}

// A receiver that shares the sender's memory (the same host), killed with
// SIGKILL and started again 50 times: what the sender lent each one it
// reuses once that process is gone, so the sender's shared memory in use
// stays within its credit of unacknowledged messages (and the half credit
// a live receiver may keep leased), not growing with each restart.
TEST(ReliableFaults, AReceiverRestartedFiftyTimesLeavesTheSendersSharedMemoryWithinACredit) {
  constexpr int kRestarts = 50;
  constexpr uint64_t kCount = 4000;
  constexpr int64_t kFloats = 16384;  // 64 KiB: sent as references to shared memory
  constexpr uint64_t kCredit = 32;    // messages the sender keeps unacknowledged
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  const std::string bind = dir.ipc("restarted");
  auto start_receiver = [&](int sleep_us) {
    return std::make_unique<test::Child>(std::vector<std::string>{
        SLUICE_WIRE_PEER, "receive", bind, std::to_string(kCount), log, "--floats=" + std::to_string(kFloats),
        "--sleep-us=" + std::to_string(sleep_us)});
  };
  auto receiver = start_receiver(500);
  const std::string endpoint = endpoint_of(log, *receiver);
  ASSERT_FALSE(endpoint.empty());
  const size_t before = shared_memory_stats().slots_in_use;
  Channel out(Pattern::Push, ">" + endpoint,
              {.credit_messages = kCredit, .peer_timeout = milliseconds(30000)});
  std::thread sender([&] {
    try {
      for (uint64_t i = 0; i < kCount; ++i) out.send(test::peer_message(i, kFloats), i);
      out.send_end_of_stream(kCount);
      out.flush(milliseconds(60000));
    } catch (const std::exception& e) { ADD_FAILURE() << "the sender failed: " << e.what(); }
  });
  size_t most = 0;
  for (int restart = 0; restart < kRestarts; ++restart) {
    // Killed once it has taken more than the sender's credit (so it has
    // acknowledged messages sent to the ones before it, and holds others).
    const auto deadline = std::chrono::steady_clock::now() + milliseconds(20000);
    while ((lives_in(log).size() < static_cast<size_t>(restart) + 1 ||
            lives_in(log).back().size() < kCredit + 8) &&
           std::chrono::steady_clock::now() < deadline && !receiver->exited())
      std::this_thread::sleep_for(milliseconds(2));
    ASSERT_FALSE(receiver->exited()) << "the receiver ended before restart " << restart;
    most = std::max(most, shared_memory_stats().slots_in_use - before);
    receiver->signal(SIGKILL);
    receiver->wait(milliseconds(5000));
    receiver = start_receiver(restart + 1 < kRestarts ? 500 : 0);
  }
  sender.join();
  EXPECT_EQ(receiver->wait(milliseconds(60000)), 0) << "the last receiver did not end with everything";
  most = std::max(most, shared_memory_stats().slots_in_use - before);
  // In slots of shared memory: a message is two tensors (its data and its
  // index), each copied to a slot of its own, and the sender's probe takes
  // one. Before the sender watched its receivers' processes it held what
  // each receiver acknowledged of what the dead ones before it had been
  // sent (3,201 slots here, some 1,600 messages).
  const size_t slots_per_message = test::peer_message(0, kFloats).size();
  EXPECT_LE(most, 1 + slots_per_message * (kCredit + kCredit / 2))
      << "slots of shared memory the sender held at most over " << kRestarts << " restarts";
  std::cout << "the sender held at most " << most << " slots of shared memory (" << slots_per_message
            << " a message, credit " << kCredit << " messages, " << kRestarts << " restarts)\n";
  expect_all_once_in_order(lives_in(log), kCount);
}

int64_t resident_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

// A receiver stopped with SIGSTOP for 10 s: the sender keeps no more than
// its credit meanwhile, and everything arrives after SIGCONT.
TEST(ReliableFaults, StoppedReceiverBoundsTheSenderAndGetsEverything) {
  constexpr uint64_t kCount = 40;
  constexpr int64_t kCredit = int64_t{64} << 20;
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  test::Child receiver({SLUICE_WIRE_PEER, "receive", "tcp://127.0.0.1:*", std::to_string(kCount), log,
                        "--floats=" + std::to_string(kLargeFloats)});
  const std::string endpoint = endpoint_of(log, receiver);
  ASSERT_FALSE(endpoint.empty());
  test::Child sender({SLUICE_WIRE_PEER, "produce", endpoint, std::to_string(kCount),
                      "--floats=" + std::to_string(kLargeFloats), "--capacity=2",
                      "--credit-bytes=" + std::to_string(kCredit)});
  std::this_thread::sleep_for(milliseconds(300));
  receiver.signal(SIGSTOP);
  int64_t peak = 0;
  for (int i = 0; i < 100; ++i) {  // 10 s
    std::this_thread::sleep_for(milliseconds(100));
    peak = std::max(peak, resident_kib(sender.pid()));
  }
  receiver.signal(SIGCONT);
  // Credit, what the pipeline holds (capacity 2, one being made) and the
  // process itself.
  const int64_t bound_kib = (kCredit + 4 * (kLargeFloats * 4)) / 1024 + 150 * 1024;
  EXPECT_LT(peak, bound_kib) << "the sender held more than its credit while the receiver was stopped";
  EXPECT_EQ(sender.wait(milliseconds(120000)), 0);
  EXPECT_EQ(receiver.wait(milliseconds(30000)), 0);
  expect_all_once_in_order(lives_in(log), kCount);
  EXPECT_GT(ringed_in(log), 0u) << "nothing came through the same-host ring";
}

// Past its peer_timeout the sender gives up on a stopped receiver and says
// how many messages were not delivered, with a non-zero exit.
TEST(ReliableFaults, SenderFailsWithTheCountPastItsWait) {
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  const std::string out = dir.path() + "/sender.out";
  test::Child receiver({SLUICE_WIRE_PEER, "receive", dir.ipc("stopped"), "100000", log});
  const std::string endpoint = endpoint_of(log, receiver);
  ASSERT_FALSE(endpoint.empty());
  receiver.signal(SIGSTOP);
  auto start = std::chrono::steady_clock::now();
  test::Child sender({SLUICE_WIRE_PEER, "produce", endpoint, "100000", "--peer-timeout-ms=3000"}, {}, out);
  int status = sender.wait(milliseconds(60000));
  auto took = std::chrono::steady_clock::now() - start;
  receiver.signal(SIGCONT);
  EXPECT_EQ(status, 1) << "the sender must fail";
  EXPECT_LT(took, milliseconds(30000));
  std::string said = read_file(out);
  EXPECT_NE(said.find("not delivered"), std::string::npos) << "the error names what was lost: " << said;
}

// A sender SIGKILLed mid-stream: its receiver declares it dead past its
// peer_timeout, as a sender does a silent receiver, and recv fails naming
// the stream and how much it took (it once waited for ever).
TEST(ReliableFaults, ASenderKilledMidStreamFailsItsReceiverNamingWhatItTook) {
  test::TempDir dir;
  Channel in(Pattern::Pull, dir.ipc("orphaned"), {.peer_timeout = milliseconds(1000)});
  test::Child sender({SLUICE_WIRE_PEER, "produce", in.bound_endpoint(), "100000000"});
  uint64_t taken = 0;
  while (taken < 200) {
    ASSERT_TRUE(in.recv(milliseconds(20000))) << "nothing from the sender after " << taken;
    ++taken;
  }
  sender.signal(SIGKILL);
  sender.wait(milliseconds(5000));
  const auto killed = std::chrono::steady_clock::now();
  std::string error;
  try {
    // What was on its way when it died arrives first.
    while (std::optional<wire::Message> m = in.recv(milliseconds(30000))) ++taken;
    FAIL() << "recv timed out after 30 s: the dead sender was never declared";
  } catch (const WireError& e) {
    error = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - killed;
  // Declared dead after 6 beats of 500 ms, then peer_timeout.
  EXPECT_LT(took, milliseconds(15000));
  EXPECT_GE(took, milliseconds(3000)) << "declared dead before its missed heartbeats";
  EXPECT_NE(error.find("without its end of stream"), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(taken) + " message(s) taken (seq 0.." + std::to_string(taken - 1) + ")"),
            std::string::npos)
      << "expected " << taken << " taken in: " << error;
  // Said once: the channel goes on.
  EXPECT_FALSE(in.recv(milliseconds(100)));
}

// `sluice cat`, as a user runs it, once waited silently for ever after its
// sender was killed: now it exits 1 naming what it got.
TEST(ReliableFaults, SluiceCatExitsNonZeroWhenItsSenderDiesMidStream) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("cat");
  const std::string out = dir.path() + "/cat.out";
  test::Child cat({SLUICE_CLI, "cat", endpoint, "--peer-timeout", "1"}, {}, out);
  test::Child sender({SLUICE_WIRE_PEER, "produce", endpoint, "100000000"});
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(20000);
  while (read_file(out).find("seq 100:") == std::string::npos && std::chrono::steady_clock::now() < deadline &&
         !cat.exited())
    std::this_thread::sleep_for(milliseconds(10));
  ASSERT_NE(read_file(out).find("seq 100:"), std::string::npos) << "cat printed no messages: " << read_file(out);
  sender.signal(SIGKILL);
  sender.wait(milliseconds(5000));
  EXPECT_EQ(cat.wait(milliseconds(30000)), 1) << read_file(out);
  const std::string said = read_file(out);
  EXPECT_NE(said.find("without its end of stream"), std::string::npos) << said;
  EXPECT_NE(said.find("message(s) taken"), std::string::npos) << said;
}

// Two network namespaces joined by a veth pair; the link goes down for 5 s
// mid-stream and comes back: nothing lost, nothing twice.
TEST(ReliableFaults, NetworkCutBetweenTwoHostsLosesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  const std::string tag = std::to_string(getpid() % 100000);
  const std::string a = "slc-a" + tag, b = "slc-b" + tag, va = "vslca" + tag, vb = "vslcb" + tag;
  auto sh = [](const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; };
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] {
    sh("ip netns del " + a);
    sh("ip netns del " + b);
  }};
  if (!sh("ip netns add " + a) || !sh("ip netns add " + b))
    GTEST_SKIP() << "cannot make network namespaces here (ip netns add failed)";
  ASSERT_TRUE(sh("ip link add " + va + " netns " + a + " type veth peer name " + vb + " netns " + b));
  ASSERT_TRUE(sh("ip -n " + a + " addr add 10.201.7.1/30 dev " + va));
  ASSERT_TRUE(sh("ip -n " + b + " addr add 10.201.7.2/30 dev " + vb));
  ASSERT_TRUE(sh("ip -n " + a + " link set " + va + " up") && sh("ip -n " + b + " link set " + vb + " up"));
  sh("ip -n " + a + " link set lo up");
  sh("ip -n " + b + " link set lo up");

  constexpr uint64_t kCount = 4000;
  test::TempDir dir;
  const std::string log = dir.path() + "/received";
  // Two hosts share no memory: the data crosses the link (these two
  // namespaces could, so the receiver declines it).
  test::Child receiver({"/usr/sbin/ip", "netns", "exec", b, SLUICE_WIRE_PEER, "receive",
                        "tcp://10.201.7.2:47211", std::to_string(kCount), log, "--sleep-us=2000",
                        "--shared-memory=0"});
  ASSERT_FALSE(endpoint_of(log, receiver).empty()) << "the receiver did not bind in its namespace";
  test::Child sender({"/usr/sbin/ip", "netns", "exec", a, SLUICE_WIRE_PEER, "produce", "tcp://10.201.7.2:47211",
                      std::to_string(kCount), "--peer-timeout-ms=60000"});
  std::this_thread::sleep_for(milliseconds(1500));
  ASSERT_TRUE(sh("ip -n " + a + " link set " + va + " down"));
  std::this_thread::sleep_for(milliseconds(5000));
  ASSERT_TRUE(sh("ip -n " + a + " link set " + va + " up"));
  EXPECT_EQ(sender.wait(milliseconds(120000)), 0) << "the sender failed or hung";
  EXPECT_EQ(receiver.wait(milliseconds(30000)), 0) << "the receiver did not end with everything";
  auto lives = lives_in(log);
  ASSERT_EQ(lives.size(), 1u);
  EXPECT_EQ(lives[0].size(), kCount) << "nothing twice";
  expect_all_once_in_order(lives, kCount);
  EXPECT_EQ(ringed_in(log), 0u) << "the data did not cross the link";
}

}  // namespace
}  // namespace sluice
