#include <sluice/devices/cuda/device_allocator.h>

#include <fmt/format.h>

#include <algorithm>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {
namespace {

size_t round_up(size_t bytes, size_t unit) { return std::max(unit, (bytes + unit - 1) / unit * unit); }

std::string mib(size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

DeviceAllocator::DeviceAllocator(DeviceMemory& memory, double memory_fraction, bool preallocate, std::string who)
    : memory_(memory),
      who_(std::move(who)),
      limit_(static_cast<size_t>(static_cast<double>(memory.total()) * memory_fraction) / kAlignment * kAlignment),
      preallocate_(preallocate) {
  if (!preallocate_) return;
  std::lock_guard lock(mutex_);
  if (!grow(limit_))
    throw DeviceError(error_message(who_, "preallocate", fmt::format("{} of device memory (memory_fraction)", mib(limit_)),
                                    "the device could not reserve it; lower memory_fraction or turn preallocate off"));
}

DeviceAllocator::~DeviceAllocator() {
  for (const Region& r : regions_)
    if (r.bytes) memory_.release(r.begin);
}

void* DeviceAllocator::allocate(size_t bytes) {
  const size_t size = round_up(bytes, kAlignment);
  std::lock_guard lock(mutex_);
  if (void* p = take(size)) return p;
  if (!preallocate_) {
    if (reserved_ + std::max(size, kRegionBytes) > limit_) release_unused_regions();
    if (grow(size)) return take(size);
  }
  out_of_memory(bytes);
}

DeviceAllocator::Span DeviceAllocator::region_of(const void* p) const {
  std::lock_guard lock(mutex_);
  auto it = by_begin_.find(static_cast<char*>(const_cast<void*>(p)));
  if (it == by_begin_.end() || it->second->free) return {};
  const Region& r = regions_[it->second->region];
  return {r.begin, r.bytes};
}

void DeviceAllocator::free(void* p) {
  std::lock_guard lock(mutex_);
  auto it = by_begin_.find(static_cast<char*>(p));
  if (it == by_begin_.end() || it->second->free)
    throw DeviceError(error_message(who_, "free", "a buffer this allocator handed out", fmt::format("{}", p)));
  Block* b = it->second;
  b->free = true;
  in_use_ -= b->bytes;
  --regions_[b->region].used_blocks;
  // Merge with free neighbours: the next one into b, then b into the previous.
  if (b->next && b->next->free) {
    Block* n = b->next;
    erase_free(n);
    by_begin_.erase(n->begin);
    b->bytes += n->bytes;
    b->next = n->next;
    if (b->next) b->next->prev = b;
    spare_.push_back(n);
  }
  if (b->prev && b->prev->free) {
    Block* q = b->prev;
    erase_free(q);
    by_begin_.erase(b->begin);
    q->bytes += b->bytes;
    q->next = b->next;
    if (q->next) q->next->prev = q;
    spare_.push_back(b);
    b = q;
  }
  insert_free(b);
}

AllocatorStats DeviceAllocator::stats() const {
  std::lock_guard lock(mutex_);
  AllocatorStats s{limit_, reserved_, in_use_, 0, free_.empty() ? 0 : free_.rbegin()->first};
  for (const Region& r : regions_) s.regions += r.bytes ? 1 : 0;
  return s;
}

void* DeviceAllocator::take(size_t bytes) {
  auto it = free_.lower_bound({bytes, nullptr});
  if (it == free_.end()) return nullptr;
  Block* b = by_begin_.at(it->second);
  erase_free(b);
  if (b->bytes - bytes >= kAlignment) {  // the rest stays free, a block of its own
    Block* rest;
    if (spare_.empty()) {
      storage_.push_back(std::make_unique<Block>());
      rest = storage_.back().get();
    } else {
      rest = spare_.back();
      spare_.pop_back();
    }
    *rest = {b->begin + bytes, b->bytes - bytes, true, b, b->next, b->region};
    if (rest->next) rest->next->prev = rest;
    b->next = rest;
    b->bytes = bytes;
    by_begin_[rest->begin] = rest;
    insert_free(rest);
  }
  b->free = false;
  in_use_ += b->bytes;
  ++regions_[b->region].used_blocks;
  return b->begin;
}

bool DeviceAllocator::grow(size_t bytes) {
  const size_t size = preallocate_ ? bytes : round_up(std::max(bytes, kRegionBytes), kRegionBytes);
  // A request above the region size but within the limit gets a region of
  // its own size when a rounded one would not fit.
  const size_t fitting = reserved_ + size <= limit_ ? size : bytes;
  if (reserved_ + fitting > limit_) return false;
  void* p = memory_.reserve(fitting);
  if (!p) return false;
  regions_.push_back({static_cast<char*>(p), fitting, 0});
  reserved_ += fitting;
  storage_.push_back(std::make_unique<Block>());
  Block* b = storage_.back().get();
  *b = {static_cast<char*>(p), fitting, true, nullptr, nullptr, regions_.size() - 1};
  by_begin_[b->begin] = b;
  insert_free(b);
  return true;
}

void DeviceAllocator::release_unused_regions() {
  for (Region& r : regions_) {
    if (r.bytes == 0 || r.used_blocks != 0) continue;
    Block* b = by_begin_.at(r.begin);  // the region's one free block spans it
    erase_free(b);
    by_begin_.erase(b->begin);
    spare_.push_back(b);
    memory_.release(r.begin);
    reserved_ -= r.bytes;
    r.bytes = 0;
  }
}

void DeviceAllocator::insert_free(Block* b) { free_.insert({b->bytes, b->begin}); }
void DeviceAllocator::erase_free(Block* b) { free_.erase({b->bytes, b->begin}); }

void DeviceAllocator::out_of_memory(size_t bytes) const {
  throw DeviceError(error_message(
      who_, "allocate", fmt::format("{} bytes within the limit of {} (memory_fraction)", bytes, mib(limit_)),
      fmt::format("{} in use, {} reserved, the largest free block {}", mib(in_use_), mib(reserved_),
                  mib(free_.empty() ? 0 : free_.rbegin()->first))));
}

}  // namespace sluice::cuda
