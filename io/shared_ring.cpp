// A same-host ring's two ends (io/detail/shared_ring.h; io/WIRE_FORMAT.md,
// "Rings"): each the writer of one lane and the reader of the other. An entry: u32 bytes (what follows, a
// multiple of 8), u32 frame count, a u32 size per frame (padded to 8 bytes), then each frame's bytes, each
// padded to 8. With a frame count of 0 it names a block of the sender's shared memory holding such an entry
// (a 40-byte reference): a message too large for the ring. An entry never wraps: where one would, a u32 kWrap
// says that the next starts at the ring's beginning.

#include <sluice/io/detail/shared_ring.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>

#include <sluice/io/detail/wire_error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::channel_detail {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'R', 'G'};
constexpr uint32_t kVersion = 2;
// The records lane: a record is at most a few KiB (kMaxLeases leases).
constexpr uint64_t kRecordsCapacity = 64 * 1024;
constexpr size_t kHeaderPage = 4096;
constexpr uint32_t kWrap = 0xFFFFFFFF;
constexpr size_t kEntryHeader = 8;
static_assert(sizeof(RingHeader) <= kHeaderPage);

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

// The bytes an entry of `frames` takes.
uint64_t entry_bytes(const std::vector<wire::Frame>& frames) {
  uint64_t n = kEntryHeader + pad8(4 * frames.size());
  for (const wire::Frame& f : frames) n += pad8(f.size);
  return n;
}

void write_entry(const std::vector<wire::Frame>& frames, uint64_t bytes, uint8_t* at) {
  store_u32(at, static_cast<uint32_t>(bytes - kEntryHeader));
  store_u32(at + 4, static_cast<uint32_t>(frames.size()));
  uint8_t* sizes = at + kEntryHeader;
  uint8_t* data = sizes + pad8(4 * frames.size());
  for (const wire::Frame& f : frames) {
    store_u32(sizes, static_cast<uint32_t>(f.size));
    sizes += 4;
    if (f.size > 0) std::memcpy(data, f.data, f.size);
    data += pad8(f.size);
  }
}

// The frames of the entry at `at`, of which `available` bytes may be
// read, copied out; `fail(what, expected, found)` throws. The sender's
// process could change the bytes under this one: each size is read once,
// checked, and used as read. `consumed`: the entry's bytes, its header's included.
template <typename Fail>
RingEntry read_entry(const uint8_t* at, uint64_t available, const Fail& fail, uint64_t& consumed) {
  if (available < kEntryHeader) fail("bytes published", "a whole entry (at least 8)", available);
  const uint32_t bytes = load_u32(at);
  const uint32_t count = load_u32(at + 4);
  if (bytes % 8 != 0 || bytes > available - kEntryHeader)
    fail("entry bytes", fmt::format("a multiple of 8, at most the {} there", available - kEntryHeader),
         bytes);
  const uint64_t table = pad8(uint64_t{4} * count);
  if (count == 0 || table > bytes) fail("frame count", fmt::format("1 to {}", bytes / 4), count);
  // On the stack for the usual few frames: an entry is read per message.
  uint32_t few[16];
  std::unique_ptr<uint32_t[]> many;
  uint32_t* sizes = count <= std::size(few) ? few : (many = std::make_unique<uint32_t[]>(count)).get();
  std::memcpy(sizes, at + kEntryHeader, 4 * size_t{count});
  uint64_t data_bytes = 0;
  for (uint32_t i = 0; i < count; ++i) data_bytes += pad8(sizes[i]);
  if (table + data_bytes != bytes)
    fail("frame sizes", fmt::format("frames filling the entry's {} bytes", bytes - table), data_bytes);
  auto owner = std::make_shared_for_overwrite<uint8_t[]>(std::max<uint64_t>(data_bytes, 1));
  std::memcpy(owner.get(), at + kEntryHeader + table, data_bytes);
  consumed = kEntryHeader + bytes;
  RingEntry e;
  if (count == 1) {
    e.one = {wire::Bytes(owner.get(), sizes[0]), std::move(owner)};
    e.bytes = sizes[0];
    return e;
  }
  e.many.reserve(count);
  uint64_t offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    e.many.push_back({wire::Bytes(owner.get() + offset, sizes[i]), owner});
    e.bytes += sizes[i];
    offset += pad8(sizes[i]);
  }
  return e;
}

}  // namespace

