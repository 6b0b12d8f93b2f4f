// scan, while_loop and fori_loop: trace the bodies, check them, and make the
// loop node and its result nodes (ops/detail/loop_attrs.h says how they fit).
#include <algorithm>
#include <memory>
#include <string_view>

#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/detail/loop_attrs.h>
#include <sluice/ops/detail/loop_trace.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::detail {
namespace {

std::vector<Spec> specs_of(const Tuple& t) {
  std::vector<Spec> specs;
  for (const Expr& e : t) specs.push_back(e.spec());
  return specs;
}

// Checked loop arguments; weak scalars take the type a plain number gets.
Tuple arguments(std::string_view op, std::string_view name, const Tuple& t) {
  Tuple out;
  for (size_t i = 0; i < t.size(); ++i) {
    require(t[i], op, infer::cat(name, " ", i));
    out.push_back(strengthen(t[i]));
  }
  return out;
}

// The carry a body returned, checked against `carry`: weak scalars take the
// carry's dtype first, as they would in `c + 1`.
Tuple new_carry(std::string_view op, std::string_view fn, Tuple returned, const std::vector<Spec>& carry) {
  for (size_t i = 0; i < returned.size(); ++i) {
    require(returned[i], op, infer::cat(fn, "'s new carry ", i));
    if (i < carry.size() && is_weak(returned[i])) returned[i] = convert(returned[i], carry[i].dtype);
  }
  infer::loop_carry(op, fn, carry, specs_of(returned));
  return returned;
}

Tuple loop_results(Op op, Tuple operands, LoopAttrs loop) {
  const std::vector<Spec> specs = loop.result_specs();
  Attrs attrs;
  attrs.loop = std::make_shared<const LoopAttrs>(std::move(loop));
  return make_results(op, specs, operands, std::move(attrs));
}

Tuple concat(Tuple a, const Tuple& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

Tuple scan(const ScanBody& f, const Tuple& init_in, const Tuple& xs_in, std::optional<int64_t> length_in,
           const ScanLoopOptions& options) {
  constexpr std::string_view kOp = "scan";
  const Tuple init = arguments(kOp, "init", init_in), xs = arguments(kOp, "xs", xs_in);
  const std::vector<Spec> carry = specs_of(init), stacked = specs_of(xs);
  const int64_t length = infer::scan_length(kOp, stacked, length_in);

  std::vector<Spec> specs = carry;
  for (const Spec& s : stacked) {
    const std::vector<int64_t>& dims = s.shape.dims();
    specs.push_back({s.dtype, Shape(std::vector<int64_t>(dims.begin() + 1, dims.end()))});
  }
  LoopTrace trace(specs);
  const Tuple& params = trace.params();
  const auto k = static_cast<std::ptrdiff_t>(carry.size());
  Tuple out = f(Tuple(params.begin(), params.begin() + k), Tuple(params.begin() + k, params.end()));
  if (out.size() < carry.size())
    infer::shape_error(kOp, "f's result",
                       infer::cat("the new carry's ", carry.size(), " tensors, then the ys"),
                       infer::cat(out.size(), " tensors"));
  Tuple ys(out.begin() + k, out.end());
  for (size_t i = 0; i < ys.size(); ++i) {
    require(ys[i], kOp, infer::cat("f's y ", i));
    ys[i] = strengthen(ys[i]);
  }
  out = concat(new_carry(kOp, "f", Tuple(out.begin(), out.begin() + k), carry), ys);

  LoopAttrs loop;
  loop.body = std::move(trace.close({out}).front());
  loop.carries = k;
  loop.xs = static_cast<int64_t>(xs.size());
  loop.length = length;
  loop.reverse = options.reverse;
  return loop_results(Op::ScanLoop, concat(concat(init, xs), trace.captured()), std::move(loop));
}

Tuple while_loop(const CarryFn& cond, const CarryFn& body, const Tuple& init_in) {
  constexpr std::string_view kOp = "while_loop";
  const Tuple init = arguments(kOp, "init", init_in);
  if (init.empty()) infer::shape_error(kOp, "init", "a carry of at least one tensor", "none");
  const std::vector<Spec> carry = specs_of(init);

  LoopTrace trace(carry);
  Tuple pred = cond(trace.params());
  for (size_t i = 0; i < pred.size(); ++i) require(pred[i], kOp, "cond's result");
  infer::loop_predicate(kOp, specs_of(pred));
  Tuple next = new_carry(kOp, "body", body(trace.params()), carry);

  std::vector<Function> closed = trace.close({next, pred});
  LoopAttrs loop;
  loop.body = std::move(closed[0]);
  loop.cond = std::move(closed[1]);
  loop.carries = static_cast<int64_t>(carry.size());
  return loop_results(Op::WhileLoop, concat(init, trace.captured()), std::move(loop));
}

Tuple fori_loop(int64_t lower, int64_t upper, const ForiBody& body, const Tuple& init_in) {
  constexpr std::string_view kOp = "fori_loop";
  const Tuple init = arguments(kOp, "init", init_in);
  const std::vector<Spec> carry = specs_of(init);
  // The index travels in the carry, ahead of the user's.
  auto step = [&](const Tuple& c, const Tuple&) {
    const Expr i = c.front();
    return concat({i + 1}, new_carry(kOp, "body", body(i, Tuple(c.begin() + 1, c.end())), carry));
  };
  Tuple results = scan(step, concat({constant(std::vector<int64_t>{lower}, Shape())}, init), {},
                       std::max<int64_t>(0, upper - lower), {});
  return Tuple(results.begin() + 1, results.end());
}

}  // namespace sluice::detail
