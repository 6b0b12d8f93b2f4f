// Shapes of the ops that move elements: reshape, squeeze, broadcast,
// transpose, pad, slice, put_slice, concatenate.
#include <algorithm>

#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {
namespace {

std::string shape_str(const Shape& s) { return s.rank() ? s.str() : "[] (scalar)"; }

void require_entries(std::string_view op, std::string_view arg, const Shape& x, size_t n) {
  if (n != static_cast<size_t>(x.rank())) {
    shape_error(op, arg, cat(x.rank(), " entries (one per axis of ", shape_str(x), ")"), cat(n));
  }
}

}  // namespace

void reshape(const Shape& x, const Shape& to) {
  if (x.size() != to.size()) {
    shape_error("reshape", "shape", cat("a shape of ", x.size(), " elements (as ", shape_str(x), ")"),
                cat(shape_str(to), " with ", to.size(), " elements"));
  }
}

std::vector<int64_t> squeeze_axes(const Shape& x, const std::vector<int64_t>& axes) {
  if (axes.empty()) {
    std::vector<int64_t> ones;
    for (int i = 0; i < x.rank(); ++i) {
      if (x[i] == 1) ones.push_back(i);
    }
    return ones;
  }
  std::vector<int64_t> out = normalize_axes("squeeze", "axes", x.rank(), axes, false);
  for (int64_t a : out) {
    if (x[static_cast<int>(a)] != 1) {
      shape_error("squeeze", "axes", cat("axes of size 1 in ", shape_str(x)),
                  cat("axis ", a, " of size ", x[static_cast<int>(a)]));
    }
  }
  return out;
}

std::vector<int64_t> broadcast_axes(const Shape& x, const Shape& to, const std::vector<int64_t>& axes) {
  if (x.rank() > to.rank()) {
    shape_error("broadcast", "shape", cat("rank at least ", x.rank(), " (the rank of x ", shape_str(x), ")"),
                shape_str(to));
  }
  std::vector<int64_t> out = axes;
  if (axes.empty()) {
    for (int i = 0; i < x.rank(); ++i) out.push_back(to.rank() - x.rank() + i);
  }
  require_entries("broadcast", "axes", x, out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = normalize_axis("broadcast", "axes", to.rank(), out[i]);
    if (i > 0 && out[i] <= out[i - 1])
      shape_error("broadcast", "axes", "strictly increasing axes", str(axes));
    const int64_t d = x[static_cast<int>(i)], t = to[static_cast<int>(out[i])];
    if (d != 1 && d != t) {
      shape_error("broadcast", "shape",
                  cat("dim 1 or ", d, " at axis ", out[i], " (for axis ", i, " of x ", shape_str(x), ")"),
                  cat(t, " in ", shape_str(to)));
    }
  }
  return out;
}

std::vector<int64_t> transpose_permutation(const Shape& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int i = x.rank() - 1; i >= 0; --i) out.push_back(i);
    return out;
  }
  require_entries("transpose", "axes", x, axes.size());
  for (int64_t a : axes) out.push_back(normalize_axis("transpose", "axes", x.rank(), a));
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    shape_error("transpose", "axes", cat("a permutation of the ", x.rank(), " axes"), str(axes));
  }
  return out;
}

Shape transpose(const Shape& x, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t a : permutation) dims.push_back(x[static_cast<int>(a)]);
  return Shape(std::move(dims));
}

Shape pad(const Shape& x, const std::vector<PadDim>& config) {
  require_entries("pad", "config", x, config.size());
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const PadDim& p = config[static_cast<size_t>(i)];
    if (p.interior < 0) shape_error("pad", "config", cat("interior >= 0 at axis ", i), cat(p.interior));
    const int64_t d = x[i];
    const int64_t n = p.low + p.high + d + (d > 0 ? (d - 1) * p.interior : 0);
    if (n < 0) {
      shape_error("pad", "config", cat("a padded size >= 0 at axis ", i, " of ", shape_str(x)),
                  cat(n, " (low ", p.low, ", high ", p.high, ", interior ", p.interior, ")"));
    }
    dims.push_back(n);
  }
  return Shape(std::move(dims));
}

