// Reductions with a combining function of the user's own (Nx.Backend's
// reduce and window_reduce). fn is traced once over two scalars to check
// that it is elementwise and to recognise add, multiply, max and min, which
// become the built-in reductions (their results, kernels and gradients).
// Any other fn is applied as written, to whole tensors at once: its ops are
// elementwise, so fn(acc, row) over rows combines every column in one call.
// A reduce folds its reduced elements pairwise (fn over one half and the
// other, then again over what is left: each round one vectorized region);
// a window_reduce combines the window's strided slices one offset after
// another. No backend needs code of its own for either.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/detail/shape_inference.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/graph_walk.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace sluice {

namespace {

enum class Known { None, Sum, Product, Max, Min };

// fn checked over two scalars of dtype t: one scalar of t back, made of
// elementwise ops wherever it depends on its arguments. Add, multiply, max
// or min of the two arguments (either way round) is recognised.
Known check_fn(std::string_view op, const ReduceFn& fn, DType t) {
  if (!fn) infer::type_error(op, "fn", "a function of (acc, element)", "none");
  const Spec scalar{t, Shape{}};
  const Expr acc = parameter(0, scalar), element = parameter(1, scalar);
  const Expr out = fn(acc, element);
  if (!out) infer::type_error(op, "fn", "an Expr", "none");
  if (out.dtype() != t)
    infer::type_error(op, "fn", infer::cat("a result of the tensor's dtype ", dtype_name(t)),
                      dtype_name(out.dtype()));
  if (out.rank() != 0) infer::shape_error(op, "fn", "a scalar result", out.spec().str());
  // What depends on acc or element must be elementwise; nodes of the
  // enclosing function that fn captures do not, whatever they are. (The walk
  // is iterative: a captured value may sit on a graph 100k nodes deep.)
  std::unordered_set<const Node*> dependent = {acc.node().get(), element.node().get()};
  for (const NodePtr& node : passes::topological_order({out})) {
    if (dependent.contains(node.get())) continue;
    const bool d = std::any_of(node->operands.begin(), node->operands.end(),
                               [&](const NodePtr& o) { return dependent.contains(o.get()); });
    if (!d) continue;
    const OpFamily f = op_family(node->op);
    if (f != OpFamily::Unary && f != OpFamily::Binary && f != OpFamily::Ternary && f != OpFamily::Convert)
      infer::type_error(op, "fn", "elementwise ops of its two scalars", op_name(node->op));
    dependent.insert(node.get());
  }
  const Node& n = *out.node();
  const bool of_both =
      n.operands.size() == 2 && ((n.operands[0] == acc.node() && n.operands[1] == element.node()) ||
                                 (n.operands[0] == element.node() && n.operands[1] == acc.node()));
  if (!of_both) return Known::None;
  switch (n.op) {
    case Op::Add: return Known::Sum;
    case Op::Multiply: return Known::Product;
    case Op::Max: return Known::Max;
    case Op::Min: return Known::Min;
    default: return Known::None;
  }
}

// init is a constant equal to the identity of `known` in dtype t: combining
// it changes nothing, and the built-in reduction stands alone.
bool is_identity(const Expr& init, Known known, DType t) {
  const Node& n = *init.node();
  if (n.op != Op::Constant || !n.attrs.literal) return false;
  const Literal& value = *n.attrs.literal;
  const auto equals = [&](double v) { return value == Literal::scalar(t, v); };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (known) {
    case Known::Sum: return equals(0.0) || equals(-0.0);
    case Known::Product: return equals(1.0);
    case Known::Max: return equals(-kInf);  // an integer's lowest, as conversion saturates
    case Known::Min: return equals(kInf);
    case Known::None: return false;
  }
  return false;
}

// The scalar init in x's dtype.
Expr init_of(std::string_view op, Expr init, DType t) {
  detail::require(init, op, "init");
  if (init.rank() != 0) infer::shape_error(op, "init", "a scalar", init.spec().str());
  return detail::convert(init, t);
}

// x with `axis` folded pairwise by fn down to one: fn(first half, second
// half), a leftover odd one carried along, until one remains. Each round is
// one elementwise application of fn over half of what is left, so the whole
// fold does the work of one pass or so, in log2 of the axis rounds.
Expr fold_pairwise(const ReduceFn& fn, Expr x, int axis) {
  for (int64_t k = x.shape()[axis]; k > 1; k = x.shape()[axis]) {
    const int64_t half = k / 2;
    const auto part = [&](int64_t from, int64_t length) {
      std::vector<int64_t> starts(static_cast<size_t>(x.rank()), 0), lengths = x.shape().dims();
      starts[static_cast<size_t>(axis)] = from;
      lengths[static_cast<size_t>(axis)] = length;
      return slice(x, starts, lengths);
    };
    Expr folded = fn(part(0, half), part(half, half));
    if (k % 2 == 1) folded = concatenate({folded, part(2 * half, 1)}, axis);
    x = folded;
  }
  return x;
}

}  // namespace

