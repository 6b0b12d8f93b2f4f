// What linking sluice leaves of the host program's own settings: its
// "sluice" logger, its oneTBB parallelism and its OpenBLAS threads stay as
// it made them. A program of its own, since all are process-wide and set
// before sluice is first used.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cblas.h>
#include <spdlog/sinks/ostream_sink.h>
#include <tbb/global_control.h>

#include <sstream>

#include <sluice/devices/backend.h>
#include <sluice/base/detail/log.h>
#include <sluice/ops/ops.h>
#include "tests/devices/host_settings/use_sluice.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

// The application's own settings, made before sluice is used at all.
std::ostringstream application_log;
const std::shared_ptr<spdlog::logger> application_logger = [] {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(application_log);
  auto l = std::make_shared<spdlog::logger>("sluice", sink);
  l->set_level(spdlog::level::debug);
  spdlog::register_logger(l);
  return l;
}();
constexpr size_t kApplicationParallelism = 64;  // above what sluice would ask for on any test machine
tbb::global_control application_parallelism(tbb::global_control::max_allowed_parallelism,
                                            kApplicationParallelism);
// Not the 1 that sluice's own programs ask for.
constexpr int kApplicationBlasThreads = 3;
[[maybe_unused]] const bool application_blas_threads = [] {
  openblas_set_num_threads(kApplicationBlasThreads);
  return true;
}();

TEST(HostSettings, TheApplicationsLoggerParallelismAndBlasThreadsStay) {
  testing::use_sluice();
  logger().debug("a debug line from sluice");
  EXPECT_EQ(&logger(), application_logger.get()) << "sluice made a logger of its own";
  EXPECT_EQ(application_logger->level(), spdlog::level::debug);
  EXPECT_THAT(application_log.str(), HasSubstr("a debug line from sluice"));
  EXPECT_EQ(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
            kApplicationParallelism);
  EXPECT_EQ(openblas_get_num_threads(), kApplicationBlasThreads);
}

TEST(HostSettings, SluiceLogLevelsAreCheckedNotTurnedOff) {
  EXPECT_EQ(log_level_of("debug"), spdlog::level::debug);
  EXPECT_EQ(log_level_of("WARN"), spdlog::level::warn);
  EXPECT_EQ(log_level_of("other=trace, sluice = error"), spdlog::level::err);
  EXPECT_EQ(log_level_of("other=trace"), std::nullopt);
  EXPECT_EQ(log_level_of("off"), spdlog::level::off);
  try {
    (void)log_level_of("verbose");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("SLUICE_LOG=verbose: expected a level (trace, debug, info, warn, error, critical, off)"));
    EXPECT_THAT(e.what(), HasSubstr("found 'verbose'"));
  }
  EXPECT_THROW((void)log_level_of("sluice=loud"), ConfigError);
}

}  // namespace
}  // namespace sluice
