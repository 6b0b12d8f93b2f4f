#include "tests/conformance/op_table.h"

#include <optional>
#include <string>

namespace sluice::conformance {
namespace {

using Inputs = std::vector<Expr>;

Expr weak(const CaseAttrs::Number& n) { return n.is_integer ? weak_scalar(n.i) : weak_scalar(n.d); }

// A binary op on inputs 0 and 1, or with a plain C++ number on one side
// (attrs scalar_a / scalar_b) and the one input on the other.
Builder binary(Expr (*fn)(Expr, Expr)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    if (a.has("scalar_a")) return fn(weak(a.number("scalar_a")), x.at(0));
    if (a.has("scalar_b")) return fn(x.at(0), weak(a.number("scalar_b")));
    return fn(x.at(0), x.at(1));
  };
}

Builder unary(Expr (*fn)(Expr)) {
  return [fn](const CaseAttrs&, const Inputs& x) { return fn(x.at(0)); };
}

Builder reduction(Expr (*fn)(Expr, const ReduceOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), ReduceOptions{.axes = a.ints("axes"), .keep_axes = a.flag("keep_axes")});
  };
}

Builder arg_reduction(Expr (*fn)(Expr, const ArgOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    ArgOptions o;
    if (a.has("axis")) o.axis = a.integer("axis", 0);
    o.keep_axis = a.flag("keep_axis");
    o.tie_break = a.text("tie_break", "low") == "high" ? TieBreak::High : TieBreak::Low;
    return fn(x.at(0), o);
  };
}

std::vector<PadDim> pad_dims(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<PadDim> dims;
  for (const auto& r : rows)
    dims.push_back(PadDim{.low = r.at(0), .high = r.at(1), .interior = r.size() > 2 ? r[2] : 0});
  return dims;
}

Builder window(Expr (*fn)(Expr, const std::vector<int64_t>&, const WindowOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), a.ints("window"),
              WindowOptions{.strides = a.ints("strides"), .padding = pad_dims(a.rows("padding"))});
  };
}

Builder window_scatter(Expr (*fn)(Expr, Expr, Expr, const std::vector<int64_t>&, const WindowOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), x.at(1), x.at(2), a.ints("window"),
              WindowOptions{.strides = a.ints("strides"), .padding = pad_dims(a.rows("padding"))});
  };
}

Builder scan(Expr (*fn)(Expr, const ScanOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), ScanOptions{.axis = a.integer("axis", 0), .reverse = a.flag("reverse")});
  };
}

Builder transform(Expr (*fn)(Expr, std::optional<int64_t>)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), a.has("length") ? std::optional<int64_t>(a.integer("length", 0)) : std::nullopt);
  };
}

// Inputs from `first` on: the dynamic start indices of slice and put_slice.
Inputs tail(const Inputs& x, size_t first) {
  return Inputs(x.begin() + static_cast<std::ptrdiff_t>(first), x.end());
}

Expr slice_case(const CaseAttrs& a, const Inputs& x) {
  if (a.flag("dynamic")) return slice(x.at(0), tail(x, 1), a.ints("lengths"), a.ints("strides"));
  return slice(x.at(0), a.ints("starts"), a.ints("lengths"), a.ints("strides"));
}

Expr put_slice_case(const CaseAttrs& a, const Inputs& x) {
  if (a.flag("dynamic")) return put_slice(x.at(0), tail(x, 2), x.at(1));
  return put_slice(x.at(0), a.ints("starts"), x.at(1));
}

Expr dot_case(const CaseAttrs& a, const Inputs& x) {
  if (a.flag("plain")) return dot(x.at(0), x.at(1));
  return dot(x.at(0), a.ints("contract_a"), a.ints("batch_a"), x.at(1), a.ints("contract_b"),
             a.ints("batch_b"));
}

Expr constant_case(const CaseAttrs& a, const Inputs&) {
  if (a.has("literal")) {
    CaseTensor t = a.tensor("literal");
    return constant(Literal{t.spec, t.bytes});
  }
  return constant(a.number("scalar").d, a.dtype("dtype"));
}

// ---- sorting
Builder sorting(Expr (*fn)(Expr, const SortOptions&)) {
  return [fn](const CaseAttrs& a, const Inputs& x) {
    return fn(x.at(0), SortOptions{.axis = a.integer("axis", 0),
                                   .direction = a.flag("descending") ? SortDirection::Descending
                                                                     : SortDirection::Ascending,
                                   .index_dtype = a.has("index_dtype") ? a.dtype("index_dtype") : DType::S64});
  };
}

// ---- convolution: "same" or explicit "padding" rows (else valid).
Expr conv_case(const CaseAttrs& a, const Inputs& x) {
  const bool explicit_padding = a.has("padding");
  return conv(x.at(0), x.at(1),
              ConvOptions{.strides = a.ints("strides"),
                          .padding = a.flag("same") ? ConvPadding::Same
                                     : explicit_padding ? ConvPadding::Explicit : ConvPadding::Valid,
                          .padding_config = explicit_padding ? pad_dims(a.rows("padding")) : std::vector<PadDim>{},
                          .input_dilation = a.ints("input_dilation"),
                          .kernel_dilation = a.ints("kernel_dilation"),
                          .feature_group_size = a.integer("feature_group_size", 1),
                          .batch_group_size = a.integer("batch_group_size", 1)});
}

