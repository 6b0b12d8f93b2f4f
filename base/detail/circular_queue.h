#pragma once
// CircularQueue: a queue in one growing array, for the per-message queues
// of the hot paths (a channel's kept and received messages). std::deque
// allocates a block per element once an element passes 512 bytes
// (libstdc++), as a wire::Message nearly does: a push and a pop cost an
// allocation and a free per message. Here they cost none once the array
// has grown to the queue's longest.
//
// Only the queued elements exist: a push constructs one in its place and a
// pop ends it at once, so that what it held (a message's tensors) is let go
// of then, and no empty element is made or ended per message.

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace sluice::detail {

template <typename T>
class CircularQueue {
 public:
  CircularQueue() = default;
  CircularQueue(CircularQueue&& other) noexcept { swap(other); }
  CircularQueue& operator=(CircularQueue&& other) noexcept {
    CircularQueue gone(std::move(other));
    swap(gone);
    return *this;
  }
  ~CircularQueue() {
    while (size_ > 0) pop_back();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return *at(i); }
  const T& operator[](size_t i) const { return *at(i); }
  T& front() { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T&& value) {
    if (size_ == capacity_) grow();
    std::construct_at(at(size_), std::move(value));
    ++size_;
  }
  // Constructs an element in its place from what `make` returns: the
  // returned prvalue initializes it there, with no temporary moved in (a
  // kept message is hundreds of bytes).
  template <typename Make>
  T& emplace_back_from(Make&& make) {
    if (size_ == capacity_) grow();
    T* made = ::new (static_cast<void*>(at(size_))) T(std::forward<Make>(make)());
    ++size_;
    return *made;
  }
  void pop_front() {
    std::destroy_at(at(0));
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }
  void pop_back() {
    std::destroy_at(at(size_ - 1));
    --size_;
  }
  // Keeps the elements `keep` says yes to, in order.
  template <typename Keep>
  void keep_if(Keep keep) {
    size_t kept = 0;
    for (size_t i = 0; i < size_; ++i)
      if (keep((*this)[i])) {
        if (kept != i) (*this)[kept] = std::move((*this)[i]);
        ++kept;
      }
    while (size_ > kept) pop_back();
  }

 private:
  // Raw memory for capacity_ elements, of which the size_ from head_ on
  // (wrapping) exist.
  struct Release {
    void operator()(T* p) const { ::operator delete(p, std::align_val_t(alignof(T))); }
  };
  using Storage = std::unique_ptr<T, Release>;

  T* at(size_t i) const { return slots_.get() + ((head_ + i) & (capacity_ - 1)); }
  // Doubles the array (a power of two, so that an index wraps with a mask),
  // the elements moved to its start in order.
  void grow() {
    const size_t larger = capacity_ == 0 ? 8 : 2 * capacity_;
    Storage moved(static_cast<T*>(::operator new(larger * sizeof(T), std::align_val_t(alignof(T)))));
    for (size_t i = 0; i < size_; ++i) {
      std::construct_at(moved.get() + i, std::move(*at(i)));
      std::destroy_at(at(i));
    }
    slots_ = std::move(moved);
    capacity_ = larger;
    head_ = 0;
  }
  void swap(CircularQueue& other) noexcept {
    std::swap(slots_, other.slots_);
    std::swap(capacity_, other.capacity_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }

  Storage slots_;
  size_t capacity_ = 0;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice::detail
