#include <sluice/ops/shape.h>

#include <string>

#include <sluice/ops/error.h>

namespace sluice {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  if (dims_.size() > static_cast<size_t>(kMaxRank)) {
    throw ShapeError("Shape: expected rank at most " + std::to_string(kMaxRank) + ", found rank " +
                     std::to_string(dims_.size()));
  }
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] < 0) {
      throw ShapeError("Shape: expected dims >= 0, found " + std::to_string(dims_[i]) + " at axis " +
                       std::to_string(i));
    }
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
  for (int64_t d : dims_) {
    s += '[';
    s += std::to_string(d);
    s += ']';
  }
  return s;
}

std::string Spec::str() const { return std::string(dtype_name(dtype)) + shape.str(); }

}  // namespace sluice
