#include <sluice/devices/shared_memory.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>
#include <vector>

#include <sluice/devices/detail/host_memory.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'S', 'M'};
constexpr uint32_t kVersion = 1;
constexpr size_t kPage = 4096;
// What a segment is sealed against, once made at its size.
constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;
// A segment holds about this much, in up to kMaxSlots slots: one file
// descriptor and one mapping serve many small tensors, and a large one has
// a segment to itself.
constexpr size_t kSegmentTarget = size_t{4} << 20;
constexpr uint32_t kMaxSlots = 64;
// Wholly free segments beyond this many bytes of free slots go back to the
// system, as the host pool does with its blocks.
constexpr size_t kMaxPooledBytes = size_t{1} << 30;

// The first 64 bytes of a segment; the slots' generations follow, and the
// slots start at data_offset. Little-endian, as every host sluice runs on.
struct SegmentHeader {
  char magic[8];
  uint32_t version;
  uint32_t slots;
  uint64_t id;
  uint64_t slot_bytes;
  uint64_t data_offset;
  uint8_t reserved[24];
};
static_assert(sizeof(SegmentHeader) == 64);
constexpr size_t kMaxSlotsInHeader = (kPage - sizeof(SegmentHeader)) / sizeof(uint64_t);
static_assert(kMaxSlots <= kMaxSlotsInHeader);

