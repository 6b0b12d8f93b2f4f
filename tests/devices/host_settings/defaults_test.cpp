// What sluice does to the process by default, in a program that set
// nothing itself: nothing. oneTBB's worker limit, OpenBLAS's threads and
// the OpenMP threads of the thread that used sluice are what they were
// before, and sluice's arena has a thread for every core: a runner of its
// own and the workers oneTBB lets it have (one fewer than its default
// concurrency), so every core works with nothing changed and oneTBB has
// nothing to warn about. A program of its own, since these settings are process-wide
// and the host client's options apply when it is first made.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cblas.h>
#include <omp.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>

#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/thread_pool.h>
#include "tests/devices/host_settings/use_sluice.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Read before sluice is used at all.
const size_t worker_limit_before =
    tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
const int blas_threads_before = openblas_get_num_threads();
const int omp_threads_before = omp_get_max_threads();

TEST(HostDefaults, LeaveTheProcessAsItWas) {
  ::testing::internal::CaptureStderr();
  testing::use_sluice();
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), Not(HasSubstr("TBB Warning")));
  EXPECT_EQ(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
            worker_limit_before);
  EXPECT_EQ(openblas_get_num_threads(), blas_threads_before);
  EXPECT_EQ(omp_get_max_threads(), omp_threads_before);
  EXPECT_EQ(cpu::thread_pool_concurrency(), tbb::info::default_concurrency());
}

TEST(HostDefaults, NegativeThreadCountsAreValueErrors) {
  for (auto [options, name] : {std::pair{ClientOptions{.host_threads = -1}, "host_threads"},
                               std::pair{ClientOptions{.blas_threads = -1}, "blas_threads"}}) {
    try {
      (void)client("host", options);
      FAIL() << "expected a ValueError for " << name;
    } catch (const ValueError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(std::string("client host: ClientOptions::") + name),
                                  HasSubstr("expected >= 0"), HasSubstr("found -1")));
    }
  }
}

}  // namespace
}  // namespace sluice