LaneWriter::LaneWriter(std::atomic<uint64_t>* written, const std::atomic<uint64_t>* read, uint8_t* entries,
                       uint64_t capacity)
    : written_index_(written), read_index_(read), entries_(entries), capacity_(capacity) {
  written_ = written->load(std::memory_order_acquire);
  taken_ = written_;
}

template <typename IndexError>
uint8_t* LaneWriter::reserve(uint64_t need, const IndexError& index_error) {
  const uint64_t pos = written_ & (capacity_ - 1);
  const uint64_t tail = capacity_ - pos;
  const uint64_t total = need <= tail ? need : tail + need;
  if (written_ + total - taken_ > capacity_) {
    // The reader's index, read again only now: its line moves between the
    // two cores at each read while the reader takes entries.
    const uint64_t read = read_index_->load(std::memory_order_acquire);
    const uint64_t published = written_index_->load(std::memory_order_relaxed);
    if (read > published || published - read > capacity_) index_error(read, published);
    taken_ = read;
    if (written_ + total - taken_ > capacity_) return nullptr;
  }
  if (need <= tail) return entries_ + pos;
  store_u32(entries_ + pos, kWrap);
  written_ += tail;
  return entries_;
}

bool LaneWriter::empty() const { return read_index_->load(std::memory_order_acquire) == written_; }

LaneReader::LaneReader(const std::atomic<uint64_t>* written, std::atomic<uint64_t>* read,
                       const uint8_t* entries, uint64_t capacity, const char* writer)
    : written_index_(written), read_index_(read), entries_(entries), capacity_(capacity), writer_(writer) {
  read_ = read->load(std::memory_order_acquire);
  published_ = read_;
}

bool LaneReader::empty() const { return written_index_->load(std::memory_order_seq_cst) == read_; }

template <typename Broken>
std::optional<RingEntry> LaneReader::next(const wire::MapShared* map, const Broken& broken,
                                          std::string_view where) {
  for (;;) {
    // The writer's index read again only once what it said is taken: its
    // line moves between the two cores at each read while the writer writes.
    if (published_ == read_) published_ = written_index_->load(std::memory_order_acquire);
    const uint64_t written = published_;
    if (written == read_) return std::nullopt;
    if (written < read_ || written - read_ > capacity_)
      broken(fmt::format("{}'s index", writer_),
             fmt::format("within the {} bytes above {}", capacity_, read_), written);
    const uint64_t pos = read_ & (capacity_ - 1);
    const uint64_t available = std::min(written - read_, capacity_ - pos);
    if (available >= 4 && load_u32(entries_ + pos) == kWrap) {
      if (capacity_ - pos > written - read_) broken("wrap", "the lane's end published", written - read_);
      read_ += capacity_ - pos;
      continue;
    }
    if (available >= kEntryHeader && load_u32(entries_ + pos + 4) == 0) {
      // A message too large for the ring, in a block of the writer's memory.
      const uint32_t bytes = load_u32(entries_ + pos);
      if (!map) broken("entry", "frames (no lane but the data lane names blocks)", "a reference");
      if (bytes != wire::kSharedRefBytes || available < kEntryHeader + bytes)
        broken("reference entry", fmt::format("{} bytes, all published", wire::kSharedRefBytes), bytes);
      const SharedHandle block =
          wire::read_shared_ref(wire::Bytes(entries_ + pos + kEntryHeader, wire::kSharedRefBytes), where);
      read_ += kEntryHeader + bytes;
      std::shared_ptr<void> mapped;
      try {
        mapped = (*map)(block);
      } catch (const Error& e) {
        broken("block", fmt::format("memory of its {} this process maps", writer_), e.what());
      }
      uint64_t ignored = 0;
      return read_entry(static_cast<const uint8_t*>(mapped.get()), block.bytes, broken, ignored);
    }
    uint64_t bytes = 0;
    RingEntry e = read_entry(entries_ + pos, available, broken, bytes);
    read_ += bytes;
    return e;
  }
}

