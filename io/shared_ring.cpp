// A same-host ring's two ends (io/detail/shared_ring.h; io/WIRE_FORMAT.md,
// "Rings"). An entry: u32 bytes (what follows, a multiple of 8), u32 frame
// count, a u32 size per frame (padded to 8 bytes), then each frame's bytes,
// each padded to 8. With a frame count of 0 it names a block of the
// sender's shared memory holding such an entry (a 40-byte reference): a
// message too large for the ring. An entry never wraps: where one would, a
// u32 kWrap says that the next starts at the ring's beginning.

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
constexpr uint32_t kVersion = 1;
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
RingReader::Entry read_entry(const uint8_t* at, uint64_t available, const Fail& fail, uint64_t& consumed) {
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
  const auto owner = std::make_shared_for_overwrite<uint8_t[]>(std::max<uint64_t>(data_bytes, 1));
  std::memcpy(owner.get(), at + kEntryHeader + table, data_bytes);
  consumed = kEntryHeader + bytes;
  RingReader::Entry e;
  if (count == 1) {
    e.one = {wire::Bytes(owner.get(), sizes[0]), owner};
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

RingWriter::RingWriter(const SharedHandle& handle, uint64_t receiver, uint64_t pid, const std::string& where)
    : file_(SharedFile::open(handle)), where_(where) {
  header_ = reinterpret_cast<RingHeader*>(file_.data());
  auto refuse = [&](std::string_view what, std::string_view expected, std::string_view found) {
    throw WireError(error_message(fmt::format("{}: ring {}", where_, handle.str()), what, expected, found));
  };
  if (std::memcmp(header_->magic, kMagic, sizeof kMagic) != 0 || header_->version != kVersion)
    refuse("header", "magic SLUICERG, version 1", "other bytes");
  capacity_ = header_->capacity;
  if (!std::has_single_bit(capacity_) || capacity_ < kHeaderPage || capacity_ > file_.size() - kHeaderPage)
    refuse("capacity",
           fmt::format("a power of two of at least {} that fits its {} bytes", kHeaderPage, file_.size()),
           fmt::format("{}", capacity_));
  if (header_->receiver != receiver)
    refuse("receiver", fmt::format("{:016x} (the receiver that names it)", receiver),
           fmt::format("{:016x}", header_->receiver));
  entries_ = file_.data() + kHeaderPage;
  // A ring made for this sender starts empty.
  written_ = header_->written.load(std::memory_order_acquire);
  taken_ = taken();
  if (taken_ != written_) refuse("indices", "an empty ring", "entries in it");
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
}

RingWriter::~RingWriter() {
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

uint64_t RingWriter::taken() const {
  const uint64_t read = header_->read.load(std::memory_order_acquire);
  const uint64_t published = header_->written.load(std::memory_order_relaxed);
  if (read > published || published - read > capacity_)
    throw WireError(error_message(fmt::format("{}: ring {}", where_, file_.handle().str()),
                                  "receiver's index",
                                  fmt::format("within the {} bytes below {}", capacity_, published), read));
  return read;
}

uint8_t* RingWriter::reserve(uint64_t need) {
  const uint64_t pos = written_ & (capacity_ - 1);
  const uint64_t tail = capacity_ - pos;
  const uint64_t total = need <= tail ? need : tail + need;
  if (written_ + total - taken_ > capacity_ && written_ + total - (taken_ = taken()) > capacity_) {
    // Asked first, then looked at again: a receiver that took everything
    // in between has seen the question (RingReader::writer_waits).
    header_->writer_waits.store(1, std::memory_order_seq_cst);
    if (written_ + total - (taken_ = taken()) > capacity_) return nullptr;
    header_->writer_waits.store(0, std::memory_order_relaxed);
  }
  if (need <= tail) return entries_ + pos;
  store_u32(entries_ + pos, kWrap);
  written_ += tail;
  return entries_;
}

bool RingWriter::write(const std::vector<wire::Frame>& frames, std::shared_ptr<void>& kept) {
  const uint64_t need = entry_bytes(frames);
  if (need <= capacity_ / 4) {
    uint8_t* at = reserve(need);
    if (!at) return false;
    write_entry(frames, need, at);
    written_ += need;
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
  written_ += kReference;
  return true;
}

bool RingWriter::fits_inline(uint64_t frame_bytes) const {
  return kEntryHeader + 8 + pad8(frame_bytes) <= capacity_ / 4;
}

uint8_t* RingWriter::write_frame(uint64_t bytes) {
  const uint64_t need = kEntryHeader + 8 + pad8(bytes);
  uint8_t* at = reserve(need);
  if (!at) return nullptr;
  store_u32(at, static_cast<uint32_t>(need - kEntryHeader));
  store_u32(at + 4, 1);
  store_u32(at + kEntryHeader, static_cast<uint32_t>(bytes));
  written_ += need;
  return at + kEntryHeader + 8;
}

bool RingWriter::publish() {
  header_->written.store(written_, std::memory_order_release);
  // Published, then the flag read: a receiver going to sleep sets its flag
  // and then looks at `written` (RingReader::sleep), so one of the two sees
  // the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return header_->reader_sleeps.load(std::memory_order_relaxed) != 0 &&
         header_->reader_sleeps.exchange(0) != 0;
}

RingReader::RingReader(size_t capacity, uint64_t receiver, const Doorbell* doorbell, const std::string& where)
    : file_(SharedFile::create(kHeaderPage + std::bit_ceil(std::max(capacity, kHeaderPage)))), where_(where) {
  capacity_ = std::bit_ceil(std::max(capacity, kHeaderPage));
  header_ = new (file_.data()) RingHeader{};
  std::memcpy(header_->magic, kMagic, sizeof kMagic);
  header_->version = kVersion;
  header_->capacity = capacity_;
  header_->receiver = receiver;
  if (doorbell) {
    header_->doorbell_pid = static_cast<uint32_t>(::getpid());
    header_->doorbell_fd = static_cast<uint32_t>(doorbell->write_fd());
  }
  entries_ = file_.data() + kHeaderPage;
}

std::optional<RingReader::Entry> RingReader::next(const wire::MapShared& map) {
  auto broken = [&](std::string_view what, std::string_view expected, const auto& found) {
    throw WireError(error_message(fmt::format("{}: ring {} at byte {}", where_, file_.handle().str(), read_),
                                  what, expected, found));
  };
  for (;;) {
    // The sender's index read again only once what it said is taken: its
    // line moves between the two cores at each read while the sender writes.
    if (published_ == read_) published_ = header_->written.load(std::memory_order_acquire);
    const uint64_t written = published_;
    if (written == read_) return std::nullopt;
    if (written < read_ || written - read_ > capacity_)
      broken("sender's index", fmt::format("within the {} bytes above {}", capacity_, read_), written);
    const uint64_t pos = read_ & (capacity_ - 1);
    const uint64_t available = std::min(written - read_, capacity_ - pos);
    if (available >= 4 && load_u32(entries_ + pos) == kWrap) {
      if (capacity_ - pos > written - read_) broken("wrap", "the ring's end published", written - read_);
      read_ += capacity_ - pos;
      continue;
    }
    if (available >= kEntryHeader && load_u32(entries_ + pos + 4) == 0) {
      // A message too large for the ring, in a block of the sender's memory.
      const uint32_t bytes = load_u32(entries_ + pos);
      if (bytes != wire::kSharedRefBytes || available < kEntryHeader + bytes)
        broken("reference entry", fmt::format("{} bytes, all published", wire::kSharedRefBytes), bytes);
      const SharedHandle block =
          wire::read_shared_ref(wire::Bytes(entries_ + pos + kEntryHeader, wire::kSharedRefBytes), where_);
      read_ += kEntryHeader + bytes;
      std::shared_ptr<void> mapped;
      try {
        mapped = map(block);
      } catch (const Error& e) { broken("block", "memory of its sender this process maps", e.what()); }
      uint64_t ignored = 0;
      return read_entry(static_cast<const uint8_t*>(mapped.get()), block.bytes, broken, ignored);
    }
    uint64_t bytes = 0;
    Entry e = read_entry(entries_ + pos, available, broken, bytes);
    read_ += bytes;
    return e;
  }
}

bool RingReader::sleep() {
  header_->reader_sleeps.store(1, std::memory_order_seq_cst);
  if (header_->written.load(std::memory_order_seq_cst) == read_) return true;
  header_->reader_sleeps.store(0, std::memory_order_relaxed);
  return false;
}

void RingReader::release() { header_->read.store(read_, std::memory_order_release); }

void RingReader::wake() { header_->reader_sleeps.store(0, std::memory_order_relaxed); }

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
