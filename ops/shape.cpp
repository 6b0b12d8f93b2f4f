#include <sluice/ops/shape.h>

#include <iterator>
#include <string>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  if (dims_.size() > static_cast<size_t>(kMaxRank)) {
    throw ShapeError(error_message("Shape", "", fmt::format("rank at most {}", kMaxRank),
                                   fmt::format("rank {}", dims_.size())));
  }
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] < 0)
      throw ShapeError(error_message("Shape", fmt::format("axis {}", i), "dims >= 0", dims_[i]));
  }
}

int64_t Shape::size() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(dims_.size());
  int64_t step = 1;
  for (size_t i = dims_.size(); i-- > 0;) {
    s[i] = step;
    step *= dims_[i];
  }
  return s;
}

std::string Shape::str() const {
  std::string s;
  for (int64_t d : dims_) fmt::format_to(std::back_inserter(s), "[{}]", d);
  return s;
}

std::string Spec::str() const { return std::string(dtype_name(dtype)) + shape.str(); }

}  // namespace sluice
