// Same-host rings (io/detail/shared_ring.h, WIRE_FORMAT.md "Rings"): the
// two ends over many wraps, a full ring and the flags that wake each side,
// every malformed ring refused by name; then channels: messages through the
// ring in order, a message too large for it named there in its place, and
// an idle receiver asleep and woken.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <sluice/devices/shared_memory.h>
#include <sluice/io/channel.h>
#include <sluice/io/detail/shared_ring.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using channel_detail::Doorbell;
using channel_detail::RingEntry;
using channel_detail::RingHeader;
using channel_detail::RingReader;
using channel_detail::RingWriter;
using std::chrono::milliseconds;

const std::string kWhere = "test";
constexpr uint64_t kReceiver = 0x5eed;
const uint64_t kPid = static_cast<uint64_t>(::getpid());  // the receiver's process: this one

// A message of `frames` frames, frame f holding `bytes + f` bytes of `seed + f`.
struct Written {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<wire::Frame> frames() const {
    std::vector<wire::Frame> out;
    for (const auto& b : bytes) out.push_back({b.data(), b.size(), nullptr});
    return out;
  }
};
Written message(size_t frames, size_t bytes, uint8_t seed) {
  Written w;
  for (size_t f = 0; f < frames; ++f) w.bytes.emplace_back(bytes + f, static_cast<uint8_t>(seed + f));
  return w;
}

void expect_same(const RingReader::Entry& e, const Written& w, const std::string& what) {
  ASSERT_EQ(e.frames().size(), w.bytes.size()) << what;
  uint64_t bytes = 0;
  for (size_t f = 0; f < w.bytes.size(); ++f) {
    const wire::Bytes got = e.frames()[f].bytes;
    EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), w.bytes[f]) << what << ", frame " << f;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data()) % 8, 0u) << what << ": frames start 8-byte aligned";
    bytes += w.bytes[f].size();
  }
  EXPECT_EQ(e.bytes, bytes) << what;
}

TEST(Rings, EntriesComeOutWholeAndInOrderOverManyWraps) {
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  EXPECT_FALSE(reader.next(map_shared));
  // Sizes that do not divide the ring, so that entries meet its end at
  // every offset; up to a quarter of it.
  size_t sent = 0, taken = 0;
  std::shared_ptr<void> kept;
  std::vector<Written> in_flight;
  for (int round = 0; round < 400; ++round) {
    const Written w = message(1 + round % 4, (round * 37) % 200, static_cast<uint8_t>(round));
    // Written two at a time before they are read: wraps with entries in the ring.
    ASSERT_TRUE(writer.write(w.frames(), kept)) << "round " << round;
    in_flight.push_back(w);
    ++sent;
    if (round % 2 == 1) {
      EXPECT_FALSE(writer.publish()) << "nobody sleeps";
      while (std::optional<RingReader::Entry> e = reader.next(map_shared)) {
        expect_same(*e, in_flight.front(), "entry " + std::to_string(taken));
        in_flight.erase(in_flight.begin());
        ++taken;
      }
      reader.release();
    }
  }
  EXPECT_EQ(taken, sent);
  EXPECT_FALSE(kept) << "no message was too large for the ring";
  EXPECT_FALSE(reader.next(map_shared)) << "everything written was taken";
}

TEST(Rings, AFullRingWaitsAndTheReaderSaysWhenItMadeRoom) {
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  const Written w = message(1, 1000, 1);  // 1016 bytes an entry: four fill the ring
  std::shared_ptr<void> kept;
  int written = 0;
  while (writer.write(w.frames(), kept)) ++written;
  EXPECT_EQ(written, 4);
  writer.publish();
  ASSERT_TRUE(reader.next(map_shared));
  EXPECT_FALSE(writer.write(w.frames(), kept)) << "the room is the writer's once released";
  reader.release();
  EXPECT_TRUE(reader.writer_waits()) << "the writer found no room: it is told when there is some";
  EXPECT_FALSE(reader.writer_waits()) << "told once";
  EXPECT_TRUE(writer.write(w.frames(), kept));
}