RingWriter::RingWriter(const SharedHandle& handle, uint64_t receiver, uint64_t pid, const std::string& where)
    : file_(SharedFile::open(handle)), where_(where) {
  header_ = reinterpret_cast<RingHeader*>(file_.data());
  auto refuse = [&](std::string_view what, std::string_view expected, std::string_view found) {
    throw WireError(error_message(fmt::format("{}: ring {}", where_, handle.str()), what, expected, found));
  };
  if (std::memcmp(header_->magic, kMagic, sizeof kMagic) != 0 || header_->version != kVersion)
    refuse("header", fmt::format("magic SLUICERG, version {}", kVersion), "other bytes");
  const uint64_t capacity = header_->capacity, records = header_->records_capacity;
  const uint64_t room = file_.size() - kHeaderPage;
  if (!std::has_single_bit(capacity) || capacity < kHeaderPage || capacity > room)
    refuse("capacity",
           fmt::format("a power of two of at least {} that fits its {} bytes", kHeaderPage, file_.size()),
           fmt::format("{}", capacity));
  if (records != kRecordsCapacity || records > room - capacity)
    refuse("records capacity",
           fmt::format("{}, after the entries within its {} bytes", kRecordsCapacity, file_.size()),
           fmt::format("{}", records));
  if (header_->receiver != receiver)
    refuse("receiver", fmt::format("{:016x} (the receiver that names it)", receiver),
           fmt::format("{:016x}", header_->receiver));
  data_ = LaneWriter(&header_->written, &header_->read, file_.data() + kHeaderPage, capacity);
  records_ = LaneReader(&header_->records_written, &header_->records_read,
                        file_.data() + kHeaderPage + capacity, records, "receiver");
  // A ring made for this sender starts empty, both ways.
  const uint64_t read = header_->read.load(std::memory_order_acquire);
  if (read != header_->written.load(std::memory_order_acquire) || !records_.empty())
    refuse("indices", "an empty ring", "entries in it");
  // Only a pipe of the receiver's own process: the header could name
  // anything, and this process would write into it.
  const uint32_t bell_pid = header_->doorbell_pid, bell_fd = header_->doorbell_fd;
  if (bell_pid != 0 && bell_pid == pid) {
    const std::string path = fmt::format("/proc/{}/fd/{}", bell_pid, bell_fd);
    auto open_pipe = [&](int flags) {
      int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC);
      struct stat st {};
      if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))) {
        ::close(fd);
        fd = -1;
      }
      return fd;
    };
    // A read end of our own, never read: a receiver killed while asleep
    // leaves the pipe a reader, so ringing it fills it (EAGAIN) rather than
    // raising SIGPIPE, which would kill this process (its default action).
    doorbell_held_ = open_pipe(O_RDONLY);
    if (doorbell_held_ >= 0) doorbell_ = open_pipe(O_WRONLY);
  }
  // Records come here from now on: the receiver's next one may.
  header_->writer_reads_records.store(1, std::memory_order_seq_cst);
}

RingWriter::~RingWriter() {
  // The socket from now on; a record written meanwhile is lost with the
  // ring, and the next one (a heartbeat's answer at the latest) says it all.
  header_->writer_reads_records.store(0, std::memory_order_seq_cst);
  if (doorbell_ >= 0) ::close(doorbell_);
  if (doorbell_held_ >= 0) ::close(doorbell_held_);
}

