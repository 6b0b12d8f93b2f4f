// Reverse mode through loops. A scan's gradient is another scan, as JAX's:
// the forward runs again keeping the carry each step starts from, then the
// body's pullback (a grad of the body, traced once) runs over the steps in
// the opposite order, carrying the carry's cotangent and summing the
// captured values' cotangents, and stacking the xs' cotangents at their
// rows. A while_loop has no gradient: its step count is known only when it
// runs (as JAX says of lax.while_loop).

#include <optional>
#include <sstream>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/detail/loop_attrs.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::grad_rules {
namespace {

Expr zeros_of(const Spec& s) { return broadcast(constant(0.0, s.dtype), s.shape); }

Tuple part(const Tuple& t, size_t from, size_t count) {
  return Tuple(t.begin() + static_cast<std::ptrdiff_t>(from), t.begin() + static_cast<std::ptrdiff_t>(from + count));
}

Tuple operator+(Tuple a, const Tuple& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string carry_str(const Function& body, size_t carries) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < carries; ++i) s << (i ? ", " : "") << body.inputs()[i].str();
  s << ")";
  return s.str();
}

// Where each differentiable (real floating) value sits among all of them.
std::vector<size_t> floating(const std::vector<Spec>& specs, size_t from, size_t to) {
  std::vector<size_t> at;
  for (size_t i = from; i < to; ++i)
    if (is_float(specs[i].dtype)) at.push_back(i);
  return at;
}

}  // namespace

Function pullback_of(const Function& f, const std::vector<size_t>& outputs, const std::vector<int>& wrt) {
  const std::vector<Spec>& in = f.inputs();
  std::vector<Spec> specs = in;
  const std::vector<Spec> out = f.output_specs();
  for (size_t j : outputs) specs.push_back(out[j]);
  return grad(trace(specs,
                    [&](std::vector<Expr> p) {
                      const Tuple o =
                          call(f, Tuple(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(in.size())));
                      Expr total;
                      for (size_t k = 0; k < outputs.size(); ++k) {
                        const Expr t = sum(o[outputs[k]] * p[in.size() + k]);
                        total = total ? total + t : t;
                      }
                      return total;
                    }),
              wrt);
}

std::vector<Expr> grad_loop(const NodePtr& loop, const std::vector<Expr>& result_cts) {
  const LoopAttrs& a = *loop->attrs.loop;
  const Function& body = a.body;
  const auto k = static_cast<size_t>(a.carries), nx = static_cast<size_t>(a.xs);
  if (loop->op == Op::WhileLoop)
    infer::type_error("grad", infer::cat("while_loop with carry ", carry_str(body, k)),
                      "a loop of a known number of steps (scan, fori_loop): reverse mode cannot go through a "
                      "while_loop, whose step count is known only when it runs",
                      "a while_loop on the path to the output");

  const std::vector<Spec>& in_specs = body.inputs();  // carry, a row of each xs, captured
  const std::vector<Spec> out_specs = [&] {           // new carry, ys
    std::vector<Spec> specs;
    for (const Expr& o : body.outputs()) specs.push_back(o.spec());
    return specs;
  }();
  for (const std::vector<Spec>* specs : {&in_specs, &out_specs})
    for (const Spec& s : *specs)
      if (is_complex(s.dtype))
        infer::type_error("grad", infer::cat("scan with carry ", carry_str(body, k)),
                          "real values in the scan's body (a gradient through a complex scan is not implemented)",
                          s.str());
  const size_t ny = out_specs.size() - k, ncap = in_specs.size() - k - nx;
  const std::vector<size_t> dc = floating(in_specs, 0, k), dx = floating(in_specs, k, k + nx),
                            dcap = floating(in_specs, k + nx, in_specs.size()), dy = floating(out_specs, k, k + ny);
  std::vector<Expr> cts(loop->operands.size());
  if (dc.empty() && dy.empty()) return cts;  // nothing differentiable comes out

  // The body's pullback: (carry, x, captured, cotangents of the floating
  // new carry and ys) -> cotangents of the floating carry, x and captured.
  std::vector<int> wrt;
  for (const std::vector<size_t>* at : {&dc, &dx, &dcap})
    for (size_t i : *at) wrt.push_back(static_cast<int>(i));
  if (wrt.empty()) return cts;
  std::vector<size_t> with_ct = dc;
  with_ct.insert(with_ct.end(), dy.begin(), dy.end());
  const Function pullback = pullback_of(body, with_ct, wrt);

  const Tuple operands(loop->operands.begin(), loop->operands.end());
  const Tuple init = part(operands, 0, k), xs = part(operands, k, nx), captured = part(operands, k + nx, ncap);
  const std::optional<int64_t> length = nx == 0 ? std::optional(a.length) : std::nullopt;

  // The forward again, its extra ys the carry each step starts from.
  const Tuple forward = detail::scan(
      [&](const Tuple& c, const Tuple& x) { return call(body, c + x + captured) + c; }, init, xs, length,
      {.reverse = a.reverse});
  const Tuple carries = part(forward, k + ny, k);

  // Backward: carry (cotangent of each floating carry, sum of each floating
  // captured value's cotangent), rows (the step's carry, x, ys' cotangents).
  Tuple back_init;
  for (size_t i : dc) back_init.push_back(result_cts[i] ? result_cts[i] : zeros_of(in_specs[i]));
  for (size_t i : dcap) back_init.push_back(zeros_of(in_specs[i]));
  Tuple rows = carries + xs;
  const std::vector<Spec> results = a.result_specs();
  for (size_t j : dy) rows.push_back(result_cts[j] ? result_cts[j] : zeros_of(results[j]));
  const Tuple back = detail::scan(
      [&](const Tuple& c, const Tuple& row) {
        Tuple args = part(row, 0, k + nx) + captured;
        args = args + part(c, 0, dc.size()) + part(row, k + nx, dy.size());
        const Tuple g = call(pullback, args);  // floating carry, x, captured, in that order
        Tuple next = part(g, 0, dc.size());
        for (size_t q = 0; q < dcap.size(); ++q) next.push_back(c[dc.size() + q] + g[dc.size() + dx.size() + q]);
        return next + part(g, dc.size(), dx.size());
      },
      back_init, rows, rows.empty() ? std::optional(a.length) : std::nullopt, {.reverse = !a.reverse});

  for (size_t p = 0; p < dc.size(); ++p) cts[dc[p]] = back[p];
  for (size_t q = 0; q < dcap.size(); ++q) cts[dcap[q]] = back[dc.size() + q];
  for (size_t p = 0; p < dx.size(); ++p) cts[dx[p]] = back[dc.size() + dcap.size() + p];
  return cts;
}

}  // namespace sluice::grad_rules
