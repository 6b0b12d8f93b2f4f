// Reverse-mode rules of windowed reductions, window scatters, cumulative
// scans and the Fourier transforms.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

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

// Each input element gets the cotangents of the windows that hold it: the
// cotangent, spread by the strides and padded by window - 1 - low, summed
// over windows of stride 1 (JAX's _reduce_window_sum_transpose_rule).
Expr spread_windows(const NodePtr& n, const Expr& ct) {
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
  return window_sum(pad(ct, constant(0.0, ct.dtype()), spread), a.dims);
}

WindowOptions window_options(const NodePtr& n) {
  return {.strides = n->attrs.strides, .padding = n->attrs.padding};
}

// Whether a is picked over b by a max (min): larger (smaller), or a NaN over
// a number, as window_scatter_max picks and max propagates.
Expr picked_over(bool max, const Expr& a, const Expr& b) {
  const Expr strictly = max ? a > b : a < b;
  if (!is_float(a.dtype())) return strictly;
  return strictly || (is_nan(a) && bitwise_not(is_nan(b)));
}

}  // namespace

std::vector<Expr> grad_window_sum(const NodePtr& n, const Expr& ct) { return {spread_windows(n, ct)}; }

// Each window's cotangent goes to its first extremum, as JAX's
// select_and_scatter_add: window_scatter_max is that scatter.
std::vector<Expr> grad_window_extremum(const NodePtr& n, const Expr& ct) {
  const Expr x = operand(n);
  const Expr zero = constant(0.0, ct.dtype());
  if (n->op == Op::WindowMax) return {window_scatter_max(x, ct, zero, n->attrs.dims, window_options(n))};
  return {window_scatter_min(x, ct, zero, n->attrs.dims, window_options(n))};
}

std::vector<Expr> grad_window_product(const NodePtr& n, const Expr& ct) {
  const std::vector<int64_t>& dims = n->attrs.dims;
  const WindowOptions o = window_options(n);
  return {grad_of_products(
      operand(n), ct, [&](const Expr& e) { return window_sum(e, dims, o); },
      [&](const Expr& e) { return window_product(e, dims, o); },
      [&](const Expr& g) { return spread_windows(n, g); })};
}

// x passes none (its picks are piecewise constant); init is added to every
// element; each source element gets the cotangent where its window's pick
// lies: the picks are found again over the window's offsets in row-major
// order, as the kernel finds them, so the graph grows with the window.
std::vector<Expr> grad_window_scatter(const NodePtr& n, const Expr& ct) {
  const bool max = n->op == Op::WindowScatterMax;
  const Expr x = operand(n);
  const Attrs& a = n->attrs;
  const Expr padded = pad(x, constant(0.0, x.dtype()), a.padding);
  const Expr inside =
      pad(broadcast(constant(1.0, DType::Pred), x.shape()), constant(0.0, DType::Pred), a.padding);
  const Expr padded_ct = pad(ct, constant(0.0, ct.dtype()), a.padding);
  const Shape& windows = n->operands[1]->spec.shape;
  std::vector<int64_t> lengths;
  for (int k = 0; k < x.rank(); ++k)
    lengths.push_back((windows[k] - 1) * a.strides[static_cast<size_t>(k)] + 1);
  Expr best, best_ct, found;
  for (const std::vector<int64_t>& offset : window_offsets(a.dims)) {
    const Expr value = slice(padded, offset, lengths, a.strides);
    const Expr valid = slice(inside, offset, lengths, a.strides);
    const Expr value_ct = slice(padded_ct, offset, lengths, a.strides);
    if (!found) {
      best = value, best_ct = value_ct, found = valid;
      continue;
    }
    const Expr take = valid && (bitwise_not(found) || picked_over(max, value, best));
    best = select(take, value, best);
    best_ct = select(take, value_ct, best_ct);
    found = found || valid;
  }
  return {Expr(), select(found, best_ct, constant(0.0, ct.dtype())), sum(ct)};
}

std::vector<Expr> grad_cumulative_sum(const NodePtr& n, const Expr& ct) {
  return {cumulative_sum(ct, {.axis = n->attrs.axis, .reverse = !n->attrs.reverse})};
}

std::vector<Expr> grad_cumulative_product(const NodePtr& n, const Expr& ct) {
  const ScanOptions forward{.axis = n->attrs.axis, .reverse = n->attrs.reverse};
  return {grad_of_products(
      operand(n), ct, [&](const Expr& e) { return cumulative_sum(e, forward); },
      [&](const Expr& e) { return cumulative_product(e, forward); },
      [&](const Expr& g) { return cumulative_sum(g, {.axis = forward.axis, .reverse = !forward.reverse}); })};
}

// Each running extremum is the element where it was first reached (a
// record: where the running value changed, or the first step), so its
// cotangent goes there: y = take_along_axis(x, start), with start the index
// of the latest record, and the rule is that gather's (a scatter-add).
std::vector<Expr> grad_cumulative_extremum(const NodePtr& n, const Expr& ct) {
  const Expr x = operand(n), y(n);
  if (x.spec().size() == 0) return {ct};
  const int64_t axis = n->attrs.axis;
  const bool reverse = n->attrs.reverse;
  const int64_t length = x.shape()[static_cast<int>(axis)];
  // y one step back along the scan, the first step's own value at its place.
  std::vector<int64_t> starts(static_cast<size_t>(x.rank()), 0), lengths = x.shape().dims();
  std::vector<PadDim> shift(static_cast<size_t>(x.rank()), PadDim{});
  lengths[static_cast<size_t>(axis)] = length - 1;
  if (reverse) {
    starts[static_cast<size_t>(axis)] = 1;
    shift[static_cast<size_t>(axis)].high = 1;
  } else {
    shift[static_cast<size_t>(axis)].low = 1;
  }
  const Expr previous = pad(slice(y, starts, lengths), constant(0.0, y.dtype()), shift);
  const Expr position = iota(Spec{DType::S64, x.shape()}, axis);
  const Expr first = position == (reverse ? length - 1 : int64_t{0});
  Expr same = y == previous;
  if (is_float(y.dtype())) same = same || (is_nan(y) && is_nan(previous));
  const Expr record = first || bitwise_not(same);
  const Expr start =
      reverse ? cumulative_min(select(record, position, length - 1), {.axis = axis, .reverse = true})
              : cumulative_max(select(record, position, 0), {.axis = axis});
  const Expr zeros = broadcast(constant(0.0, x.dtype()), x.shape());
  return {indexed_add(zeros, detail::along_axis_coordinates(start, x.shape(), axis), ct)};
}

// The DFT matrix and its inverse are symmetric, and transposes do not
// conjugate (JAX's convention): each transform is its own transpose.
std::vector<Expr> grad_fourier(const NodePtr& n, const Expr& ct) {
  return {n->op == Op::Fft ? fft(ct) : ifft(ct)};
}

}  // namespace sluice::grad_rules