bool RingWriter::ring_doorbell() {
  if (doorbell_ < 0) return false;
  const char bell = 1;
  // Full: the receiver has bytes to wake it already.
  if (::write(doorbell_, &bell, 1) == 1 || errno == EAGAIN) return true;
  ::close(doorbell_);  // it broke: the socket from now on
  doorbell_ = -1;
  return false;
}

void RingWriter::refuse_index(uint64_t found, uint64_t published) const {
  throw WireError(error_message(fmt::format("{}: ring {}", where_, file_.handle().str()), "receiver's index",
                                fmt::format("within the {} bytes below {}", data_.capacity(), published),
                                found));
}

uint8_t* RingWriter::reserve(uint64_t need) {
  const auto refuse = [this](uint64_t found, uint64_t published) { refuse_index(found, published); };
  if (uint8_t* at = data_.reserve(need, refuse)) return at;
  // Asked first, then looked at again: a receiver that took everything
  // in between has seen the question (RingReader::writer_waits).
  header_->writer_waits.store(1, std::memory_order_seq_cst);
  uint8_t* at = data_.reserve(need, refuse);
  if (at) header_->writer_waits.store(0, std::memory_order_relaxed);
  return at;
}

bool RingWriter::write(const std::vector<wire::Frame>& frames, std::shared_ptr<void>& kept) {
  const uint64_t need = entry_bytes(frames);
  if (need <= data_.capacity() / 4) {
    uint8_t* at = reserve(need);
    if (!at) return false;
    write_entry(frames, need, at);
    data_.commit(need);
    return true;
  }
  constexpr uint64_t kReference = kEntryHeader + wire::kSharedRefBytes;
  uint8_t* at = reserve(kReference);
  if (!at) return false;
  if (!kept) {
    kept = shared_allocate(need);
    write_entry(frames, need, static_cast<uint8_t*>(kept.get()));
  }
  const std::optional<SharedHandle> block = find_shared(kept.get(), need);
  store_u32(at, wire::kSharedRefBytes);
  store_u32(at + 4, 0);
  wire::write_shared_ref(*block, at + kEntryHeader);
  data_.commit(kReference);
  return true;
}

bool RingWriter::fits_inline(uint64_t frame_bytes) const {
  return kEntryHeader + 8 + pad8(frame_bytes) <= data_.capacity() / 4;
}

uint8_t* RingWriter::write_frame(uint64_t bytes) {
  const uint64_t need = kEntryHeader + 8 + pad8(bytes);
  uint8_t* at = reserve(need);
  if (!at) return nullptr;
  store_u32(at, static_cast<uint32_t>(need - kEntryHeader));
  store_u32(at + 4, 1);
  store_u32(at + kEntryHeader, static_cast<uint32_t>(bytes));
  data_.commit(need);
  return at + kEntryHeader + 8;
}

bool RingWriter::publish() {
  data_.publish();
  // Published, then the flag read: a receiver going to sleep sets its flag
  // and then looks at `written` (RingReader::sleep), so one of the two sees
  // the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return header_->reader_sleeps.load(std::memory_order_relaxed) != 0 &&
         header_->reader_sleeps.exchange(0) != 0;
}

std::optional<RingEntry> RingWriter::next_record() {
  auto broken = [&](std::string_view what, std::string_view expected, const auto& found) {
    throw WireError(error_message(
        fmt::format("{}: ring {}, records lane at byte {}", where_, file_.handle().str(), records_.read()),
        what, expected, found));
  };
  std::optional<RingEntry> e = records_.next(nullptr, broken, where_);
  if (e) records_.release();  // one at a time: records are few
  return e;
}

bool RingWriter::sleep() {
  header_->writer_sleeps.store(1, std::memory_order_seq_cst);
  if (records_.empty()) return true;
  header_->writer_sleeps.store(0, std::memory_order_relaxed);
  return false;
}

void RingWriter::wake() { header_->writer_sleeps.store(0, std::memory_order_relaxed); }