Expr reduce(Expr x, Expr init, const ReduceFn& fn, const ReduceOptions& o) {
  detail::require(x, "reduce", "x");
  x = detail::strengthen(x);
  const DType t = x.dtype();
  init = init_of("reduce", init, t);
  const std::vector<int64_t> axes = infer::normalize_axes("reduce", "axes", x.rank(), o.axes, true);
  const Shape out_shape = infer::reduce(x.shape(), axes, o.keep_axes);
  const Known known = check_fn("reduce", fn, t);
  if (known != Known::None) {
    const ReduceOptions r{.axes = axes, .keep_axes = o.keep_axes};
    Expr built_in = known == Known::Sum       ? sum(x, r)
                    : known == Known::Product ? product(x, r)
                    : known == Known::Max     ? reduce_max(x, r)
                                              : reduce_min(x, r);
    built_in =
        as_type(built_in, t);  // integer sums and products accumulate in 64 bits: the same bits mod 2^n
    return is_identity(init, known, t) ? built_in : fn(broadcast(init, out_shape), built_in);
  }
  int64_t k = 1, m = 1;
  std::vector<int64_t> order = axes;  // reduced axes first, then the kept ones
  for (int64_t a : axes) k *= x.shape()[static_cast<int>(a)];
  for (int i = 0; i < x.rank(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) {
      order.push_back(i);
      m *= x.shape()[i];
    }
  if (k == 0 || m == 0) return broadcast(init, out_shape);
  if (axes.empty())
    return fn(broadcast(init, out_shape), reshape(x, out_shape));  // a scalar: nothing to fold
  // Reduced axes last (as a row sum's): [m][k] folded along its rows, as it
  // lies; otherwise [k][m] folded across, moved there first unless it lies so.
  const bool last =
      axes.front() == x.rank() - static_cast<int64_t>(axes.size()) && axes.back() == x.rank() - 1;
  const Expr folded = last ? fold_pairwise(fn, reshape(x, Shape{m, k}), 1)
                           : fold_pairwise(fn, reshape(transpose(x, order), Shape{k, m}), 0);
  return reshape(fn(broadcast(init, folded.shape()), folded), out_shape);
}

Expr window_reduce(Expr x, Expr init, const ReduceFn& fn, const std::vector<int64_t>& window,
                   const WindowReduceOptions& o) {
  detail::require(x, "window_reduce", "x");
  x = detail::strengthen(x);
  const DType t = x.dtype();
  init = init_of("window_reduce", init, t);
  std::vector<int64_t> dims = window, strides = o.strides, dilations = o.window_dilations;
  std::vector<PadDim> padding = o.padding;
  infer::window_options("window_reduce", x.shape(), dims, strides, padding);
  if (dilations.empty()) dilations.assign(dims.size(), 1);
  if (dilations.size() != dims.size())
    infer::shape_error("window_reduce", "window_dilations", infer::cat("one per axis (", dims.size(), ")"),
                       infer::cat(dilations.size()));
  std::vector<int64_t> spans;  // each window's extent, dilation included
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dilations[d] < 1)
      infer::shape_error("window_reduce", "window_dilations", infer::cat(">= 1 (axis ", d, ")"),
                         infer::cat(dilations[d]));
    spans.push_back((dims[d] - 1) * dilations[d] + 1);
  }
  const Shape out_shape = infer::window("window_reduce", x.shape(), spans, strides, padding);
  const Known known = check_fn("window_reduce", fn, t);
  const bool undilated = std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d == 1; });
  if (known != Known::None && undilated && is_identity(init, known, t)) {
    // The built-in windows pad with the identity too.
    const WindowOptions w{.strides = strides, .padding = padding};
    const Expr built_in = known == Known::Sum       ? window_sum(x, dims, w)
                          : known == Known::Product ? window_product(x, dims, w)
                          : known == Known::Max     ? window_max(x, dims, w)
                                                    : window_min(x, dims, w);
    return as_type(built_in, t);
  }
  // Padding holds init (as XLA's reduce_window); each offset of the window
  // reads one strided slice of the padded x, of the output's shape.
  std::vector<PadDim> pads;
  for (const PadDim& p : padding) pads.push_back({.low = p.low, .high = p.high, .interior = 0});
  const Expr padded = pad(x, init, pads);
  std::vector<int64_t> lengths;
  for (size_t d = 0; d < dims.size(); ++d)
    lengths.push_back(
        out_shape[static_cast<int>(d)] == 0 ? 0 : (out_shape[static_cast<int>(d)] - 1) * strides[d] + 1);
  Expr acc = broadcast(init, out_shape);
  std::vector<int64_t> offset(dims.size(), 0);
  for (bool more = out_shape.size() > 0; more;) {
    std::vector<int64_t> starts;
    for (size_t d = 0; d < dims.size(); ++d) starts.push_back(offset[d] * dilations[d]);
    acc = fn(acc, slice(padded, starts, lengths, strides));
    // The next offset, row-major; done after the last.
    more = false;
    for (size_t d = dims.size(); d-- > 0;) {
      if (++offset[d] < dims[d]) {
        more = true;
        break;
      }
      offset[d] = 0;
    }
  }
  return acc;
}

}  // namespace sluice
