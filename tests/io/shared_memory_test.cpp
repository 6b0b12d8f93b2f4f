// Tensors shared between processes of one host: to_pointer / from_pointer
// across two processes, channels that send shared-memory references, and
// what SIGKILL leaves behind (nothing). In one process:
// tests/devices/tensor_pointer_test.cpp.

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include <sluice/devices/shared_memory.h>
#include <sluice/io/channel.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

// The first line `file` holds, once a process wrote it whole.
std::string first_line(const std::string& file, milliseconds limit = milliseconds(20000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (auto end = text.find('\n'); end != std::string::npos) return text.substr(0, end);
    std::this_thread::sleep_for(milliseconds(10));
  }
  throw std::runtime_error("no line in " + file + " within the limit");
}

// Processes that map a sluice shared-memory segment now.
std::set<pid_t> processes_mapping_shared_memory() {
  std::set<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream maps(entry.path() / "maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find("/memfd:sluice") != std::string::npos) {
        out.insert(static_cast<pid_t>(std::stol(name)));
        break;
      }
  }
  return out;
}

// Whether process `pid` maps the file with inode `inode` (a segment).
bool maps_inode(pid_t pid, ino_t inode) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  const std::string field = " " + std::to_string(inode) + " ";
  while (std::getline(maps, line))
    if (line.find(field) != std::string::npos && line.find("/memfd:sluice") != std::string::npos) return true;
  return false;
}

std::set<std::string> dev_shm() {
  std::set<std::string> out;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ignored)) out.insert(entry.path());
  return out;
}

bool all_bytes(const Tensor& t, uint8_t value) {
  const auto* p = static_cast<const uint8_t*>(t.host_data());
  for (int64_t i = 0; i < t.spec().bytes(); ++i)
    if (p[i] != value) return false;
  return true;
}

TEST(SharedMemoryProcesses, EveryDtypeAndRankOpensInAnotherProcessWithoutACopy) {
  test::TempDir dir;
  const std::vector<Spec> specs = test::round_trip_specs();
  std::vector<Tensor> tensors;
  {
    std::ofstream handles(dir.path() + "/handles");
    for (size_t i = 0; i < specs.size(); ++i) {
      tensors.push_back(test::random_tensor(specs[i], 21).to_shared());
      handles << i << " " << tensors.back().to_pointer({.mode = PointerMode::Ipc, .require_shared = true}).handle
              << "\n";
    }
  }
  // The other process checks each view: the bits, and that it is this
  // process's memfd mapped read-only there (the same memory, not a copy;
  // no write of its reaches this process).
  test::Child peer({SLUICE_WIRE_PEER, "shm-open", dir.path() + "/handles", "21"}, {}, dir.path() + "/out");
  ASSERT_EQ(peer.wait(milliseconds(60000)), 0) << first_line(dir.path() + "/out", milliseconds(0));
  EXPECT_EQ(first_line(dir.path() + "/out"), "mapped " + std::to_string(specs.size()));
}

TEST(SharedMemoryProcesses, AHandleOfAnotherUsersMemoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run a process as another user";
  test::TempDir dir;
  test::Child owner({SLUICE_WIRE_PEER, "shm-serve", "10", "1", "--uid=65534"}, {}, dir.path() + "/out");
  const std::string handle = first_line(dir.path() + "/out");
  try {
    from_pointer({.mode = PointerMode::Ipc, .handle = handle}, test::round_trip_specs()[10]);
    FAIL() << "another user's memory was mapped";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("owner: expected this process's user"), std::string::npos) << e.what();
  }
}

