#include <sluice/ops/shape.h>

#include <algorithm>
#include <iterator>
#include <string>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw ShapeError(error_message("Shape", "", fmt::format("rank at most {}", kMaxRank),
                                   fmt::format("rank {}", dims.size())));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      throw ShapeError(error_message("Shape", fmt::format("axis {}", i), "dims >= 0", dims[i]));
    dims_[i] = dims[i];
  }
  rank_ = static_cast<int>(dims.size());
}

int64_t Shape::size() const {
  int64_t n = 1;
  for (int64_t d : dims()) n *= d;
  return n;
}

bool Shape::operator==(const Shape& o) const {
  return rank_ == o.rank_ && std::equal(dims_.begin(), dims_.begin() + rank_, o.dims_.begin());
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(static_cast<size_t>(rank_));
  int64_t step = 1;
  for (size_t i = s.size(); i-- > 0;) {
    s[i] = step;
    step *= dims_[i];
  }
  return s;
}

std::string Shape::str() const {
  std::string s;
  for (int64_t d : dims()) fmt::format_to(std::back_inserter(s), "[{}]", d);
  return s;
}

std::string Spec::str() const { return std::string(dtype_name(dtype)) + shape.str(); }

}  // namespace sluice