uint64_t* generations(void* base) {
  return reinterpret_cast<uint64_t*>(static_cast<uint8_t*>(base) + sizeof(SegmentHeader));
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

uint64_t random_id() {
  static std::mutex mutex;
  static std::mt19937_64 generator(std::random_device{}());
  std::lock_guard lock(mutex);
  uint64_t id;
  do id = generator();
  while (id == 0);
  return id;
}

// A memfd of `size` bytes (whole pages), mode 0600, its pages reserved and
// sealed at its size, mapped read-write here: a segment, or a SharedFile.
std::pair<int, uint8_t*> create_sealed(size_t size) {
  auto fail = [&](const char* call, int fd) -> std::pair<int, uint8_t*> {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw DeviceError(
        error_message("shared memory", call, fmt::format("a file of {} bytes", size), std::strerror(e)));
  };
  const int fd = ::memfd_create("sluice", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail("memfd_create", fd);
  if (::fchmod(fd, 0600) != 0) return fail("fchmod", fd);
  // fallocate reserves the pages now: a full memory fails here with an
  // error, not later with a SIGBUS when a kernel writes a page.
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return fail("ftruncate", fd);
  if (::fallocate(fd, 0, 0, static_cast<off_t>(size)) != 0) return fail("fallocate", fd);
  // Sealed at its size: a process of this user that opens the file cannot
  // shrink it under a reader, who would die of SIGBUS on the pages cut off
  // (readers check the seals before they map: open_sealed).
  if (::fcntl(fd, F_ADD_SEALS, kSizeSeals | F_SEAL_SEAL) != 0) return fail("fcntl(F_ADD_SEALS)", fd);
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return fail("mmap", fd);
  return {fd, static_cast<uint8_t*>(base)};
}

// ---------------------------------------------------------------- this process's segments

struct Segment {
  int fd = -1;
  uint8_t* base = nullptr;
  size_t size = 0;
  uint64_t id = 0;
  size_t slot_bytes = 0;
  uint32_t slots = 0;
  std::vector<bool> used;
  uint32_t free_slots = 0;
  uint8_t* slot(uint32_t i) const { return base + kPage + size_t{i} * slot_bytes; }
};

class Pool {
 public:
  std::shared_ptr<void> allocate(size_t bytes) {
    const size_t slot_bytes = host_block_bytes(bytes);
    std::lock_guard lock(mutex_);
    std::vector<std::pair<Segment*, uint32_t>>& free = free_[slot_bytes];
    if (free.empty()) {
      Segment* s = create(slot_bytes);
      for (uint32_t i = s->slots; i-- > 0;) free.emplace_back(s, i);
    }
    auto [s, i] = free.back();
    free.pop_back();
    s->used[i] = true;
    --s->free_slots;
    pooled_bytes_ -= slot_bytes;
    ++in_use_;
    // A handle made before this hand-out names the old generation: refused.
    __atomic_add_fetch(&generations(s->base)[i], 1, __ATOMIC_RELEASE);
    return std::shared_ptr<void>(s->slot(i), [this, s, i](void*) { release(s, i); });
  }

  std::optional<SharedHandle> find(const void* data, size_t bytes) {
    const auto p = reinterpret_cast<uintptr_t>(data);
    std::lock_guard lock(mutex_);
    auto it = segments_.upper_bound(p);
    if (it == segments_.begin()) return std::nullopt;
    const Segment& s = *std::prev(it)->second;
    const auto first = reinterpret_cast<uintptr_t>(s.slot(0));
    if (p < first || p >= reinterpret_cast<uintptr_t>(s.base) + s.size) return std::nullopt;
    const size_t i = (p - first) / s.slot_bytes;
    if (i >= s.slots || !s.used[i] || p + bytes > first + (i + 1) * s.slot_bytes) return std::nullopt;
    return SharedHandle{static_cast<uint32_t>(::getpid()), static_cast<uint32_t>(s.fd), s.id,
                        p - reinterpret_cast<uintptr_t>(s.base), bytes,
                        __atomic_load_n(&generations(s.base)[i], __ATOMIC_ACQUIRE)};
  }

  SharedMemoryStats stats() {
    std::lock_guard lock(mutex_);
    SharedMemoryStats out{segments_.size(), 0, in_use_};
    for (const auto& [base, s] : segments_) out.segment_bytes += s->size;
    return out;
  }

 private:
  Segment* create(size_t slot_bytes) {
    const auto slots = static_cast<uint32_t>(std::clamp<size_t>(kSegmentTarget / slot_bytes, 1, kMaxSlots));
    const size_t size = round_up(kPage + slots * slot_bytes, kPage);
    const auto [fd, base] = create_sealed(size);
    auto* h = reinterpret_cast<SegmentHeader*>(base);
    std::memcpy(h->magic, kMagic, sizeof kMagic);
    h->version = kVersion;
    h->slots = slots;
    h->id = random_id();
    h->slot_bytes = slot_bytes;
    h->data_offset = kPage;
    auto s = std::make_unique<Segment>();
    s->fd = fd;
    s->base = base;
    s->size = size;
    s->id = h->id;
    s->slot_bytes = slot_bytes;
    s->slots = slots;
    s->used.assign(slots, false);
    s->free_slots = slots;
    pooled_bytes_ += slots * slot_bytes;
    Segment* raw = s.get();
    segments_.emplace(reinterpret_cast<uintptr_t>(base), std::move(s));
    return raw;
  }

  void release(Segment* s, uint32_t i) {
    std::lock_guard lock(mutex_);
    s->used[i] = false;
    ++s->free_slots;
    --in_use_;
    pooled_bytes_ += s->slot_bytes;
    std::vector<std::pair<Segment*, uint32_t>>& free = free_[s->slot_bytes];
    if (s->free_slots < s->slots || pooled_bytes_ <= kMaxPooledBytes) {
      free.emplace_back(s, i);
      return;
    }
    std::erase_if(free, [s](const auto& f) { return f.first == s; });
    pooled_bytes_ -= s->slots * s->slot_bytes;
    ::munmap(s->base, s->size);
    ::close(s->fd);  // the kernel frees the memory once no other process maps it
    segments_.erase(reinterpret_cast<uintptr_t>(s->base));
  }

  std::mutex mutex_;
  std::map<uintptr_t, std::unique_ptr<Segment>> segments_;                      // by base address
  std::unordered_map<size_t, std::vector<std::pair<Segment*, uint32_t>>> free_;  // by slot size
  size_t pooled_bytes_ = 0, in_use_ = 0;
};

Pool& pool() {
  // Never destroyed: blocks may be released during static destruction.
  static auto* p = new Pool();
  return *p;
}

// ---------------------------------------------------------------- another process's segments

struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  Mapping(void* b, size_t s) : base(b), size(s) {}
  ~Mapping() { ::munmap(base, size); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

struct Key {
  uint32_t pid, fd;
  uint64_t segment;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    return std::hash<uint64_t>{}(k.segment ^ (uint64_t{k.pid} << 32 | k.fd));
  }
};
Key key_of(const SharedHandle& h) { return {h.pid, h.fd, h.segment}; }

std::string where(const SharedHandle& h) { return fmt::format("shared memory {}", h.str()); }

[[noreturn]] void refuse(const SharedHandle& h, std::string_view what, std::string_view expected,
                         std::string_view found) {
  throw DeviceError(error_message(where(h), what, expected, found));
}

// Maps the file `h` names (its pid and fd) whole, after checking that it is
// this user's, a regular file of at least `least` bytes, and sealed at its
// size. `writable`: read-write, else read-only.
std::shared_ptr<Mapping> open_sealed(const SharedHandle& h, size_t least, bool writable) {
  const std::string path = fmt::format("/proc/{}/fd/{}", h.pid, h.fd);
  const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    refuse(h, path, "a descriptor of a live process of this user",
           e == ENOENT ? "none (the process or its descriptor is gone)" : std::strerror(e));
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stat_ok || st.st_uid != ::geteuid() || !S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) < least) {
    ::close(fd);
    if (!stat_ok) refuse(h, path, "a file fstat reads", std::strerror(errno));
    if (st.st_uid != ::geteuid())
      refuse(h, "owner", fmt::format("this process's user (uid {})", ::geteuid()),
             fmt::format("uid {}", st.st_uid));
    refuse(h, path, fmt::format("a sluice file of at least {} bytes", least),
           fmt::format("{} bytes{}", st.st_size, S_ISREG(st.st_mode) ? "" : ", not a regular file"));
  }
  // A file's size cannot change while it is mapped, or the pages cut off
  // would be a SIGBUS where it is read.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & kSizeSeals) != kSizeSeals) {
    const int e = errno;
    ::close(fd);
    refuse(h, "seals", "a file sealed against shrinking and growing (F_SEAL_SHRINK | F_SEAL_GROW)",
           seals < 0 ? std::string(std::strerror(e)) : fmt::format("seals {:#x}", seals));
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* base = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  const int e = errno;
  ::close(fd);  // the mapping keeps the file
  if (base == MAP_FAILED) refuse(h, "mmap", fmt::format("{} bytes mapped", size), std::strerror(e));
  return std::make_shared<Mapping>(base, size);
}