// ---- linear algebra: a builder of several results gives the one attrs "result" names.
Expr triangular_solve_case(const CaseAttrs& a, const Inputs& x) {
  const std::string t = a.text("transform_a", "none");
  const TriangularTransform transform = t == "transpose"             ? TriangularTransform::Transpose
                                        : t == "conjugate_transpose" ? TriangularTransform::ConjugateTranspose
                                                                     : TriangularTransform::None;
  return triangular_solve(x.at(0), x.at(1),
                          {.left_side = !a.has("left_side") || a.flag("left_side"),
                           .lower = !a.has("lower") || a.flag("lower"),
                           .transform_a = transform});
}

Expr qr_case(const CaseAttrs& a, const Inputs& x) {
  const QrMode mode = a.text("mode", "reduced") == "complete" ? QrMode::Complete : QrMode::Reduced;
  const Qr f = qr(x.at(0), {.mode = mode});
  return a.text("result", "q") == "q" ? f.q : f.r;
}

Expr lu_case(const CaseAttrs& a, const Inputs& x) {
  const Lu f = lu(x.at(0));
  const std::string r = a.text("result", "p");
  return r == "p" ? f.p : (r == "l" ? f.l : f.u);
}

Expr eigh_case(const CaseAttrs& a, const Inputs& x) {
  const Eigh f = eigh(x.at(0));
  return a.text("result", "values") == "values" ? f.eigenvalues : f.eigenvectors;
}

// The combining functions of reference/custom_reductions.py, by name.
ReduceFn reduce_fn(const std::string& name) {
  static const std::map<std::string, ReduceFn, std::less<>> fns = {
      {"add", [](Expr a, Expr e) { return a + e; }},
      {"add_flipped", [](Expr a, Expr e) { return e + a; }},
      {"multiply", [](Expr a, Expr e) { return a * e; }},
      {"max", [](Expr a, Expr e) { return max(a, e); }},
      {"min", [](Expr a, Expr e) { return min(a, e); }},
      {"logaddexp", [](Expr a, Expr e) { return max(a, e) + log1p(exp(-abs(a - e))); }},
      {"hypot", [](Expr a, Expr e) { return sqrt(a * a + e * e); }},
      {"bitwise_or", [](Expr a, Expr e) { return a | e; }},
      {"max_abs", [](Expr a, Expr e) { return max(a, abs(e)); }},
  };
  auto it = fns.find(name);
  if (it == fns.end()) throw std::invalid_argument("reduce: no combining function named " + name);
  return it->second;
}

// init as written ("inf", "-inf", a number), a weak scalar like a plain C++ number.
Expr init_of(const CaseAttrs& a) { return weak_scalar(std::stod(a.text("init", "0"))); }

Expr reduce_case(const CaseAttrs& a, const Inputs& x) {
  return reduce(x.at(0), init_of(a), reduce_fn(a.text("fn", "")),
                ReduceOptions{.axes = a.ints("axes"), .keep_axes = a.flag("keep_axes")});
}

Expr window_reduce_case(const CaseAttrs& a, const Inputs& x) {
  return window_reduce(x.at(0), init_of(a), reduce_fn(a.text("fn", "")), a.ints("window"),
                       {.strides = a.ints("strides"),
                        .padding = pad_dims(a.rows("padding")),
                        .window_dilations = a.ints("window_dilations")});
}

// The blocks of reference/blocks.py, each with its fallback written as ops.
Expr block_case(const CaseAttrs& a, const Inputs& x) {
  const std::string name = a.text("name", "");
  const Function fallback = trace({x.at(0).spec()}, [&](Expr v) {
    if (name == "axpy_unknown") return v * 2.0 + 1.0;
    const Expr m = reduce_max(v, {.axes = {-1}, .keep_axes = true});
    const Expr e = exp(v - select(is_infinity(m), 0.0, m));
    return e / sum(e, {.axes = {-1}, .keep_axes = true});
  });
  return block(name, fallback, {x.at(0)})[0];
}

Spec spec_of(const CaseAttrs& a) { return Spec{a.dtype("dtype"), Shape(a.ints("shape"))}; }

}  // namespace

