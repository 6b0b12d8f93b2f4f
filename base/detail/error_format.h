#pragma once
// error_message() of base/error.h with `expected` and `found` formatted by
// fmt (strings as they are, numbers in decimal, and any type fmt formats:
// ops/detail/error_format.h adds DType, Shape and Spec), so that a throw site
// states its four parts and nothing else:
//   throw ValueError(error_message("credit", "", "at least 1 message", n));
//     -> "credit: expected at least 1 message, found 0"
// Internal: not installed, so that no public header needs fmt.

#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include <sluice/base/error.h>

namespace sluice {

namespace detail {
inline std::string_view error_text(std::string_view s) { return s; }
template <typename T>
requires(!std::is_convertible_v<const T&, std::string_view>) std::string error_text(const T& v) {
  return fmt::format("{}", v);
}
}  // namespace detail

template <typename Expected, typename Found>
std::string error_message(std::string_view where, std::string_view what, const Expected& expected,
                          const Found& found) {
  return error_message(where, what, std::string_view(detail::error_text(expected)),
                       std::string_view(detail::error_text(found)));
}

}  // namespace sluice
