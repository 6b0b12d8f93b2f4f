#pragma once
// Loops as ops, with JAX's semantics (lax.scan, lax.while_loop,
// lax.fori_loop; Nx's while). A body is a C++ callable traced once, over
// Exprs of the carry's specs, into a Function the loop node holds; a backend
// compiles it once and runs it step after step without leaving compiled code.
// A body may use Exprs of the enclosing function (a model's weights): they
// become operands of the loop. A carry, an x and a y are each one Expr or a
// Tuple of them.
//
//   // running sum of the rows of xs f32[n][1024], and each partial sum
//   Tuple r = sluice::scan([](Expr c, Expr x) { return sluice::tuple(c + x, c + x); },
//                          zeros_f32_1024, xs);            // r = {final sum, sums f32[n][1024]}
//   Expr n = sluice::while_loop([](Expr i) { return i < 10; },
//                               [](Expr i) { return i + 1; }, start);
//
// Errors (TypeError, ShapeError) name the loop, the argument, what was
// expected and what was found: a new carry whose specs differ from init's,
// a cond that is not a pred scalar, xs whose leading dims differ.
// Thread safety: as tracing: one function is traced on one thread.

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>

#include <sluice/ops/expr.h>
#include <sluice/ops/function.h>

namespace sluice {

// One field, so that `{.reverse = true}` leaves none out (g++ 12 warns under
// -Wextra of a designated initialiser that omits trailing members).
struct ScanLoopOptions {
  // Walks xs from the last row to the first (steps n-1 down to 0); ys are
  // still stored at the index of the x they came from (as JAX).
  bool reverse = false;
};

namespace detail {

// One Expr, or a Tuple of them: what a carry, an x or a y may be.
template <typename T>
concept LoopValue = std::same_as<std::remove_cvref_t<T>, Expr> || std::same_as<std::remove_cvref_t<T>, Tuple>;

template <typename T>
T unpack(const Tuple& t) {
  if constexpr (std::same_as<T, Expr>)
    return t.at(0);
  else
    return t;
}

using ScanBody = std::function<Tuple(const Tuple& carry, const Tuple& x)>;
using CarryFn = std::function<Tuple(const Tuple& carry)>;
using ForiBody = std::function<Tuple(const Expr& i, const Tuple& carry)>;

// length: the steps when there are no xs (none: xs' leading dim).
Tuple scan(const ScanBody& f, const Tuple& init, const Tuple& xs, std::optional<int64_t> length,
           const ScanLoopOptions& options);
Tuple while_loop(const CarryFn& cond, const CarryFn& body, const Tuple& init);
Tuple fori_loop(int64_t lower, int64_t upper, const ForiBody& body, const Tuple& init);

}  // namespace detail

// scan(f, init, xs): f(carry, x) returns a Tuple of the new carry's tensors
// (as many as init has) followed by the ys (any number, none included), or
// one Expr when the carry is one tensor and there are no ys. x is row i of
// xs (each of xs along axis 0; all must have the same leading dim). Returns
// the final carry's tensors followed by the ys, each stacked to [n, ...].
// With zero steps the carry comes back as init and the ys are empty [0, ...].
template <typename F, detail::LoopValue C, detail::LoopValue X>
Tuple scan(F&& f, const C& init, const X& xs, const ScanLoopOptions& options = {}) {
  using CT = std::remove_cvref_t<C>;
  using XT = std::remove_cvref_t<X>;
  static_assert(std::is_invocable_v<F&, CT, XT>,
                "scan: f takes (carry, x), each an Expr or a Tuple as init and xs are");
  return detail::scan(
      [&f](const Tuple& c, const Tuple& x) {
        return detail::as_tuple(f(detail::unpack<CT>(c), detail::unpack<XT>(x)));
      },
      detail::as_tuple(init), detail::as_tuple(xs), std::nullopt, options);
}

// scan(f, init, length): no xs, `length` steps (as JAX's scan with xs=None);
// f(carry) returns as above.
template <typename F, detail::LoopValue C>
Tuple scan(F&& f, const C& init, int64_t length, const ScanLoopOptions& options = {}) {
  using CT = std::remove_cvref_t<C>;
  static_assert(std::is_invocable_v<F&, CT>,
                "scan: without xs, f takes the carry alone, an Expr or a Tuple as init is");
  return detail::scan(
      [&f](const Tuple& c, const Tuple&) { return detail::as_tuple(f(detail::unpack<CT>(c))); },
      detail::as_tuple(init), Tuple{}, length, options);
}

// while_loop(cond, body, init): while cond(carry) (a pred scalar) is true,
// carry = body(carry). Returns the final carry, an Expr or a Tuple as init is.
template <typename Cond, typename Body, detail::LoopValue C>
std::remove_cvref_t<C> while_loop(Cond&& cond, Body&& body, const C& init) {
  using CT = std::remove_cvref_t<C>;
  return detail::unpack<CT>(
      detail::while_loop([&cond](const Tuple& c) { return detail::as_tuple(cond(detail::unpack<CT>(c))); },
                         [&body](const Tuple& c) { return detail::as_tuple(body(detail::unpack<CT>(c))); },
                         detail::as_tuple(init)));
}

// fori_loop(lower, upper, body, init): carry = body(i, carry) for i from
// lower up to upper - 1, i an s64 scalar. Bounds are static (C++ integers);
// upper <= lower runs no step. A scan underneath (as JAX does for static
// bounds), so a gradient can go through it.
template <typename Body, detail::LoopValue C>
std::remove_cvref_t<C> fori_loop(int64_t lower, int64_t upper, Body&& body, const C& init) {
  using CT = std::remove_cvref_t<C>;
  return detail::unpack<CT>(detail::fori_loop(
      lower, upper,
      [&body](const Expr& i, const Tuple& c) { return detail::as_tuple(body(i, detail::unpack<CT>(c))); },
      detail::as_tuple(init)));
}

}  // namespace sluice
