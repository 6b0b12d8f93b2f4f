// Checks of loops: their xs, their carries, their conditions.
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {

int64_t scan_length(std::string_view op, const std::vector<Spec>& xs, std::optional<int64_t> length) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].shape.rank() < 1)
      shape_error(op, cat("xs ", i), "a tensor of rank >= 1 (steps along axis 0)", xs[i].str());
    if (xs[i].shape[0] != xs[0].shape[0])
      shape_error(op, cat("xs ", i), cat("a leading dim of ", xs[0].shape[0], " (as xs 0)"), xs[i].str());
  }
  if (xs.empty()) {
    if (!length) shape_error(op, "length", "a number of steps when there are no xs", "none");
    if (*length < 0) shape_error(op, "length", "a number of steps >= 0", cat(*length));
    return *length;
  }
  if (length && *length != xs[0].shape[0])
    shape_error(op, "length", cat(xs[0].shape[0], " (the leading dim of xs)"), cat(*length));
  return xs[0].shape[0];
}

void loop_carry(std::string_view op, std::string_view fn, const std::vector<Spec>& carry,
                const std::vector<Spec>& returned) {
  if (returned.size() != carry.size())
    shape_error(op, cat(fn, "'s new carry"), cat(carry.size(), " tensors (as init)"), cat(returned.size()));
  for (size_t i = 0; i < carry.size(); ++i) {
    if (returned[i] == carry[i]) continue;
    const std::string arg = cat(fn, "'s new carry ", i);
    const std::string expected = cat(carry[i], " (as init ", i, ")");
    if (returned[i].dtype != carry[i].dtype) type_error(op, arg, expected, returned[i].str());
    shape_error(op, arg, expected, returned[i].str());
  }
}

void loop_predicate(std::string_view op, const std::vector<Spec>& returned) {
  if (returned.size() != 1) shape_error(op, "cond", "one pred scalar", cat(returned.size(), " tensors"));
  if (returned[0].dtype != DType::Pred) type_error(op, "cond", "a pred scalar", returned[0].str());
  if (returned[0].shape.rank() != 0) shape_error(op, "cond", "a pred scalar", returned[0].str());
}

}  // namespace sluice::infer
