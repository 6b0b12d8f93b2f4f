#pragma once
// Shape (dims, rank 0 to 16) and Spec (DType + Shape): a tensor's template.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <sluice/ops/dtype.h>

namespace sluice {

inline constexpr int kMaxRank = 16;

// A shape's dims: a view of them, valid while the shape lives, that turns
// into a vector where one is wanted (`std::vector<int64_t> d = s.dims();`).
class Dims : public std::span<const int64_t> {
 public:
  using std::span<const int64_t>::span;
  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT(google-explicit-constructor)
};

// The dims are held in the shape itself, not on the heap: a tensor's
// spec is copied with every tensor and message, and a copy that allocates
// cost a run a tenth of its time (bench/run_overhead.cpp).
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  // ShapeError: rank > 16, dim < 0.
  explicit Shape(std::span<const int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims) : Shape(std::span<const int64_t>(dims)) {}

  int rank() const { return rank_; }
  int64_t dim(int axis) const { return dims_[static_cast<size_t>(axis)]; }
  int64_t operator[](int axis) const { return dim(axis); }
  Dims dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  int64_t size() const;  // element count; 1 for rank 0
  // Row-major strides in elements.
  std::vector<int64_t> strides() const;
  // "[2][3]"; "" for a scalar.
  std::string str() const;

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{};  // the first rank_
};

struct Spec {
  DType dtype = DType::F32;
  Shape shape;

  int64_t size() const { return shape.size(); }
  int64_t bytes() const { return shape.size() * dtype_size(dtype); }
  // "f32[2][3]", as Nx prints a tensor's type.
  std::string str() const;
  bool operator==(const Spec& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const Spec& o) const { return !(*this == o); }
};

// Spec makers named as Nx names types: sluice::f32({1024}), sluice::s64({}).
#define SLUICE_SPEC_MAKER(name, T) \
  inline Spec name(std::initializer_list<int64_t> dims = {}) { return {DType::T, Shape(dims)}; }
SLUICE_SPEC_MAKER(pred, Pred)
SLUICE_SPEC_MAKER(s8, S8)
SLUICE_SPEC_MAKER(s16, S16)
SLUICE_SPEC_MAKER(s32, S32)
SLUICE_SPEC_MAKER(s64, S64)
SLUICE_SPEC_MAKER(u8, U8)
SLUICE_SPEC_MAKER(u16, U16)
SLUICE_SPEC_MAKER(u32, U32)
SLUICE_SPEC_MAKER(u64, U64)
SLUICE_SPEC_MAKER(f16, F16)
SLUICE_SPEC_MAKER(bf16, BF16)
SLUICE_SPEC_MAKER(f32, F32)
SLUICE_SPEC_MAKER(f64, F64)
SLUICE_SPEC_MAKER(c64, C64)
SLUICE_SPEC_MAKER(c128, C128)
#undef SLUICE_SPEC_MAKER

}  // namespace sluice
