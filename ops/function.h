#pragma once
// Function: a traced graph from parameters (Specs) to outputs (Exprs), with a
// structural hash and equality, so compiling the same computation twice finds
// the cached executable.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice {

class Function {
 public:
  Function() = default;
  Function(std::vector<Spec> inputs, std::vector<Expr> outputs);

  const std::vector<Spec>& inputs() const { return inputs_; }
  const std::vector<Expr>& outputs() const { return outputs_; }
  std::vector<Spec> output_specs() const;
  uint64_t hash() const { return hash_; }
  bool operator==(const Function& o) const;
  // One line per node in topological order: "%3 = add(%1, %2) : f32[4]".
  std::string str() const;

 private:
  std::vector<Spec> inputs_;
  std::vector<Expr> outputs_;
  uint64_t hash_ = 0;
};

// A parameter placeholder: the i-th input of the function being traced.
Expr parameter(int64_t index, const Spec& spec);

// f's outputs computed from `args` inside the function being traced: f's
// graph with each parameter replaced by its argument, so a Function made
// apart (a gradient by grad, a model) becomes part of a larger one, as
// calling a jitted function inside jit does in JAX:
//   Function dloss = sluice::grad(loss, {0, 1});
//   auto step = sluice::trace(specs, [&](Expr w, Expr b, Expr x, Expr y) {
//     Tuple g = sluice::call(dloss, {w, b, x, y});
//     return sluice::tuple(w - 0.1 * g[0], b - 0.1 * g[1]);
//   });
// ShapeError/TypeError when the arguments do not match f's inputs.
Tuple call(const Function& f, const std::vector<Expr>& args);

namespace detail {
Tuple as_tuple(Expr e);
Tuple as_tuple(Tuple t);
template <typename F, size_t... I>
Tuple call_with(F& f, const std::vector<Expr>& args, std::index_sequence<I...>) {
  return as_tuple(f(args[I]...));
}
void check_trace_arity(size_t params, size_t specs);
// args match f's inputs one by one (ShapeError, TypeError naming `op` otherwise).
void check_arguments(std::string_view op, const Function& f, const std::vector<Expr>& args);
}  // namespace detail

// Traces `f`, a callable taking one Expr per spec (or one std::vector<Expr>)
// and returning an Expr or a Tuple, into a Function.
template <size_t N, typename F>
Function trace_n(std::vector<Spec> specs, F&& f) {
  detail::check_trace_arity(N, specs.size());
  std::vector<Expr> args;
  for (size_t i = 0; i < specs.size(); ++i) args.push_back(parameter(static_cast<int64_t>(i), specs[i]));
  return Function(std::move(specs), detail::call_with(f, args, std::make_index_sequence<N>{}));
}

namespace detail {
// How many separate Exprs trace looks for a callable to take, at most.
inline constexpr size_t kMaxTraceArgs = 32;
template <typename F, size_t... I>
constexpr bool takes_exprs(std::index_sequence<I...>) {
  return std::is_invocable_v<F&, decltype((void)I, Expr())...>;
}
// The number of Exprs `F` takes (the fewest that fit), or kMaxTraceArgs + 1.
template <typename F, size_t N = 0>
constexpr size_t expr_arity() {
  if constexpr (N > kMaxTraceArgs || takes_exprs<F>(std::make_index_sequence<N>{}))
    return N;
  else
    return expr_arity<F, N + 1>();
}
}  // namespace detail

template <typename F>
Function trace(std::vector<Spec> specs, F&& f) {
  if constexpr (std::is_invocable_v<F&, const std::vector<Expr>&>) {
    std::vector<Expr> args;
    for (size_t i = 0; i < specs.size(); ++i) args.push_back(parameter(static_cast<int64_t>(i), specs[i]));
    return Function(std::move(specs), detail::as_tuple(f(args)));
  } else {
    constexpr size_t n = detail::expr_arity<F>();
    static_assert(n <= detail::kMaxTraceArgs, "trace: f must take up to 32 Exprs, or one std::vector<Expr>");
    return trace_n<n>(std::move(specs), f);
  }
}

}  // namespace sluice

template <>
struct std::hash<sluice::Function> {
  size_t operator()(const sluice::Function& f) const { return f.hash(); }
};
