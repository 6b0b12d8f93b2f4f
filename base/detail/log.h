#pragma once
// The library's one logger, "sluice". Library code logs only through it,
// never to stdout.
//
// An application that registers its own spdlog logger named "sluice"
// before using sluice keeps it as it is, sinks and level: sluice logs
// there. Otherwise sluice makes one on stderr, its level from SLUICE_LOG:
// a level (trace, debug, info, warn, error, critical, off; warn when
// unset), or spdlog's list form "sluice=debug,other=info" of which the
// "sluice" entry (or a bare level) applies. No other logger is touched.

#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include <sluice/base/log_settings.h>

namespace sluice {

spdlog::logger& logger();

// The level SLUICE_LOG's text asks for; nullopt when it names none for
// "sluice". ConfigError naming the variable, the text and the levels when
// a level is not one spdlog knows (spdlog itself would turn logging off).
std::optional<spdlog::level::level_enum> log_level_of(const std::string& text);

}  // namespace sluice
