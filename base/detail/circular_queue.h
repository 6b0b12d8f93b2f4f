#pragma once
// CircularQueue: a queue in one growing array, for the per-message queues
// of the hot paths (a channel's kept and received messages). std::deque
// allocates a block per element once an element passes 512 bytes
// (libstdc++), as a wire::Message nearly does: a push and a pop cost an
// allocation and a free per message. Here they cost none once the array
// has grown to the queue's longest.
//
// An element popped is ended at once (its place then holds a default one),
// so that what it held (a message's tensors) is let go of then, not when
// its place is reused.

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace sluice::detail {

template <typename T>
class CircularQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T&& value) {
    if (size_ == slots_.size()) grow();
    renew((*this)[size_], std::move(value));
    ++size_;
  }
  void pop_front() {
    renew(front());
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  void pop_back() {
    renew(back());
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
  // A place's element ended and made anew: cheaper than assigning one (a
  // default element made, moved in, and destroyed).
  template <typename... From>
  static void renew(T& place, From&&... from) {
    std::destroy_at(&place);
    std::construct_at(&place, std::forward<From>(from)...);
  }
  // Doubles the array (a power of two, so that an index wraps with a mask),
  // the elements moved to its start in order.
  void grow() {
    std::vector<T> larger(slots_.empty() ? 8 : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) larger[i] = std::move((*this)[i]);
    slots_ = std::move(larger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace sluice::detail