// A message larger than a quarter of the ring is written into a block of
// the sender's shared memory, which the entry names; read in its place.
TEST(Rings, AMessageTooLargeForTheRingIsReadFromTheSendersMemoryInItsPlace) {
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  const Written small = message(2, 10, 1), large = message(3, 5000, 7);
  std::shared_ptr<void> none, block;
  ASSERT_TRUE(writer.write(small.frames(), none));
  ASSERT_TRUE(writer.write(large.frames(), block));
  ASSERT_TRUE(block) << "the large one is kept in shared memory until acknowledged";
  EXPECT_TRUE(find_shared(block.get(), 1));
  ASSERT_TRUE(writer.write(small.frames(), none));
  EXPECT_FALSE(none);
  writer.publish();
  for (const Written* w : {&small, &large, &small}) {
    std::optional<RingReader::Entry> e = reader.next(map_shared);
    ASSERT_TRUE(e);
    expect_same(*e, *w, "entry of " + std::to_string(w->bytes[0].size()) + " bytes");
  }
  EXPECT_FALSE(reader.next(map_shared));
}

TEST(Rings, ASleepingReaderIsToldToWakeAndSleepsOnlyWhenNothingCame) {
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  std::shared_ptr<void> kept;
  ASSERT_TRUE(reader.sleep());
  ASSERT_TRUE(writer.write(message(1, 8, 0).frames(), kept));
  EXPECT_TRUE(writer.publish()) << "the reader sleeps: the writer must wake it";
  EXPECT_FALSE(writer.publish()) << "woken once, not for every entry";
  EXPECT_FALSE(reader.sleep()) << "an entry is there: no sleep";
  ASSERT_TRUE(reader.next(map_shared));
  EXPECT_TRUE(reader.sleep());
  reader.wake();
  ASSERT_TRUE(writer.write(message(1, 8, 0).frames(), kept));
  EXPECT_FALSE(writer.publish()) << "awake: no doorbell";
}

// The records lane, the other way: a record goes there only while a writer
// reads it there, comes out whole and in order, finds no room in a full
// lane (the socket then), and says when the writer sleeps on its socket.
TEST(Rings, RecordsComeBackThroughTheirLaneOnlyWhileTheWriterTakesThem) {
  using Record = RingReader::Record;
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  const Written record = message(1, 100, 3);
  EXPECT_EQ(reader.write_record(record.frames()), Record::NotWritten) << "no writer takes records yet";
  {
    RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
    EXPECT_FALSE(writer.next_record());
    int written = 0;
    while (reader.write_record(message(1, 4000, 1).frames()) == Record::Written) ++written;
    EXPECT_EQ(written, 16) << "a full lane (64 KiB) takes no more: the record goes on the socket";
    ASSERT_TRUE(writer.next_record());
    EXPECT_EQ(reader.write_record(record.frames()), Record::Written) << "room again once one is taken";
    while (writer.next_record()) {}
    for (int round = 0; round < 3000; ++round) {
      const Written r = message(1 + round % 3, (round * 53) % 700, static_cast<uint8_t>(round));
      ASSERT_EQ(reader.write_record(r.frames()), Record::Written) << "round " << round;
      std::optional<RingEntry> e = writer.next_record();
      ASSERT_TRUE(e) << "round " << round;
      expect_same(*e, r, "record " + std::to_string(round));
    }
    ASSERT_TRUE(writer.sleep());
    EXPECT_EQ(reader.write_record(record.frames()), Record::ToASleeper) << "asleep: the socket wakes it";
    EXPECT_EQ(reader.write_record(record.frames()), Record::Written) << "woken once, not for every record";
    writer.wake();
    EXPECT_FALSE(writer.sleep()) << "a record is there: no sleep";
    ASSERT_TRUE(writer.next_record());
    ASSERT_TRUE(writer.next_record());
    EXPECT_EQ(reader.write_record(record.frames()), Record::Written) << "awake";
  }
  EXPECT_EQ(reader.write_record(record.frames()), Record::NotWritten) << "its writer let the ring go";
}

