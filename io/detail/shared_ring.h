#pragma once
// A same-host ring: one reliable sender's messages to one receiver through
// shared memory, so that a message between two processes of one host costs
// no system call (io/WIRE_FORMAT.md, "Rings"). The receiver makes it (a
// SharedFile) for a sender whose shared memory it maps, and names it in
// its records; the sender maps it and writes each message's frames as one
// entry; the receiver takes the entries in order. A second, smaller lane
// carries the receiver's records (credit, acknowledgements, leases,
// refusals) back, once the sender says it reads them there: the same bytes
// the socket would have carried, handled the same way. Heartbeats and the
// meeting stay on the channel's socket, and a record goes there whenever
// the lane cannot take it, so every promise of the protocol holds
// unchanged: the ring carries what the socket did.
//
// Neither side trusts what the other wrote: every index and entry is
// checked before it is used, and a ring found broken is a WireError, after
// which the two go back to the socket.
//
// Each end is one thread's (the sender's under its mutex, the receiver's
// owner); the two processes meet only in the ring's atomics.

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include <sluice/devices/shared_memory.h>
#include <sluice/io/wire.h>

namespace sluice::channel_detail {

// The ring's first page; the data lane's entries follow, then the records
// lane's (WIRE_FORMAT.md, "Rings").
struct RingHeader {
  char magic[8];  // "SLUICERG"
  uint32_t version;
  uint32_t reserved;
  uint64_t capacity;  // of the data lane's entries, a power of two
  uint64_t receiver;  // the session of the receiver that made it
  // The receiver's doorbell: the write end of a pipe it polls beside its
  // socket, as its process and descriptor number (0, 0: none; ring the socket).
  uint32_t doorbell_pid;
  uint32_t doorbell_fd;
  uint64_t records_capacity;  // of the records lane's entries, a power of two
  uint8_t pad0[16];
  // Each on a cache line of its own: a line one side writes and the other
  // reads moves between their cores at every write.
  alignas(64) std::atomic<uint64_t> written;        // bytes of entries the sender has published
  alignas(64) std::atomic<uint64_t> read;           // bytes the receiver has taken
  alignas(64) std::atomic<uint32_t> reader_sleeps;  // the receiver sleeps on its socket: a doorbell wakes it
  alignas(64) std::atomic<uint32_t> writer_waits;   // the sender waits for room: a record wakes it
  // The records lane, the other way.
  alignas(64) std::atomic<uint64_t> records_written;  // bytes of records the receiver has published
  alignas(64) std::atomic<uint64_t> records_read;     // bytes the sender has taken
  alignas(
      64) std::atomic<uint32_t> writer_sleeps;  // the sender sleeps on its socket: a record goes there too
  alignas(64) std::atomic<uint32_t> writer_reads_records;  // the sender takes records here (0: the socket)
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "the ring's atomics are shared between processes");

// An entry taken from a lane, its frames copied out.
struct RingEntry {
  // Its frames: the one of a packed message held here, more in `many`
  // (no list allocated for the usual one).
  wire::ReceivedFrame one;
  std::vector<wire::ReceivedFrame> many;
  uint64_t bytes = 0;  // in its frames, as a sender's credit counts them
  std::span<const wire::ReceivedFrame> frames() const {
    return many.empty() ? std::span<const wire::ReceivedFrame>(&one, 1)
                        : std::span<const wire::ReceivedFrame>(many);
  }
};

// One direction of a ring as its writer sees it: entries written, published,
// and room found again from the reader's index. (Its templates are
// defined, and used, in shared_ring.cpp alone.)
class LaneWriter {
 public:
  LaneWriter() = default;
  LaneWriter(std::atomic<uint64_t>* written, const std::atomic<uint64_t>* read, uint8_t* entries,
             uint64_t capacity);
  // Room for an entry of `need` bytes (after a wrap marker where it would
  // not fit before the end); nullptr when the reader has not made it.
  // `index_error(found, published)` throws, for a reader's index that is impossible.
  template <typename IndexError>
  uint8_t* reserve(uint64_t need, const IndexError& index_error);
  void commit(uint64_t bytes) { written_ += bytes; }
  void publish() { written_index_->store(written_, std::memory_order_release); }
  uint64_t capacity() const { return capacity_; }
  bool empty() const;  // everything published so far was taken

 private:
  std::atomic<uint64_t>* written_index_ = nullptr;
  const std::atomic<uint64_t>* read_index_ = nullptr;
  uint8_t* entries_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t written_ = 0;  // written here, published or not
  uint64_t taken_ = 0;    // the reader's index when last read: read again only when it leaves no room
};

// The other side of a lane: entries taken in order, checked.
class LaneReader {
 public:
  LaneReader() = default;
  // `writer` names the other side in errors ("sender", "receiver").
  LaneReader(const std::atomic<uint64_t>* written, std::atomic<uint64_t>* read, const uint8_t* entries,
             uint64_t capacity, const char* writer);
  // The next entry, copied out, or nullopt. An entry naming a block of the
  // writer's memory is read through `map` (none: refused). `broken(what,
  // expected, found)` throws, at `read()`; a reference found wrong names `where`.
  template <typename Broken>
  std::optional<RingEntry> next(const wire::MapShared* map, const Broken& broken, std::string_view where);
  void release() { read_index_->store(read_, std::memory_order_release); }
  bool empty() const;  // nothing published past what was taken
  uint64_t read() const { return read_; }

