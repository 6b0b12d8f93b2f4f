// Messages and axis normalisation shared by every inference function.
#include <algorithm>
#include <iterator>

#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {

std::string str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) fmt::format_to(std::back_inserter(s), "{}{}", i ? ", " : "", v[i]);
  s += ']';
  return s;
}

void append(std::string& s, std::string_view v) { s += v; }
void append(std::string& s, DType v) { s += dtype_name(v); }
void append(std::string& s, const Spec& v) { s += v.str(); }
void append(std::string& s, const std::vector<int64_t>& v) { s += str(v); }
void append(std::string& s, long long v) { fmt::format_to(std::back_inserter(s), "{}", v); }
void append(std::string& s, unsigned long long v) { fmt::format_to(std::back_inserter(s), "{}", v); }

void shape_error(std::string_view op, std::string_view arg, std::string_view expected,
                 std::string_view found) {
  throw ShapeError(error_message(op, cat("argument ", arg), expected, found));
}

void type_error(std::string_view op, std::string_view arg, std::string_view expected,
                std::string_view found) {
  throw TypeError(error_message(op, cat("argument ", arg), expected, found));
}

Shape result_shape(std::string_view op, std::vector<int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    shape_error(op, "result", cat("rank at most ", kMaxRank), cat("rank ", dims.size(), " ", str(dims)));
  }
  return Shape(std::move(dims));
}

int64_t normalize_axis(std::string_view op, std::string_view arg, int rank, int64_t axis) {
  if (axis < -rank || axis >= rank) {
    shape_error(op, arg, cat("an axis in [", -rank, ", ", rank, ") for rank ", rank), cat(axis));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(std::string_view op, std::string_view arg, int rank,
                                    const std::vector<int64_t>& axes, bool empty_means_all) {
  std::vector<int64_t> out;
  if (axes.empty() && empty_means_all) {
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(normalize_axis(op, arg, rank, a));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    shape_error(op, arg, "distinct axes", str(axes));
  }
  return out;
}

}  // namespace sluice::infer