std::shared_ptr<Mapping> open_segment(const SharedHandle& h) {
  // Read-only: a receiver cannot write through to what its sender, and every
  // other process reading the slot, sees.
  auto m = open_sealed(h, kPage, /*writable=*/false);
  const void* base = m->base;
  const auto* header = static_cast<const SegmentHeader*>(base);
  if (std::memcmp(header->magic, kMagic, sizeof kMagic) != 0 || header->version != kVersion)
    refuse(h, "segment", "magic SLUICESM, version 1", "other bytes");
  if (header->id != h.segment)
    refuse(h, "segment id", fmt::format("{:016x}", h.segment),
           fmt::format("{:016x} (the descriptor names another segment now)", header->id));
  return m;
}

// The handle's data in mapping `m`, checked against the segment's header,
// which another process wrote: every figure in it is checked before use.
std::shared_ptr<void> slot_of(const std::shared_ptr<Mapping>& m, const SharedHandle& h) {
  const auto* header = static_cast<const SegmentHeader*>(m->base);
  const uint64_t slots = header->slots, slot_bytes = header->slot_bytes, first = header->data_offset;
  if (slots == 0 || slots > kMaxSlotsInHeader || slot_bytes == 0 || first < kPage || first > m->size ||
      slot_bytes > (m->size - first) / slots)
    refuse(h, "segment header", fmt::format("slots that fit its {} bytes", m->size),
           fmt::format("{} slots of {} bytes from offset {}", slots, slot_bytes, first));
  if (h.offset < first || h.offset - first >= slots * slot_bytes)
    refuse(h, "offset", fmt::format("in the slots, [{}, {})", first, first + slots * slot_bytes),
           fmt::format("{}", h.offset));
  const uint64_t i = (h.offset - first) / slot_bytes;
  const uint64_t slot_end = first + (i + 1) * slot_bytes;
  if (h.bytes > slot_end - h.offset)
    refuse(h, "bytes", fmt::format("at most {} (to the end of slot {})", slot_end - h.offset, i),
           fmt::format("{}", h.bytes));
  const uint64_t generation = __atomic_load_n(&generations(m->base)[i], __ATOMIC_ACQUIRE);
  if (generation != h.generation)
    refuse(h, "generation", fmt::format("{} (the slot as the handle names it)", h.generation),
           fmt::format("{} (the slot was handed out again: the handle is stale)", generation));
  return std::shared_ptr<void>(m, static_cast<uint8_t*>(m->base) + h.offset);
}

template <typename T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string SharedHandle::str() const {
  return fmt::format("sluice-shm:1:pid={}:fd={}:segment={:016x}:offset={}:bytes={}:generation={}", pid, fd,
                     segment, offset, bytes, generation);
}

