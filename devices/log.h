#pragma once
// The library's one logger, "sluice", its level from SLUICE_LOG (trace,
// debug, info, warn, error, off; warn by default). Library code logs only
// through it, never to stdout.

#include <spdlog/spdlog.h>

namespace sluice {

spdlog::logger& logger();

}  // namespace sluice