std::vector<int64_t> slice_strides(const Shape& x, const std::vector<int64_t>& lengths,
                                   const std::vector<int64_t>& strides) {
  require_entries("slice", "lengths", x, lengths.size());
  if (strides.empty()) return std::vector<int64_t>(lengths.size(), 1);
  require_entries("slice", "strides", x, strides.size());
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] < 1) shape_error("slice", "strides", cat("strides >= 1 (axis ", i, ")"), str(strides));
  }
  return strides;
}

namespace {

// `starts` null for dynamic slices.
Shape slice_shape(const Shape& x, const std::vector<int64_t>* starts, const std::vector<int64_t>& lengths,
                  const std::vector<int64_t>& strides) {
  require_entries("slice", "lengths", x, lengths.size());
  require_entries("slice", "strides", x, strides.size());
  if (starts) require_entries("slice", "starts", x, starts->size());
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t len = lengths[k], d = x[i];
    if (len < 0 || len > d) {
      shape_error("slice", "lengths", cat("lengths in [0, ", d, "] at axis ", i, " of ", shape_str(x)),
                  str(lengths));
    }
    if (strides[k] < 1) shape_error("slice", "strides", cat("strides >= 1 (axis ", i, ")"), str(strides));
    if (starts && ((*starts)[k] < 0 || (*starts)[k] + len > d)) {
      shape_error("slice", "starts",
                  cat("start >= 0 and start + length <= ", d, " at axis ", i, " of ", shape_str(x),
                      " (length ", len, ")"),
                  cat("start ", (*starts)[k]));
    }
    dims.push_back((len + strides[k] - 1) / strides[k]);
  }
  return Shape(std::move(dims));
}

}  // namespace

Shape slice(const Shape& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& lengths,
            const std::vector<int64_t>& strides) {
  return slice_shape(x, &starts, lengths, strides);
}

Shape dynamic_slice(const Shape& x, const std::vector<int64_t>& lengths,
                    const std::vector<int64_t>& strides) {
  return slice_shape(x, nullptr, lengths, strides);
}

void dynamic_put_slice(const Shape& x, const Shape& update) {
  if (update.rank() != x.rank()) {
    shape_error("put_slice", "update", cat("rank ", x.rank(), " (as x ", shape_str(x), ")"),
                shape_str(update));
  }
  for (int i = 0; i < x.rank(); ++i) {
    if (update[i] > x[i]) {
      shape_error("put_slice", "update", cat("dims <= those of x ", shape_str(x)),
                  cat(shape_str(update), " (axis ", i, ")"));
    }
  }
}

std::vector<int64_t> put_slice(const Shape& x, const Shape& update, const std::vector<int64_t>& starts) {
  require_entries("put_slice", "starts", x, starts.size());
  dynamic_put_slice(x, update);
  std::vector<int64_t> clamped;
  for (int i = 0; i < x.rank(); ++i) {
    clamped.push_back(std::clamp<int64_t>(starts[static_cast<size_t>(i)], 0, x[i] - update[i]));
  }
  return clamped;
}

Shape concatenate(const std::vector<Shape>& xs, int64_t axis) {
  if (xs.empty()) shape_error("concatenate", "xs", "at least one tensor", "none");
  const Shape& first = xs[0];
  if (first.rank() == 0) shape_error("concatenate", "xs", "tensors of rank >= 1", "a scalar (xs[0])");
  axis = normalize_axis("concatenate", "axis", first.rank(), axis);
  std::vector<int64_t> dims = first.dims();
  dims[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Shape& s = xs[k];
    bool ok = s.rank() == first.rank();
    for (int i = 0; ok && i < s.rank(); ++i) ok = i == axis || s[i] == first[i];
    if (!ok) {
      shape_error("concatenate", cat("xs[", k, "]"),
                  cat("the shape of xs[0] ", shape_str(first), " except at axis ", axis), shape_str(s));
    }
    dims[static_cast<size_t>(axis)] += s[static_cast<int>(axis)];
  }
  return Shape(std::move(dims));
}

}  // namespace sluice::infer
