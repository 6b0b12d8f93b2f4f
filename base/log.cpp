#include <sluice/base/detail/log.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include <spdlog/sinks/stdout_color_sinks.h>

#include <sluice/base/error.h>

namespace sluice {
namespace {

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

spdlog::level::level_enum level_named(const std::string& name, const std::string& text) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const spdlog::level::level_enum level = spdlog::level::from_str(lower);
  // from_str answers "off" for a name it does not know.
  if (level == spdlog::level::off && lower != "off")
    throw ConfigError(error_message(
        "SLUICE_LOG=" + text, "", "a level (trace, debug, info, warn, error, critical, off) or sluice=LEVEL",
        "'" + name + "'"));
  return level;
}

const char* environment_text() {
  const char* text = std::getenv("SLUICE_LOG");
  return text && *text ? text : nullptr;
}

}  // namespace

std::optional<spdlog::level::level_enum> log_level_of(const std::string& text) {
  // The forms spdlog's cfg/env.h reads: "LEVEL" or "name=LEVEL,name=LEVEL".
  std::optional<spdlog::level::level_enum> level;
  std::istringstream entries(text);
  for (std::string entry; std::getline(entries, entry, ',');) {
    const size_t equals = entry.find('=');
    const std::string name = equals == std::string::npos ? "" : trimmed(entry.substr(0, equals));
    const std::string value = trimmed(equals == std::string::npos ? entry : entry.substr(equals + 1));
    if (value.empty() && name.empty()) continue;
    const spdlog::level::level_enum named = level_named(value, text);
    if (name == "sluice" || (name.empty() && !level)) level = named;
  }
  return level;
}

void check_log_environment() {
  if (const char* text = environment_text()) (void)log_level_of(text);
}

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    // An application's own "sluice" logger stays as the application made it.
    if (std::shared_ptr<spdlog::logger> own = spdlog::get("sluice")) return own;
    std::shared_ptr<spdlog::logger> l = spdlog::stderr_color_mt("sluice");
    spdlog::level::level_enum level = spdlog::level::warn;
    if (const char* text = environment_text()) {
      try {
        level = log_level_of(text).value_or(spdlog::level::warn);
      } catch (const ConfigError& e) { std::cerr << "sluice: " << e.what() << "; logging at warn\n"; }
    }
    l->set_level(level);
    return l;
  }();
  return *log;
}

}  // namespace sluice
