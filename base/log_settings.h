#pragma once
// The settings of sluice's logger that an application may check before it
// starts (the logger itself is internal: base/detail/log.h). SLUICE_LOG names the
// level: trace, debug, info, warn, error, critical or off (warn when
// unset), or spdlog's list form "sluice=debug,other=info".

namespace sluice {

// Checks SLUICE_LOG as the logger will read it: ConfigError naming the
// variable, its text and the levels when it is malformed (the logger
// itself says so on stderr once and logs at warn).
void check_log_environment();

}  // namespace sluice
