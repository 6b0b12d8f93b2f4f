// What linking sluice leaves of the host program's own settings: its
// "sluice" logger and its oneTBB parallelism stay as it made them. A
// program of its own, since both are process-wide and set before sluice
// is first used.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <tbb/global_control.h>

#include <sstream>

#include <sluice/devices/backend.h>
#include <sluice/devices/log.h>
#include <sluice/ops/ops.h>

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

// Uses sluice the way a program does: a compiled computation on the host,
// large enough to go to its thread pool.
void use_sluice() {
  Function f = trace({f32({1 << 20})}, [](Expr x) { return sum(x * x + 1.0f); });
  Tensor x = tensor(std::vector<float>(1 << 20, 0.5f), Shape{1 << 20});
  Executable exe = compile(f, host());
  EXPECT_FLOAT_EQ(exe.run({x})[0].to_vector<float>()[0], 1.25f * (1 << 20));
}

TEST(HostSettings, TheApplicationsLoggerAndParallelismStay) {
  use_sluice();
  logger().debug("a debug line from sluice");
  EXPECT_EQ(&logger(), application_logger.get()) << "sluice made a logger of its own";
  EXPECT_EQ(application_logger->level(), spdlog::level::debug);
  EXPECT_THAT(application_log.str(), HasSubstr("a debug line from sluice"));
  EXPECT_EQ(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
            kApplicationParallelism);
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
