#pragma once
// A list of pointers that stays off the heap for the usual handful: a run
// of a small plan costs well under a microsecond, and each allocation counts.

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace sluice {

template <typename P>
class Pointers {
 public:
  explicit Pointers(size_t n = 0) : n_(n) {
    if (n > small_.size()) large_.resize(n);
  }
  P& operator[](size_t i) { return data()[i]; }
  P operator[](size_t i) const { return data()[i]; }
  std::span<const P> span() const { return {data(), n_}; }
  size_t size() const { return n_; }

 private:
  P* data() { return large_.empty() ? small_.data() : large_.data(); }
  const P* data() const { return large_.empty() ? small_.data() : large_.data(); }
  std::array<P, 8> small_{};
  std::vector<P> large_;
  size_t n_;
};

}  // namespace sluice