TEST(SharedMemoryProcesses, ATensorOutlivesItsOwnerKilledAndNothingIsLeft) {
  const std::set<std::string> shm_before = dev_shm();
  test::TempDir dir;
  const Spec spec = test::round_trip_specs()[20];
  pid_t owner_pid;
  ino_t segment = 0;
  {
    test::Child owner({SLUICE_WIRE_PEER, "shm-serve", "20", "5"}, {}, dir.path() + "/out");
    owner_pid = owner.pid();
    const std::string handle = first_line(dir.path() + "/out");
    Tensor t = from_pointer({.mode = PointerMode::Ipc, .handle = handle}, spec);
    const SharedHandle h = SharedHandle::parse(handle);
    struct stat st {};
    ASSERT_EQ(::stat(("/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd)).c_str(), &st), 0);
    segment = st.st_ino;
    EXPECT_TRUE(maps_inode(::getpid(), segment));
    owner.signal(SIGKILL);
    ASSERT_EQ(owner.wait(milliseconds(10000)), 128 + SIGKILL);
    // Mapped here, the memory stays whole; once let go, the handle names nothing.
    EXPECT_TRUE(test::identical(t, test::random_tensor(spec, 5)));
    t = Tensor();
    try {
      from_pointer({.mode = PointerMode::Ipc, .handle = handle}, spec);
      FAIL() << "a handle of a dead process was opened";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("gone"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(processes_mapping_shared_memory().count(owner_pid), 0u);
  EXPECT_FALSE(maps_inode(::getpid(), segment)) << "the last tensor gone, its segment is unmapped";
  EXPECT_EQ(dev_shm(), shm_before) << "nothing in /dev/shm";
}

// ---------------------------------------------------------------- channels

struct Pair {
  test::TempDir dir;
  Channel in, out;
  Pair(ChannelOptions receiving = {}, ChannelOptions sending = {})
      : in(Pattern::Pull, "@" + dir.ipc("shared"), receiving), out(Pattern::Push, ">" + dir.ipc("shared"), sending) {}
};

// A sender on a thread of its own; the receiver keeps acknowledging (a
// receiver acknowledges inside its calls) until the sender is done.
class Sending {
 public:
  explicit Sending(std::function<void()> body)
      : worker_([this, body = std::move(body)] {
          struct Done {
            std::atomic<bool>& done;
            ~Done() { done = true; }
          } mark{done_};
          body();
        }) {}
  std::string finish(Channel& in) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done_ && std::chrono::steady_clock::now() < deadline) {
      in.keep_alive();
      std::this_thread::sleep_for(milliseconds(5));
    }
    return worker_.join();
  }

 private:
  std::atomic<bool> done_{false};
  test::Worker worker_;
};

std::vector<Tensor> message(uint64_t i, bool shared) {
  std::vector<Tensor> m = test::peer_message(i, 4096);
  if (shared) m[0] = m[0].to_shared();
  return m;
}

TEST(SharedChannel, SendsReferencesAndTheReceiverReadsInPlace) {
  Pair c;
  constexpr uint64_t kCount = 200;
  std::vector<std::vector<Tensor>> sent;
  Sending sender([&] {
    for (uint64_t i = 0; i < kCount; ++i) {
      sent.push_back(message(i, i % 2 == 0));  // half in shared memory already, half copied into it
      c.out.send(sent.back(), i);
    }
    c.out.send_end_of_stream(kCount);
    c.out.flush(milliseconds(20000));
  });
  std::vector<Tensor> kept;
  for (uint64_t i = 0; i < kCount; ++i) {
    wire::Message m = test::next_message(c.in, "message " + std::to_string(i));
    ASSERT_TRUE(m.shared) << "message " << i << " came as frames";
    ASSERT_TRUE(test::identical(m.tensors[0], test::peer_message(i, 4096)[0])) << "message " << i;
    ASSERT_EQ(m.tensors[1].data<int64_t>()[0], static_cast<int64_t>(i));
    if (i == 10) kept = m.tensors;
  }
  EXPECT_EQ(test::next_message(c.in, "end").header.kind, wire::Kind::EndOfStream);
  ASSERT_EQ(sender.finish(c.in), "");
  EXPECT_EQ(c.out.counters().shared, kCount);
  EXPECT_EQ(c.in.counters().shared, kCount);
  // The receiver's tensor views the sender's memory, read-only: the
  // sender's write shows there, and the receiver cannot write back.
  EXPECT_EQ(test::mapping_of(kept[0].to_pointer().address).rfind("r--s /memfd:sluice", 0), 0u)
      << test::mapping_of(kept[0].to_pointer().address);
  EXPECT_TRUE(kept[0].buffer()->read_only);
  std::memset(const_cast<void*>(sent[10][0].host_data()), 0xA5, static_cast<size_t>(sent[10][0].spec().bytes()));
  EXPECT_TRUE(all_bytes(kept[0], 0xA5));
}

TEST(SharedChannel, AReceiverThatDeclinesGetsFrames) {
  ChannelOptions no;
  no.shared_memory = false;
  for (int side = 0; side < 2; ++side) {
    Pair c(side == 0 ? no : ChannelOptions{}, side == 1 ? no : ChannelOptions{});
    Sending sender([&] {
      for (uint64_t i = 0; i < 20; ++i) c.out.send(message(i, true), i);
      c.out.flush(milliseconds(20000));
    });
    for (uint64_t i = 0; i < 20; ++i) {
      wire::Message m = test::next_message(c.in, "message " + std::to_string(i));
      EXPECT_FALSE(m.shared);
      EXPECT_TRUE(test::identical(m.tensors[0], test::peer_message(i, 4096)[0]));
    }
    ASSERT_EQ(sender.finish(c.in), "");
    EXPECT_EQ(c.in.counters().shared, 0u);
  }
}

TEST(SharedChannel, ASlowReceiverHoldsTheSenderToItsCreditAndNothingIsOverwritten) {
  ChannelOptions o;
  o.credit_messages = 8;
  Pair c(o, o);
  auto send = [&](uint64_t i) {
    wire::Message m;
    m.tensors = message(i, false);
    return c.out.send(m, milliseconds(300));
  };
  // The two meet and agree to share; the receiver keeps every tensor it takes.
  std::vector<std::vector<Tensor>> kept;
  uint64_t sent = 0;
  for (bool shared = false; !shared && sent < 20; ++sent) {
    ASSERT_TRUE(send(sent));
    wire::Message m = test::next_message(c.in, "message " + std::to_string(sent));
    shared = m.shared;
    kept.push_back(m.tensors);
  }
  ASSERT_LT(sent, 20u) << "no message came as shared-memory references";
  // It stops taking: the sender keeps its credit's worth, then waits.
  while (sent < 100 && send(sent)) ++sent;
  EXPECT_EQ(c.out.counters().unacknowledged, 8u) << "the sender went past its credit";
  // It takes again, and keeps all: the first ones view the sender's memory
  // (leases), later ones are copies, and the sender goes on.
  Sending sender([&] {
    for (uint64_t i = sent; i < 64; ++i) c.out.send(message(i, false), i);
    c.out.flush(milliseconds(20000));
  });
  for (uint64_t i = kept.size(); i < 64; ++i)
    kept.push_back(test::next_message(c.in, "message " + std::to_string(i)).tensors);
  ASSERT_EQ(sender.finish(c.in), "");
  const ChannelCounters got = c.in.counters();
  EXPECT_GT(got.shared, 0u);
  // Every one kept: half the credit (4) as leases, the others copied, and counted.
  EXPECT_GT(got.copied, 0u);
  EXPECT_LE(got.copied, got.shared);
  EXPECT_GE(got.copied + 4, got.shared) << "more leases held than half the credit";
  for (uint64_t i = 0; i < 64; ++i)
    EXPECT_TRUE(test::identical(kept[i][0], test::peer_message(i, 4096)[0])) << "message " << i << " overwritten";
}

// Keeping a message's small tensor (a chunk's seq or labels, passed on by a
// stage) holds none of the sender's memory: it is copied out at receipt,
// while the large tensor beside it is read in place. Held as a view, each
// would keep its whole message's memory leased, and past half the credit
// the receiver would copy every large tensor after.
TEST(SharedChannel, AKeptSmallTensorHoldsNoneOfItsMessagesMemory) {
  ChannelOptions o;
  o.credit_messages = 8;  // leases: at most 4
  Pair c(o, o);
  constexpr uint64_t kCount = 64;
  Sending sender([&] {
    for (uint64_t i = 0; i < kCount; ++i) c.out.send(message(i, i % 2 == 0), i);
    c.out.flush(milliseconds(20000));
  });
  std::vector<Tensor> seqs;
  uint64_t viewed = 0;
  for (uint64_t i = 0; i < kCount; ++i) {
    wire::Message m = test::next_message(c.in, "message " + std::to_string(i));
    ASSERT_TRUE(test::identical(m.tensors[0], test::peer_message(i, 4096)[0])) << "message " << i;
    if (m.shared && m.tensors[0].buffer()->read_only) ++viewed;
    EXPECT_FALSE(m.tensors[1].buffer()->read_only)
        << "message " << i << ": its seq views the sender's memory";
    seqs.push_back(m.tensors[1]);
  }
  ASSERT_EQ(sender.finish(c.in), "");
  EXPECT_GT(viewed, kCount / 2) << "the large tensors did not come as references";
  // Held as views, the kept seqs would hold every message's lease, and all
  // but the first 4 large tensors would be copied. A few copies can happen
  // anyway: a sender's heartbeat makes the receiver take everything its
  // ring holds at once (up to the credit, 8), leasing past half of it.
  EXPECT_LE(c.in.counters().copied, 8u) << "the kept seqs held leases, and large tensors were copied";
  for (uint64_t i = 0; i < kCount; ++i) EXPECT_EQ(seqs[i].data<int64_t>()[0], static_cast<int64_t>(i));
}

// A receiver that takes messages, keeps their tensors and closes its channel
// without acknowledging them: a new receiver is sent them again and lets
// go at once, and the sender goes on, its slots reused; never those the
// first one still views.
TEST(SharedChannel, TensorsKeptPastTheirChannelAreNeverOverwritten) {
  test::TempDir dir;
  ChannelOptions manual;
  manual.acknowledge = Acknowledge::Manual;
  manual.credit_messages = 16;
  ChannelOptions sending;
  sending.credit_messages = 16;
  Channel out(Pattern::Push, ">" + dir.ipc("kept"), sending);
  std::vector<std::vector<Tensor>> kept;
  {
    Channel first(Pattern::Pull, "@" + dir.ipc("kept"), manual);
    for (uint64_t i = 0; i < 5; ++i) out.send(message(i, false), i);
    for (uint64_t i = 0; i < 5; ++i) {
      wire::Message m = test::next_message(first, "message " + std::to_string(i));
      ASSERT_TRUE(m.shared);
      kept.push_back(m.tensors);
    }
  }  // closed, nothing acknowledged, the tensors kept
  Channel second(Pattern::Pull, "@" + dir.ipc("kept"));
  Sending sender([&] {
    for (uint64_t i = 5; i < 200; ++i) out.send(message(i, false), i);
    out.flush(milliseconds(20000));
  });
  for (uint64_t i = 0; i < 200; ++i) {
    wire::Message m = test::next_message(second, "message " + std::to_string(i));
    ASSERT_TRUE(test::identical(m.tensors[0], test::peer_message(i, 4096)[0])) << "message " << i;
  }
  ASSERT_EQ(sender.finish(second), "");
  for (uint64_t i = 0; i < 5; ++i)
    EXPECT_TRUE(test::identical(kept[i][0], test::peer_message(i, 4096)[0])) << "message " << i << " overwritten";
}

TEST(SharedChannel, TheSenderKilledMidStreamLeavesReceivedTensorsWhole) {
  const std::set<std::string> shm_before = dev_shm();
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("killed"));
  pid_t sender_pid;
  std::vector<Tensor> kept;
  {
    test::Child sender({SLUICE_WIRE_PEER, "shm-send", dir.ipc("killed"), "1000000", "--floats=65536"}, {},
                       dir.path() + "/out");
    sender_pid = sender.pid();
    for (int i = 0; i < 50; ++i) {
      wire::Message m = test::next_message(in, "message " + std::to_string(i));
      ASSERT_TRUE(m.shared);
      if (i == 3) kept = m.tensors;
    }
    sender.signal(SIGKILL);
    ASSERT_EQ(sender.wait(milliseconds(10000)), 128 + SIGKILL);
  }
  // What was queued before the kill is taken, or refused when its memory went with the sender.
  while (auto m = in.recv(milliseconds(500))) {
  }
  EXPECT_TRUE(test::identical(kept[0], test::peer_message(3, 65536)[0]));
  EXPECT_EQ(processes_mapping_shared_memory().count(sender_pid), 0u);
  EXPECT_EQ(dev_shm(), shm_before);
}

TEST(SharedChannel, TheReceiverKilledMidStreamFailsTheSenderClearly) {
  const std::set<std::string> shm_before = dev_shm();
  test::TempDir dir;
  ChannelOptions o;
  o.peer_timeout = milliseconds(2000);
  o.heartbeat_interval = milliseconds(100);
  o.credit_messages = 64;
  Channel out(Pattern::Push, ">" + dir.ipc("killed"), o);
  pid_t receiver_pid;
  {
    test::Child receiver({SLUICE_WIRE_PEER, "receive", dir.ipc("killed"), "100000", dir.path() + "/log",
                          "--floats=65536", "--sleep-us=2000"});
    receiver_pid = receiver.pid();
    for (uint64_t i = 0; i < 50; ++i) {
      std::vector<Tensor> m = test::peer_message(i, 65536);
      m[0] = m[0].to_shared();
      out.send(m, i);
    }
    // Killed once it has taken some, mid-stream.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      std::ifstream log(dir.path() + "/log");
      const auto lines = std::count(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>(), '\n');
      if (lines > 10) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the receiver took nothing";
      std::this_thread::sleep_for(milliseconds(5));
    }
    receiver.signal(SIGKILL);
    ASSERT_EQ(receiver.wait(milliseconds(10000)), 128 + SIGKILL);
  }
  try {
    for (uint64_t i = 50; i < 100000; ++i) out.send(test::peer_message(i, 65536), i);
    out.flush(milliseconds(20000));
    FAIL() << "the sender did not notice its receiver was gone";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("not delivered"), std::string::npos) << e.what();
  }
  EXPECT_GT(out.counters().shared, 0u);
  EXPECT_EQ(processes_mapping_shared_memory().count(receiver_pid), 0u);
  EXPECT_EQ(dev_shm(), shm_before);
}

TEST(SharedChannel, APythonConsumerReadsInPlaceWhatFramesWouldCarry) {
  const std::string python = test::python_with_numpy_and_zmq();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  std::string digest[2];
  for (int shared = 0; shared < 2; ++shared) {
    test::TempDir dir;
    test::Child consumer({python, SLUICE_SOURCE_DIR "/tests/io/interop.py", "consume-shared", dir.ipc("py"),
                          "300", std::to_string(shared)},
                         {"PYTHONPATH=" SLUICE_SOURCE_DIR "/python"}, dir.path() + "/digest");
    test::Child sender({SLUICE_WIRE_PEER, "shm-send", dir.ipc("py"), "300", "--floats=16384"}, {},
                       dir.path() + "/sent");
    ASSERT_EQ(sender.wait(milliseconds(60000)), 0) << first_line(dir.path() + "/sent", milliseconds(0));
    ASSERT_EQ(consumer.wait(milliseconds(60000)), 0) << "the Python consumer failed (its stderr is above)";
    EXPECT_EQ(first_line(dir.path() + "/sent"), shared ? "shared 300" : "shared 0");
    digest[shared] = first_line(dir.path() + "/digest");
  }
  EXPECT_EQ(digest[0], digest[1]) << "the arrays read in place differ from those copied in frames";
}

}  // namespace
}  // namespace sluice
