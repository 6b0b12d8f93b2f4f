#include "devices/log.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace sluice {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    std::shared_ptr<spdlog::logger> l = spdlog::get("sluice");
    if (!l) l = spdlog::stderr_color_mt("sluice");
    const char* level = std::getenv("SLUICE_LOG");
    l->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    return l;
  }();
  return *log;
}

}  // namespace sluice
