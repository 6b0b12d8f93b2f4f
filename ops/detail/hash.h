#pragma once
// The hash combiner behind structural hashes (Attrs, Node, Function). Private
// to ops/: hashes are compared within one process, never stored.

#include <cstddef>
#include <cstdint>

namespace sluice::detail {

class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0x6a09e667f3bcc908ull) : h_(seed) {}
  // Mixes one word in; order matters, so (a, b) and (b, a) differ.
  Hasher& add(uint64_t v) {
    h_ = (h_ ^ v) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 29;
    return *this;
  }
  // FNV-1a over raw bytes (constant data).
  Hasher& add_bytes(const void* data, size_t n) {
    uint64_t f = 0xcbf29ce484222325ull;
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) f = (f ^ p[i]) * 0x100000001b3ull;
    return add(f).add(n);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_;
};

}  // namespace sluice::detail
