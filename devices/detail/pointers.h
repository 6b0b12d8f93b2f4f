#pragma once
// A list of pointers (or a run's other per-argument values: flags, buffers)
// that stays off the heap for the usual handful: a run of a small plan costs
// well under a microsecond, and each allocation counts.

#include <array>
#include <cstddef>
#include <memory>
#include <span>

namespace sluice {

template <typename P>
class Pointers {
 public:
  explicit Pointers(size_t n = 0) : n_(n) {
    if (n > small_.size()) large_ = std::make_unique<P[]>(n);  // value-initialized, as small_
  }
  P& operator[](size_t i) { return data()[i]; }
  const P& operator[](size_t i) const { return data()[i]; }
  std::span<const P> span() const { return {data(), n_}; }
  size_t size() const { return n_; }

 private:
  P* data() { return large_ ? large_.get() : small_.data(); }
  const P* data() const { return large_ ? large_.get() : small_.data(); }
  std::array<P, 8> small_{};
  std::unique_ptr<P[]> large_;  // not a vector: vector<bool> has no data()
  size_t n_;
};

}  // namespace sluice