const std::map<std::string, Builder, std::less<>>& op_table() {
  static const std::map<std::string, Builder, std::less<>> table = {
  // unary and binary: every one of the catalogue, by its builder's name
#define SLUICE_UNARY_OP(e, name, rule, props, grad) {#name, unary(name)},
#define SLUICE_BINARY_OP(e, name, rule, props, grad) {#name, binary(name)},
#include <sluice/ops/op_list.def>
      // leaves
      {"constant", constant_case},
      {"iota",
       [](const CaseAttrs& a, const Inputs&) {
         return iota(spec_of(a), a.has("axis") ? std::optional<int64_t>(a.integer("axis", 0)) : std::nullopt);
       }},
      {"eye", [](const CaseAttrs& a, const Inputs&) { return eye(spec_of(a)); }},
      // ternary and conversions
      {"select", [](const CaseAttrs&, const Inputs& x) { return select(x.at(0), x.at(1), x.at(2)); }},
      {"clip", [](const CaseAttrs&, const Inputs& x) { return clip(x.at(0), x.at(1), x.at(2)); }},
      {"as_type", [](const CaseAttrs& a, const Inputs& x) { return as_type(x.at(0), a.dtype("dtype")); }},
      {"bitcast", [](const CaseAttrs& a, const Inputs& x) { return bitcast(x.at(0), a.dtype("dtype")); }},
      // shape
      {"reshape",
       [](const CaseAttrs& a, const Inputs& x) { return reshape(x.at(0), Shape(a.ints("shape"))); }},
      {"squeeze", [](const CaseAttrs& a, const Inputs& x) { return squeeze(x.at(0), a.ints("axes")); }},
      {"broadcast",
       [](const CaseAttrs& a, const Inputs& x) {
         return broadcast(x.at(0), Shape(a.ints("shape")), a.ints("axes"));
       }},
      {"transpose", [](const CaseAttrs& a, const Inputs& x) { return transpose(x.at(0), a.ints("axes")); }},
      {"pad",
       [](const CaseAttrs& a, const Inputs& x) { return pad(x.at(0), x.at(1), pad_dims(a.rows("config"))); }},
      {"reverse", [](const CaseAttrs& a, const Inputs& x) { return reverse(x.at(0), a.ints("axes")); }},
      {"slice", slice_case},
      {"put_slice", put_slice_case},
      {"concatenate",
       [](const CaseAttrs& a, const Inputs& x) { return concatenate(x, a.integer("axis", 0)); }},
      {"stack", [](const CaseAttrs& a, const Inputs& x) { return stack(x, a.integer("axis", 0)); }},
      // reductions
      {"sum", reduction(sum)},
      {"product", reduction(product)},
      {"reduce_max", reduction(reduce_max)},
      {"reduce_min", reduction(reduce_min)},
      {"all", reduction(all)},
      {"any", reduction(any)},
      {"argmax", arg_reduction(argmax)},
      {"argmin", arg_reduction(argmin)},
      {"reduce", reduce_case},
      // contractions, windows, scans, transforms
      {"dot", dot_case},
      {"window_sum", window(window_sum)},
      {"window_max", window(window_max)},
      {"window_min", window(window_min)},
      {"window_product", window(window_product)},
      {"window_reduce", window_reduce_case},
      {"block", block_case},
      {"window_scatter_max", window_scatter(window_scatter_max)},
      {"window_scatter_min", window_scatter(window_scatter_min)},
      {"cumulative_sum", scan(cumulative_sum)},
      {"cumulative_product", scan(cumulative_product)},
      {"cumulative_max", scan(cumulative_max)},
      {"cumulative_min", scan(cumulative_min)},
      {"fft", transform(fft)},
      {"ifft", transform(ifft)},
      // ---- indexing
      {"take",
       [](const CaseAttrs& a, const Inputs& x) { return take(x.at(0), x.at(1), a.integer("axis", 0)); }},
      {"take_along_axis",
       [](const CaseAttrs& a, const Inputs& x) {
         return take_along_axis(x.at(0), x.at(1), a.integer("axis", 0));
       }},
      {"gather", [](const CaseAttrs&, const Inputs& x) { return gather(x.at(0), x.at(1)); }},
      {"indexed_add",
       [](const CaseAttrs&, const Inputs& x) { return indexed_add(x.at(0), x.at(1), x.at(2)); }},
      {"indexed_put",
       [](const CaseAttrs&, const Inputs& x) { return indexed_put(x.at(0), x.at(1), x.at(2)); }},
      // ---- sorting
      {"sort", sorting(sort)},
      {"argsort", sorting(argsort)},
      {"top_k_values",
       [](const CaseAttrs& a, const Inputs& x) { return top_k(x.at(0), a.integer("k", 0)).values; }},
      {"top_k_indices",
       [](const CaseAttrs& a, const Inputs& x) { return top_k(x.at(0), a.integer("k", 0)).indices; }},
      // ---- convolution
      {"conv", conv_case},
      // ---- linear algebra
      {"cholesky", [](const CaseAttrs&, const Inputs& x) { return cholesky(x.at(0)); }},
      {"triangular_solve", triangular_solve_case},
      {"solve", [](const CaseAttrs&, const Inputs& x) { return solve(x.at(0), x.at(1)); }},
      {"qr", qr_case},
      {"lu", lu_case},
      {"eigh", eigh_case},
  };
  return table;
}

}  // namespace sluice::conformance
