// Reverse-mode rules of windowed reductions, the cumulative sum and the
// Fourier transforms.
#include <limits>

#include "ops/grad_rules.h"
#include "ops/ops.h"

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }

// Every offset within a window, as indices per axis (the first axis slowest).
std::vector<std::vector<int64_t>> window_offsets(const std::vector<int64_t>& dims) {
  std::vector<std::vector<int64_t>> offsets{{}};
  for (int64_t d : dims) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& o : offsets) {
      for (int64_t k = 0; k < d; ++k) {
        next.push_back(o);
        next.back().push_back(k);
      }
    }
    offsets = std::move(next);
  }
  return offsets;
}

}  // namespace

// Each input element gets the cotangents of the windows that hold it: the
// cotangent, spread by the strides and padded by window - 1 - low, summed
// over windows of stride 1 (JAX's _reduce_window_sum_transpose_rule).
std::vector<Expr> grad_window_sum(const NodePtr& n, const Expr& ct) {
  const Shape& x = n->operands[0]->spec.shape;
  const Attrs& a = n->attrs;
  std::vector<PadDim> spread;
  for (int k = 0; k < x.rank(); ++k) {
    const auto i = static_cast<size_t>(k);
    const int64_t covered = (ct.shape()[k] - 1) * a.strides[i] + 1;
    const int64_t before = a.dims[i] - a.padding[i].low - 1;
    spread.push_back(
        {.low = before, .high = x[k] + a.dims[i] - 1 - covered - before, .interior = a.strides[i] - 1});
  }
  return {window_sum(pad(ct, constant(0.0, ct.dtype()), spread), a.dims)};
}

// For each offset within the window, the elements at that offset of every
// window that equal the window's extremum share its cotangent (ties split
// equally, as reduce_max's); each share is spread back to where its
// elements lie. The graph grows with the window's size.
std::vector<Expr> grad_window_extremum(const NodePtr& n, const Expr& ct) {
  Expr x = operand(n), y(n);
  const Attrs& a = n->attrs;
  const double fill = n->op == Op::WindowMax ? -std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::infinity();
  std::vector<PadDim> around;
  for (const PadDim& p : a.padding) around.push_back({.low = p.low, .high = p.high, .interior = 0});
  Expr padded = pad(x, constant(fill, x.dtype()), around);
  std::vector<int64_t> lengths;
  for (int k = 0; k < x.rank(); ++k)
    lengths.push_back((ct.shape()[k] - 1) * a.strides[static_cast<size_t>(k)] + 1);
  std::vector<Expr> hits;
  Expr count;
  for (const std::vector<int64_t>& offset : window_offsets(a.dims)) {
    Expr hit = as_type(slice(padded, offset, lengths, a.strides) == y, x.dtype());
    count = count ? count + hit : hit;
    hits.push_back(hit);
  }
  const Expr share = ct / count;
  Expr total;
  size_t i = 0;
  for (const std::vector<int64_t>& offset : window_offsets(a.dims)) {
    std::vector<PadDim> back;
    for (int k = 0; k < x.rank(); ++k) {
      const auto j = static_cast<size_t>(k);
      back.push_back({.low = offset[j],
                      .high = padded.shape()[k] - offset[j] - lengths[j],
                      .interior = a.strides[j] - 1});
    }
    Expr part = pad(hits[i++] * share, constant(0.0, x.dtype()), back);
    total = total ? total + part : part;
  }
  std::vector<int64_t> starts;
  for (const PadDim& p : a.padding) starts.push_back(p.low);
  return {slice(total, starts, x.shape().dims())};
}

std::vector<Expr> grad_cumulative_sum(const NodePtr& n, const Expr& ct) {
  return {cumulative_sum(ct, {.axis = n->attrs.axis, .reverse = !n->attrs.reverse})};
}

// The DFT matrix and its inverse are symmetric, and transposes do not
// conjugate (JAX's convention): each transform is its own transpose.
std::vector<Expr> grad_fourier(const NodePtr& n, const Expr& ct) {
  return {n->op == Op::Fft ? fft(ct) : ifft(ct)};
}

}  // namespace sluice::grad_rules
