#pragma once
// Literal: constant data known at trace time, row-major, little-endian.

#include <cstdint>
#include <cstring>
#include <vector>

#include <sluice/ops/shape.h>

namespace sluice {

struct Literal {
  Spec spec;
  std::vector<uint8_t> bytes;  // spec.bytes() of them

  template <typename T>
  static Literal of(const std::vector<T>& values, Shape shape) {
    Literal l{{dtype_of<T>(), std::move(shape)}, {}};
    l.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(l.bytes.data(), values.data(), l.bytes.size());
    return l;
  }
  // A scalar of `dtype` holding `v` converted as as_type converts.
  static Literal scalar(DType dtype, double v);
  static Literal scalar(DType dtype, complex128 v);
  bool operator==(const Literal& o) const { return spec == o.spec && bytes == o.bytes; }
};

}  // namespace sluice
