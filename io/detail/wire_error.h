#pragma once
// How the decoders of wire data (wire_format.cpp, npy.cpp) reject it: a
// WireError in the one message shape, "<where>: <what>: expected <expected>,
// found <found>". Internal: not installed.

#include <string_view>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

[[noreturn]] inline void wire_fail(std::string_view where, std::string_view what) {
  throw WireError(error_message(where, what, "", ""));
}

template <typename Expected, typename Found>
[[noreturn]] void wire_fail(std::string_view where, std::string_view what, const Expected& expected,
                            const Found& found) {
  throw WireError(error_message(where, what, expected, found));
}

}  // namespace sluice