SharedHandle SharedHandle::parse(std::string_view text) {
  static constexpr std::string_view kForm =
      "sluice-shm:1:pid=P:fd=F:segment=16 hex digits:offset=O:bytes=B:generation=G";
  auto fail = [&] {
    throw ValueError(error_message("shared memory handle", "", kForm, fmt::format("'{}'", text)));
  };
  constexpr std::string_view kPrefix = "sluice-shm:1:";
  if (!text.starts_with(kPrefix)) fail();
  std::string_view rest = text.substr(kPrefix.size());
  SharedHandle h;
  auto field = [&](std::string_view name, auto& out, int base = 10) {
    if (!rest.starts_with(name) || rest.substr(name.size(), 1) != "=") fail();
    rest.remove_prefix(name.size() + 1);
    const size_t end = std::min(rest.find(':'), rest.size());
    if (!parse_number(rest.substr(0, end), out, base)) fail();
    rest.remove_prefix(end == rest.size() ? end : end + 1);
  };
  field("pid", h.pid);
  field("fd", h.fd);
  field("segment", h.segment, 16);
  field("offset", h.offset);
  field("bytes", h.bytes);
  field("generation", h.generation);
  if (!rest.empty() || text.back() == ':') fail();
  return h;
}

std::shared_ptr<void> shared_allocate(size_t bytes) { return pool().allocate(bytes); }

std::optional<SharedHandle> find_shared(const void* data, size_t bytes) { return pool().find(data, bytes); }

SharedMemoryStats shared_memory_stats() { return pool().stats(); }

std::shared_ptr<void> map_shared(const SharedHandle& handle) {
  // Mappings in use are shared, so that mapping the slots of one segment
  // one after another maps it once.
  static std::mutex mutex;
  static std::unordered_map<Key, std::weak_ptr<Mapping>, KeyHash> mapped;
  std::shared_ptr<Mapping> m;
  {
    std::lock_guard lock(mutex);
    auto it = mapped.find(key_of(handle));
    if (it != mapped.end()) m = it->second.lock();
    if (!m) {
      std::erase_if(mapped, [](const auto& e) { return e.second.expired(); });
      m = open_segment(handle);
      mapped[key_of(handle)] = m;
    }
  }
  return slot_of(m, handle);
}

struct SharedMappings::Held {
  std::unordered_map<Key, std::shared_ptr<Mapping>, KeyHash> segments;
};

SharedMappings::SharedMappings() : held_(std::make_unique<Held>()) {}
SharedMappings::~SharedMappings() = default;
SharedMappings::SharedMappings(SharedMappings&&) noexcept = default;
SharedMappings& SharedMappings::operator=(SharedMappings&&) noexcept = default;

std::shared_ptr<void> SharedMappings::map(const SharedHandle& handle) {
  // A sender frees segments it no longer needs: those no tensor here views
  // go once there are many, or their memory would live on in this process.
  constexpr size_t kManySegments = 128;
  if (held_->segments.size() >= kManySegments && !held_->segments.count(key_of(handle)))
    std::erase_if(held_->segments, [](const auto& e) { return e.second.use_count() == 1; });
  std::shared_ptr<Mapping>& m = held_->segments[key_of(handle)];
  if (!m) {
    try {
      m = open_segment(handle);
    } catch (...) {
      held_->segments.erase(key_of(handle));
      throw;
    }
  }
  return slot_of(m, handle);
}

void SharedMappings::clear() { held_->segments.clear(); }

struct SharedFile::Held {
  int fd = -1;  // made here: kept open, so that another process opens it through /proc
  std::shared_ptr<Mapping> mapping;
  SharedHandle handle;
  ~Held() {
    if (fd >= 0) ::close(fd);
  }
};

SharedFile SharedFile::create(size_t bytes) {
  const size_t size = round_up(std::max<size_t>(bytes, 1), kPage);
  const auto [fd, base] = create_sealed(size);
  SharedFile f;
  f.held_ = std::make_shared<Held>();
  f.held_->fd = fd;
  f.held_->mapping = std::make_shared<Mapping>(base, size);
  f.held_->handle = {static_cast<uint32_t>(::getpid()), static_cast<uint32_t>(fd), random_id(), 0, size, 0};
  return f;
}

SharedFile SharedFile::open(const SharedHandle& handle) {
  SharedFile f;
  f.held_ = std::make_shared<Held>();
  f.held_->mapping = open_sealed(handle, std::max<uint64_t>(handle.bytes, 1), /*writable=*/true);
  f.held_->handle = handle;
  return f;
}

uint8_t* SharedFile::data() const { return static_cast<uint8_t*>(held_->mapping->base); }
size_t SharedFile::size() const { return held_->mapping->size; }
const SharedHandle& SharedFile::handle() const { return held_->handle; }

}  // namespace sluice
