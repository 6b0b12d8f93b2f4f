#include <sluice/base/detail/cache_path.h>

#include <cstdlib>

namespace sluice {

std::string cache_path(const char* variable, const char* name) {
  const char* v = std::getenv(variable);
  const std::string value = v ? v : "";
  if (value == "off") return "";
  if (!value.empty()) return value;
  // XDG says a relative XDG_CACHE_HOME is to be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/sluice/" + name;
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    return std::string(home) + "/.cache/sluice/" + name;
  return "";
}

}  // namespace sluice
