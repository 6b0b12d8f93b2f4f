#pragma once
// Host memory that other processes of this host map: how a tensor crosses
// to another process without being copied (Tensor::to_pointer's ipc mode,
// same-host channels, pipeline edges between processes of one host).
//
// A segment is a memfd (memfd_create), mode 0600 and named in no file
// system: another process opens it through /proc/<pid>/fd/<fd>, which the
// kernel allows to the same user only, and the kernel frees it once no
// process holds it (a descriptor or a mapping), a process killed with
// SIGKILL included: nothing is ever left in /dev/shm to clean up.
//
// A segment's first page names it (magic "SLUICESM", version 1, slot
// count, a random 64-bit id, slot size, where the slots start, then one u64
// generation per slot, little-endian); equal slots of one size class follow.
// The pool hands out slots and takes them back when the last holder lets go,
// bumping the slot's generation each time it hands it out, so that a handle
// kept after its slot was reused is refused, not read.
//
// A handle, as text (Tensor::to_pointer's ipc handle):
//   sluice-shm:1:pid=4242:fd=17:segment=9f3c...e1:offset=4096:bytes=65536:generation=3
// (segment in 16 hex digits, the rest decimal). Any language opens it the
// same way: open /proc/PID/fd/FD read-write, check that the file belongs to
// this user, that it is sealed against shrinking and growing (F_GET_SEALS
// has F_SEAL_SHRINK and F_SEAL_GROW: a segment cut short under a mapping
// is a SIGBUS in the reader) and that its first page has the magic and the segment id, check
// the generation of the slot holding OFFSET, and map BYTES at OFFSET
// (python/sluice/wire.py's open_shared does it with mmap and numpy).
//
// Most users meet it through Tensor::to_pointer / from_pointer and
// channels; this header is for code that handles the handles themselves.
// Thread safety: every function may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

struct SharedHandle {
  uint32_t pid = 0;         // the process holding the segment open
  uint32_t fd = 0;          // its descriptor there
  uint64_t segment = 0;     // the segment's random id, in its first page
  uint64_t offset = 0;      // of the data, in the segment
  uint64_t bytes = 0;       // of the data
  uint64_t generation = 0;  // of the slot holding the data when the handle was made
  std::string str() const;
  // ValueError naming what is wrong with `text`.
  static SharedHandle parse(std::string_view text);
  bool operator==(const SharedHandle&) const = default;
};

// A block of at least `bytes` in a shared segment of this process, aligned
// to 64 bytes; it returns to the pool when the last owner lets go.
// DeviceError when the system gives no more (descriptors, memory).
std::shared_ptr<void> shared_allocate(size_t bytes);

// The handle of [data, data + bytes) when it lies in one block of this
// process's shared segments that is handed out now; nullopt otherwise.
std::optional<SharedHandle> find_shared(const void* data, size_t bytes);

// The memory a handle names, mapped into this process (the same memory, not
// a copy): its address, mapped as long as the result lives. DeviceError,
// naming the handle, when the process or its descriptor is gone, the file
// is another user's or not a sluice segment, the id or the slot's
// generation differ (a reused descriptor, a slot handed out again), or the
// data lies outside its slot.
std::shared_ptr<void> map_shared(const SharedHandle& handle);

// Segments mapped once and kept mapped while this lives, for a receiver that
// maps one sender's slots again and again (mapping a 16 MiB segment costs
// its page faults each time). Not thread-safe: one owner.
class SharedMappings {
 public:
  SharedMappings();
  ~SharedMappings();
  SharedMappings(SharedMappings&&) noexcept;
  SharedMappings& operator=(SharedMappings&&) noexcept;
  // As map_shared.
  std::shared_ptr<void> map(const SharedHandle& handle);
  void clear();

 private:
  struct Held;
  std::unique_ptr<Held> held_;
};

// A file of shared memory of its own, mapped read-write by each process
// that holds it: for a structure two processes of one host both write (a
// same-host channel's ring, io/detail/shared_ring.h), where a pooled slot,
// which other processes map read-only, will not do. Made as segments are (a
// memfd, mode 0600, sealed at its size) and opened the same way; what its
// bytes mean, and checking them, is its user's. Copies share the mapping.
class SharedFile {
 public:
  // A new file of `bytes` rounded up to whole pages, zeroed. Its handle
  // names it: this process, its descriptor, a random id in `segment`, its
  // bytes. DeviceError when the system gives none.
  static SharedFile create(size_t bytes);
  // The file `handle` names (its pid and fd), mapped read-write after the
  // checks map_shared makes of a segment: this user's, sealed at its size,
  // at least handle.bytes long. DeviceError naming what is wrong.
  static SharedFile open(const SharedHandle& handle);
  uint8_t* data() const;
  size_t size() const;  // what is mapped: at least the handle's bytes
  const SharedHandle& handle() const;

 private:
  struct Held;
  std::shared_ptr<Held> held_;
};

struct SharedMemoryStats {
  size_t segments = 0;       // segments this process holds now
  size_t segment_bytes = 0;  // their bytes
  size_t slots_in_use = 0;   // blocks handed out and not yet back
};
SharedMemoryStats shared_memory_stats();

}  // namespace sluice