// The other process's side of a ring, written as a broken or hostile peer would.
struct Forged {
  SharedFile file;
  RingHeader* header;
  uint8_t* entries;
  explicit Forged(const SharedHandle& h)
      : file(SharedFile::open(h)),
        header(reinterpret_cast<RingHeader*>(file.data())),
        entries(file.data() + 4096) {}
  void entry(uint64_t at, const std::vector<uint32_t>& words, uint64_t published) {
    if (!words.empty()) std::memcpy(entries + at, words.data(), 4 * words.size());
    header->written.store(published);
  }
  // At the records lane's start, after the data lane's entries.
  void record(const std::vector<uint32_t>& words, uint64_t published) {
    if (!words.empty()) std::memcpy(entries + header->capacity, words.data(), 4 * words.size());
    header->records_written.store(published);
  }
};

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

// A writer wakes a sleeping reader through its doorbell pipe, opened in the
// reader's process; a header naming another process, or a descriptor there
// that is no pipe, gives it none (it rings the socket instead).
TEST(Rings, TheWriterRingsTheReadersDoorbellPipeAndOnlyThat) {
  Doorbell bell;
  RingReader reader(4096, kReceiver, &bell, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  EXPECT_FALSE(readable(bell.read_fd()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(writer.ring_doorbell());
  EXPECT_TRUE(readable(bell.read_fd()));
  bell.drain();
  EXPECT_FALSE(readable(bell.read_fd())) << "drained: the next poll sleeps";

  RingWriter elsewhere(reader.handle(), kReceiver, kPid + 1, kWhere);
  EXPECT_FALSE(elsewhere.ring_doorbell()) << "the header names a process other than the receiver's";

  test::TempDir dir;
  const std::string path = dir.path() + "/not-a-pipe";
  const int file = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  Forged forged(reader.handle());
  forged.header->doorbell_fd = static_cast<uint32_t>(file);
  RingWriter into_a_file(reader.handle(), kReceiver, kPid, kWhere);
  EXPECT_FALSE(into_a_file.ring_doorbell()) << "the header names a file, not a pipe";
  struct stat st {};
  ASSERT_EQ(::fstat(file, &st), 0);
  EXPECT_EQ(st.st_size, 0) << "nothing written into it";
  ::close(file);
}

// A receiver killed while asleep leaves its doorbell pipe with no reader of
// its own; the writer rings it at the next message. Writing into a pipe
// without readers raises SIGPIPE, whose default action killed the sender's
// process (the demo's source, once its compute process was killed), so the
// writer holds a read end of the pipe: ringing fills it and says so.
TEST(Rings, RingingTheDoorbellOfAReceiverThatDiedDoesNotKillTheWriter) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto bell = std::make_unique<Doorbell>();
        RingReader reader(4096, kReceiver, bell.get(), kWhere);
        RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
        bell.reset();  // the receiver's ends closed, as its death closes them
        bool rang = true;
        for (int i = 0; i < 100000; ++i) rang = rang && writer.ring_doorbell();  // past a full pipe
        std::exit(rang ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

// Words written at a lane's start, then `published` bytes said written;
// what the refusal says.
struct ForgedCase {
  std::string name;
  std::vector<uint32_t> words;
  uint64_t published;
  std::string says;
};

TEST(Rings, TheReaderRefusesWhatIsNoEntryNamingIt) {
  const std::vector<ForgedCase> cases = {
      {"an index past the ring", {}, 8192, "sender's index"},
      {"an index below what was read", {}, UINT64_MAX, "sender's index"},
      {"half an entry header", {8}, 4, "bytes published"},
      {"bytes not a multiple of 8", {12, 1, 4}, 24, "entry bytes"},
      {"an entry past what is published", {64, 1, 56}, 16, "entry bytes"},
      {"no frames", {8, 0, 0, 0}, 16, "reference entry"},
      {"a reference to no block", {40, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 48, "block"},
      {"more frames than bytes", {8, 1000}, 16, "frame count"},
      {"frames that do not fill it", {24, 1, 4}, 32, "frame sizes"},
      {"a frame past its end", {16, 1, 100}, 24, "frame sizes"},
      {"a wrap not yet published", {0xFFFFFFFF}, 8, "wrap"},
  };
  for (const ForgedCase& c : cases) {
    RingReader reader(4096, kReceiver, nullptr, kWhere);
    Forged forged(reader.handle());
    forged.entry(0, c.words, c.published);
    try {
      reader.next(map_shared);
      ADD_FAILURE() << c.name << ": taken";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("ring sluice-shm:1:"), std::string::npos) << e.what();
    }
  }
}

// What a receiver writes into the records lane is checked as entries are:
// a forged one is refused by name, and a reference (only data names blocks)
// too; a sender's impossible index there sends records to the socket.
TEST(Rings, TheWriterRefusesWhatIsNoRecordAndTheReaderANonsenseIndex) {
  const std::vector<ForgedCase> cases = {
      {"an index past the lane", {}, 65536 * 2, "receiver's index"},
      {"a reference", {40, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 48, "no lane but the data lane names blocks"},
      {"frames that do not fill it", {24, 1, 4}, 32, "frame sizes"},
  };
  for (const ForgedCase& c : cases) {
    RingReader reader(4096, kReceiver, nullptr, kWhere);
    RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
    Forged forged(reader.handle());
    forged.record(c.words, c.published);
    try {
      writer.next_record();
      ADD_FAILURE() << c.name << ": taken";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("records lane"), std::string::npos) << e.what();
    }
  }
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  Forged forged(reader.handle());
  // Full, so that the reader looks at the sender's index, which says more was taken than written.
  while (reader.write_record(message(1, 8, 1).frames()) == RingReader::Record::Written) {}
  forged.header->records_read.store(UINT64_MAX);
  EXPECT_EQ(reader.write_record(message(1, 8, 1).frames()), RingReader::Record::NotWritten);
  forged.header->records_read.store(forged.header->records_written.load());
  EXPECT_EQ(reader.write_record(message(1, 8, 1).frames()), RingReader::Record::NotWritten)
      << "a lane once found broken is not used again";
}

TEST(Rings, TheWriterRefusesAnotherReceiversRingOrAnImpossibleIndex) {
  RingReader reader(4096, kReceiver, nullptr, kWhere);
  try {
    RingWriter writer(reader.handle(), kReceiver + 1, kPid, kWhere);
    ADD_FAILURE() << "a ring made by another receiver was taken";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("receiver: expected"), std::string::npos) << e.what();
  }
  SharedFile other = SharedFile::create(8192);
  EXPECT_THROW(RingWriter(other.handle(), kReceiver, kPid, kWhere), WireError) << "no ring at all";

  RingWriter writer(reader.handle(), kReceiver, kPid, kWhere);
  Forged forged(reader.handle());
  std::shared_ptr<void> kept;
  // The writer reads the reader's index when its last reading leaves no room.
  const Written w = message(1, 1000, 1);
  while (writer.write(w.frames(), kept)) {}
  writer.publish();
  forged.header->read.store(8192);  // taken what was never written
  try {
    writer.write(w.frames(), kept);
    ADD_FAILURE() << "an impossible index was believed";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("receiver's index"), std::string::npos) << e.what();
  }
}

// A receiver's record names its ring after its leases and pid (flag bit
// 6), read back as written; the flag anywhere else is refused by name.
TEST(Rings, ARecordNamesItsRingAndTheFlagIsRefusedElsewhere) {
  wire::Message record;
  record.header = {wire::Kind::Credit, 0, 0, 20, 0, 0};
  record.control = {1, 20, 16, 1 << 20, 1 << 30, 0};
  record.shared = true;
  record.leases = {12, 17};
  record.pid = 4321;
  record.ring = SharedHandle{4321, 9, 0x5eed, 0, 1 << 20, 0};
  const std::vector<wire::Frame> frames = wire::encode(record);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].size, wire::kHeaderBytes + wire::kControlBytes + 2 * 8 + 8 + wire::kSharedRefBytes);
  const auto* bytes = static_cast<const uint8_t*>(frames[0].data);
  const wire::Message back = wire::decode({{wire::Bytes(bytes, frames[0].size), nullptr}});
  EXPECT_EQ(back.ring, record.ring);
  EXPECT_EQ(back.pid, 4321u);
  EXPECT_EQ(back.leases, record.leases);

  std::vector<uint8_t> data(bytes, bytes + frames[0].size);
  data[5] = static_cast<uint8_t>(wire::Kind::Data);  // the kind
  data[6] &= ~static_cast<uint8_t>(wire::kFlagPid);  // the flags but the ring's kept
  try {
    wire::decode({{wire::Bytes(data.data(), data.size()), nullptr}});
    ADD_FAILURE() << "a ring on data was taken";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("ring (bit 6)"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- channels

Tensor numbered(int64_t i, int64_t floats) {
  std::vector<float> v(static_cast<size_t>(floats));
  for (int64_t k = 0; k < floats; ++k) v[static_cast<size_t>(k)] = static_cast<float>(i * 1000 + k);
  return tensor<float>(v, Shape{floats});
}

// Same-host ipc channels share memory, so their messages take a ring; one
// too large for a quarter of it is named there and arrives in its place.
TEST(RingChannel, MessagesComeThroughTheRingInOrderLargeOnesIncluded) {
  test::TempDir dir;
  ChannelOptions options{.ring_bytes = 4096};
  Channel in(Pattern::Pull, "@" + dir.ipc("ring"), options);
  Channel out(Pattern::Push, in.bound_endpoint(), options);
  constexpr int64_t kCount = 3000;
  std::atomic<bool> flushed{false};
  std::string failed;
  std::thread sender([&] {
    try {
      for (int64_t i = 0; i < kCount; ++i) {
        // Every 500th packed in one frame of about 2 KiB: past 1 KiB, through shared memory.
        out.send({numbered(i, i % 500 == 7 ? 500 : 4)}, static_cast<uint64_t>(i));
      }
      out.send_end_of_stream(kCount);
      out.flush(milliseconds(20000));
    } catch (const std::exception& e) { failed = e.what(); }
    flushed = true;
  });
  for (int64_t i = 0; i < kCount; ++i) {
    std::optional<wire::Message> m = in.recv(milliseconds(10000));
    ASSERT_TRUE(m) << "message " << i << " never came";
    ASSERT_EQ(m->header.kind, wire::Kind::Data);
    ASSERT_TRUE(test::identical(m->tensors.at(0), numbered(i, i % 500 == 7 ? 500 : 4))) << "message " << i;
  }
  std::optional<wire::Message> end = in.recv(milliseconds(10000));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
  // The receiver acknowledges as it is called: called until its sender has flushed.
  while (!flushed) EXPECT_FALSE(in.recv(milliseconds(10)));
  sender.join();
  EXPECT_EQ(failed, "");
  const ChannelCounters sent = out.counters(), got = in.counters();
  EXPECT_EQ(sent.ringed, static_cast<uint64_t>(kCount + 1)) << "every message by the ring";
  EXPECT_EQ(got.ringed, sent.ringed);
  // Its records came back through the ring too.
  EXPECT_GT(sent.records_ringed, 0u);
  EXPECT_LE(sent.records_ringed, got.records_ringed) << "taken only as written";
  EXPECT_EQ(sent.resent, 0u);
  EXPECT_EQ(got.duplicates, 0u);
}

uint64_t thread_cpu_us() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return static_cast<uint64_t>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000000 +
         static_cast<uint64_t>(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// A receiver with nothing to take spins ring_spin and then sleeps on its
// socket: an idle edge costs no CPU, and a message written into the ring
// while it sleeps rings its doorbell and is taken at once.
TEST(RingChannel, AnIdleReceiverSleepsAndTheSendersDoorbellWakesIt) {
  test::TempDir dir;
  // Asleep, the receiver would wake on its own only at its next heartbeat:
  // 5 s from now.
  ChannelOptions options;
  options.heartbeat_interval = std::chrono::seconds(5);
  Channel in(Pattern::Pull, "@" + dir.ipc("idle"), options);
  Channel out(Pattern::Push, in.bound_endpoint(), options);
  out.send({numbered(0, 4)}, 0);
  ASSERT_TRUE(in.recv(milliseconds(10000)));
  ASSERT_EQ(in.counters().ringed, 1u) << "not through a ring: nothing here tests one";
  for (int i = 1; i <= 5; ++i) {
    std::thread later([&] {
      std::this_thread::sleep_for(milliseconds(300));
      out.send({numbered(i, 4)}, static_cast<uint64_t>(i));
    });
    const uint64_t cpu = thread_cpu_us();
    const auto start = std::chrono::steady_clock::now();
    std::optional<wire::Message> m = in.recv(milliseconds(10000));
    const auto took = std::chrono::steady_clock::now() - start;
    const uint64_t spent = thread_cpu_us() - cpu;
    later.join();
    ASSERT_TRUE(m);
    EXPECT_TRUE(test::identical(m->tensors.at(0), numbered(i, 4)));
    EXPECT_LT(took, milliseconds(2500)) << "the doorbell did not wake the receiver: it woke on its own";
    // 300 ms of waiting: asleep for nearly all of it (rusage counts in ticks).
    EXPECT_LT(spent, 60000u) << "the idle receiver spent " << spent << " us of CPU in 300 ms";
  }
  EXPECT_EQ(in.counters().ringed, 6u);
}

uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000 + static_cast<uint64_t>(t.tv_nsec);
}

// A receiver spins before it sleeps only while spinning catches messages:
// one whose messages come seldom (a chunk every few hundred microseconds,
// as a stage's) sleeps at once, but for a probe now and then, rather than
// spend ring_spin of a core on each.
TEST(RingChannel, AReceiverWhoseMessagesComeSeldomStopsSpinningForThem) {
  test::TempDir dir;
  ChannelOptions options;
  options.ring_spin = milliseconds(5);  // long, so that spinning would show
  Channel in(Pattern::Pull, "@" + dir.ipc("seldom"), options);
  Channel out(Pattern::Push, in.bound_endpoint(), options);
  out.send({numbered(0, 4)}, 0);
  ASSERT_TRUE(in.recv(milliseconds(10000)));
  ASSERT_EQ(in.counters().ringed, 1u) << "not through a ring: nothing here tests one";
  constexpr int kMessages = 40;
  std::thread sender([&] {
    for (int i = 1; i <= kMessages; ++i) {
      std::this_thread::sleep_for(milliseconds(40));
      out.send({numbered(i, 4)}, static_cast<uint64_t>(i));
    }
  });
  const uint64_t cpu = thread_cpu_ns();
  for (int i = 1; i <= kMessages; ++i) {
    std::optional<wire::Message> m = in.recv(milliseconds(10000));
    ASSERT_TRUE(m) << "message " << i;
    EXPECT_TRUE(test::identical(m->tensors.at(0), numbered(i, 4))) << "message " << i;
  }
  const uint64_t spent_ms = (thread_cpu_ns() - cpu) / 1000000;
  sender.join();
  // Spinning before each: 40 x 5 ms = 200 ms. The first wait and one in
  // eight after it spin (40 ms is over four times ring_spin): about 30 ms.
  EXPECT_LT(spent_ms, 100u) << "the receiver spent " << spent_ms << " ms of CPU on 40 messages 40 ms apart";
}

// A receiver that is never idle (its messages queue up) acknowledges by
// bytes as well as by count: at least every 4 MiB taken, so that a sender
// of large messages gets its memory back while it is still in its cache,
// not an eighth of the credit (125 messages, 125 MiB here) later.
TEST(RingChannel, AReceiverAcknowledgesLargeMessagesEveryFewMebibytes) {
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("bytes"), {});
  Channel out(Pattern::Push, in.bound_endpoint(), {});
  constexpr int64_t kFloats = 256 * 1024;  // 1 MiB
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) out.send({numbered(i, kFloats)}, static_cast<uint64_t>(i));
  EXPECT_EQ(out.counters().unacknowledged, static_cast<uint64_t>(kMessages))
      << "within the credit: none waited";
  for (int i = 0; i < 20; ++i) {
    std::optional<wire::Message> m = in.recv(milliseconds(10000));
    ASSERT_TRUE(m) << "message " << i;
    ASSERT_TRUE(test::identical(m->tensors.at(0), numbered(i, kFloats))) << "message " << i;
  }
  // 20 taken, 19 done with (the 20th is the owner's until the next recv):
  // acknowledged up to 16 at least. The sender's pacemaker reads it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (out.counters().unacknowledged > kMessages - 16 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  EXPECT_LE(out.counters().unacknowledged, static_cast<uint64_t>(kMessages - 16))
      << "20 MiB taken and not acknowledged";
  for (int i = 20; i < kMessages; ++i) ASSERT_TRUE(in.recv(milliseconds(10000))) << "message " << i;
}

// A closing receiver's last acknowledgement asks its sender to confirm it
// (flag bit 8), and the sender answers at once: the receiver does not wait
// for the sender's next heartbeat, nor its linger time.
TEST(RingChannel, AClosingReceiversLastAcknowledgementIsConfirmedAtOnce) {
  test::TempDir dir;
  ChannelOptions options;
  options.heartbeat_interval = std::chrono::seconds(10);  // no heartbeat of its own comes meanwhile
  options.linger = std::chrono::seconds(8);
  options.credit_messages = 2;  // an acknowledgement a message
  for (int round = 0; round < 3; ++round) {
    Channel out(Pattern::Push, "@" + dir.ipc("confirm" + std::to_string(round)), options);
    std::chrono::steady_clock::duration closing{};
    std::string failed;
    {
      Channel in(Pattern::Pull, ">" + out.bound_endpoint(), options);
      // The sender answers while it is in a call: it sends, then waits in flush.
      std::thread sender([&] {
        try {
          for (uint64_t i = 0; i < 20; ++i) out.send({numbered(static_cast<int64_t>(i), 4)}, i);
          out.flush(milliseconds(8000));
        } catch (const std::exception& e) { failed = e.what(); }
      });
      for (int64_t i = 0; i < 20; ++i) {
        std::optional<wire::Message> m = in.recv(milliseconds(5000));
        ASSERT_TRUE(m) << "message " << i;
        ASSERT_TRUE(test::identical(m->tensors.at(0), numbered(i, 4))) << "message " << i;
      }
      const auto start = std::chrono::steady_clock::now();
      { Channel gone = std::move(in); }  // acknowledges the last message as it closes
      closing = std::chrono::steady_clock::now() - start;
      sender.join();
    }
    EXPECT_EQ(failed, "") << "round " << round;
    EXPECT_LT(closing, milliseconds(3000))
        << "round " << round << ": the closing receiver waited for a heartbeat";
  }
}

// A receiver closed right after taking the end of stream acknowledges it
// as it closes: its sender's flush returns, nothing kept.
TEST(RingChannel, AReceiverClosedRightAfterTheEndAcknowledgesIt) {
  test::TempDir dir;
  for (int round = 0; round < 5; ++round) {
    Channel out(Pattern::Push, "@" + dir.ipc("closing" + std::to_string(round)), {});
    {
      Channel in(Pattern::Pull, ">" + out.bound_endpoint(), {});
      out.send({numbered(1, 4)}, 0);
      out.send_end_of_stream(1);
      ASSERT_TRUE(in.recv(milliseconds(5000)));
      std::optional<wire::Message> end = in.recv(milliseconds(5000));
      ASSERT_TRUE(end);
      ASSERT_EQ(end->header.kind, wire::Kind::EndOfStream);
      EXPECT_EQ(in.counters().ringed, 2u);
    }
    EXPECT_NO_THROW(out.flush(milliseconds(3000))) << "round " << round;
  }
}
}  // namespace
}  // namespace sluice
