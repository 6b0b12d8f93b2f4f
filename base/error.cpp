#include <sluice/base/error.h>

namespace sluice {

std::string error_message(std::string_view where, std::string_view what, std::string_view expected,
                          std::string_view found) {
  std::string s;
  s.reserve(where.size() + what.size() + expected.size() + found.size() + 24);
  auto part = [&s](std::string_view p) {
    if (p.empty()) return;
    if (!s.empty()) s += ": ";
    s += p;
  };
  part(where);
  part(what);
  if (!expected.empty() || !found.empty()) {
    if (!s.empty()) s += ": ";
    if (!expected.empty()) {
      s += "expected ";
      s += expected;
    }
    if (!expected.empty() && !found.empty()) s += ", ";
    if (!found.empty()) {
      s += "found ";
      s += found;
    }
  }
  return s;
}

}  // namespace sluice
