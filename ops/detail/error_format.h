#pragma once
// fmt formats ops' types in messages, as their names: DType ("f32"), Shape
// ("[2][3]") and Spec ("f32[2][3]"); with base/detail/error_format.h's
// error_message, a throw site states its four parts and nothing else:
//   throw ShapeError(error_message("call", "", fmt::format("{} arguments", n), args.size()));
//     -> "call: expected 3 arguments, found 2"
// Internal: not installed, so that no public header needs fmt.

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include <sluice/base/detail/error_format.h>
#include <sluice/ops/dtype.h>
#include <sluice/ops/shape.h>

namespace sluice::detail {
// Writes a name as it is; no format spec ("{}" only). Not formatter<string_view>:
// its format() is defined in fmt/format.h, which these .cpp files need not include.
struct NameFormatter {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  static auto write(std::string_view s, Context& ctx) {
    return std::copy(s.begin(), s.end(), ctx.out());
  }
};
}  // namespace sluice::detail

template <>
struct fmt::formatter<sluice::DType> : sluice::detail::NameFormatter {
  template <typename Context>
  auto format(sluice::DType t, Context& ctx) const {
    return write(sluice::dtype_name(t), ctx);
  }
};
// "[2][3]"; "" for a scalar.
template <>
struct fmt::formatter<sluice::Shape> : sluice::detail::NameFormatter {
  template <typename Context>
  auto format(const sluice::Shape& s, Context& ctx) const {
    return write(s.str(), ctx);
  }
};
// "f32[2][3]"
template <>
struct fmt::formatter<sluice::Spec> : sluice::detail::NameFormatter {
  template <typename Context>
  auto format(const sluice::Spec& s, Context& ctx) const {
    return write(s.str(), ctx);
  }
};