RingReader::RingReader(size_t capacity, uint64_t receiver, const Doorbell* doorbell, const std::string& where)
    : file_(SharedFile::create(kHeaderPage + std::bit_ceil(std::max(capacity, kHeaderPage)) +
                               kRecordsCapacity)),
      where_(where) {
  const uint64_t entries = std::bit_ceil(std::max(capacity, kHeaderPage));
  header_ = new (file_.data()) RingHeader{};
  std::memcpy(header_->magic, kMagic, sizeof kMagic);
  header_->version = kVersion;
  header_->capacity = entries;
  header_->records_capacity = kRecordsCapacity;
  header_->receiver = receiver;
  if (doorbell) {
    header_->doorbell_pid = static_cast<uint32_t>(::getpid());
    header_->doorbell_fd = static_cast<uint32_t>(doorbell->write_fd());
  }
  data_ = LaneReader(&header_->written, &header_->read, file_.data() + kHeaderPage, entries, "sender");
  records_ = LaneWriter(&header_->records_written, &header_->records_read,
                        file_.data() + kHeaderPage + entries, kRecordsCapacity);
}

std::optional<RingReader::Entry> RingReader::next(const wire::MapShared& map) {
  auto broken = [&](std::string_view what, std::string_view expected, const auto& found) {
    throw WireError(
        error_message(fmt::format("{}: ring {} at byte {}", where_, file_.handle().str(), data_.read()), what,
                      expected, found));
  };
  return data_.next(&map, broken, where_);
}

bool RingReader::sleep() {
  header_->reader_sleeps.store(1, std::memory_order_seq_cst);
  if (data_.empty()) return true;
  header_->reader_sleeps.store(0, std::memory_order_relaxed);
  return false;
}

void RingReader::release() { data_.release(); }

void RingReader::wake() { header_->reader_sleeps.store(0, std::memory_order_relaxed); }

RingReader::Record RingReader::write_record(const std::vector<wire::Frame>& frames) {
  if (records_broken_ || header_->writer_reads_records.load(std::memory_order_seq_cst) == 0)
    return Record::NotWritten;
  const uint64_t need = entry_bytes(frames);
  uint8_t* at = nullptr;
  try {
    at = need <= kRecordsCapacity / 4
             ? records_.reserve(need,
                                [](uint64_t found, uint64_t) -> void {
                                  throw WireError(error_message("records lane", "sender's index",
                                                                "within the lane", found));
                                })
             : nullptr;
  } catch (const WireError&) {
    records_broken_ = true;  // a sender that writes nonsense there: the socket from now on
    return Record::NotWritten;
  }
  if (!at) return Record::NotWritten;
  write_entry(frames, need, at);
  records_.commit(need);
  records_.publish();
  // Published, then the flag read: a sender going to sleep sets its flag
  // and then looks at the lane (RingWriter::sleep), so one of the two sees
  // the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Cleared by whoever wakes it: rung once, not for every record.
  const bool asleep =
      header_->writer_sleeps.load(std::memory_order_relaxed) != 0 && header_->writer_sleeps.exchange(0) != 0;
  return asleep ? Record::ToASleeper : Record::Written;
}

Doorbell::Doorbell() {
  if (::pipe2(fds_, O_NONBLOCK | O_CLOEXEC) != 0)
    throw WireError(error_message("channel", "a pipe for the rings' doorbell", "one", std::strerror(errno)));
}

Doorbell::~Doorbell() {
  ::close(fds_[0]);
  ::close(fds_[1]);
}

void Doorbell::drain() {
  char bytes[256];
  while (::read(fds_[0], bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes)) {}
}

bool RingReader::writer_waits() {
  // The index taken is published before the flag is read: see RingWriter::write.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return header_->writer_waits.load(std::memory_order_relaxed) != 0 && header_->writer_waits.exchange(0) != 0;
}

}  // namespace sluice::channel_detail