 private:
  const std::atomic<uint64_t>* written_index_ = nullptr;
  std::atomic<uint64_t>* read_index_ = nullptr;
  const uint8_t* entries_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t read_ = 0;
  uint64_t published_ = 0;  // the writer's index when last read
  const char* writer_ = "";
};

// The sending end, in the sender's process.
class RingWriter {
 public:
  // Maps the ring `handle` names, which receiver session `receiver` of
  // process `pid` made, and opens its doorbell where it names one of that
  // process's pipes. DeviceError when it cannot be mapped, WireError when
  // it is no such ring.
  RingWriter(const SharedHandle& handle, uint64_t receiver, uint64_t pid, const std::string& where);
  ~RingWriter();
  RingWriter(const RingWriter&) = delete;
  RingWriter& operator=(const RingWriter&) = delete;
  uint64_t id() const { return file_.handle().segment; }
  // Writes one message's frames as an entry, unpublished; false when there
  // is no room now (the receiver is then asked to say when it has made
  // some). A message larger than a quarter of the ring is written into a
  // block of this process's shared memory, and the entry names it: `kept`
  // holds the block, which must live until the receiver has acknowledged
  // the message (it is reused when written again). WireError when the
  // receiver's index is impossible; DeviceError when no shared memory is left.
  bool write(const std::vector<wire::Frame>& frames, std::shared_ptr<void>& kept);
  // An entry of one frame of `bytes` bytes, which the caller writes at the
  // place returned before it publishes (a message written straight into the
  // ring: no frame made first); nullptr when there is no room now. Only for
  // a frame that fits_inline.
  uint8_t* write_frame(uint64_t bytes);
  bool fits_inline(uint64_t frame_bytes) const;
  // Publishes what write wrote. True when the receiver sleeps: the caller
  // wakes it (ring_doorbell, else a doorbell on the socket); the flag is cleared.
  bool publish();
  // Wakes a sleeping receiver through its doorbell pipe: one system call,
  // no thread of either process between. False when it has none (or it
  // broke): the caller rings the socket.
  bool ring_doorbell();
  // The receiver's next record, or nullopt. WireError when the lane holds
  // something that is no entry.
  std::optional<RingEntry> next_record();
  // Says it sleeps on its socket unless a record came meanwhile: false
  // then (and it does not sleep). A receiver that writes a record while it
  // sleeps rings the socket (an empty frame), which wakes it.
  bool sleep();
  void wake();

 private:
  // Room for an entry of `need` bytes, asking the receiver to say when it
  // made some if there is none; the entry's start.
  uint8_t* reserve(uint64_t need);
  [[noreturn]] void refuse_index(uint64_t found, uint64_t published) const;
  SharedFile file_;
  RingHeader* header_ = nullptr;
  LaneWriter data_;
  LaneReader records_;
  int doorbell_ = -1;       // the receiver's pipe, opened here; -1: none
  int doorbell_held_ = -1;  // a read end of it, so that it never loses its last reader
  const std::string& where_;
};

// A receiver's doorbell: a pipe its senders on this host write a byte into
// to wake it, open at both ends in its process. The read end is polled
// beside the socket; senders open the write end through /proc (as they map
// segments), named in each ring's header.
class Doorbell {
 public:
  Doorbell();  // WireError when the system gives no pipe
  ~Doorbell();
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  // Takes every byte rung so far, so that the next poll sleeps.
  void drain();

 private:
  int fds_[2] = {-1, -1};
};

// The receiving end, in the receiver's process.
class RingReader {
 public:
  // A new ring of `capacity` bytes (rounded up to a power of two) for one
  // sender of receiver session `receiver`, naming `doorbell` (or none, when
  // null). DeviceError when the system gives no memory.
  RingReader(size_t capacity, uint64_t receiver, const Doorbell* doorbell, const std::string& where);
  const SharedHandle& handle() const { return file_.handle(); }
  using Entry = RingEntry;
  // The next entry, copied out (its room is the sender's again at once; an
  // entry in a block of the sender's memory is read through `map`, which
  // maps it read-only); nullopt when there is none. WireError when the ring
  // holds something that is no entry: it is of no use after that.
  std::optional<Entry> next(const wire::MapShared& map);
  // Says it sleeps unless an entry came meanwhile: false then (and it does not sleep).
  bool sleep();
  void wake();
  // Publishes what next took: the room is the sender's again. Once per
  // batch of entries, not per entry, so that the index's line moves less.
  void release();
  // Whether its sender waits for room; cleared, so that it is told once.
  bool writer_waits();
  // Writes a record (a control message's or a refusal's frames) into the
  // records lane and publishes it. NotWritten when the sender does not
  // read records there, the lane has no room, or the sender's index is
  // impossible (the lane is not used again): the caller sends it on the
  // socket. ToASleeper: written, and the sender sleeps on its socket, where
  // the caller rings (an empty frame) to wake it.
  enum class Record { NotWritten, Written, ToASleeper };
  Record write_record(const std::vector<wire::Frame>& frames);

 private:
  SharedFile file_;
  RingHeader* header_ = nullptr;
  LaneReader data_;
  LaneWriter records_;
  bool records_broken_ = false;
  const std::string& where_;
};

}  // namespace sluice::channel_detail
