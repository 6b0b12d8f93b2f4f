// A host client made with the options that change the process (as sluice's
// own programs made it) does change it: oneTBB's worker limit is raised to
// its arena's threads (a runner and the workers), OpenBLAS runs one thread, and the arena
// has the threads asked for. A program of its own, since the settings are
// process-wide and the options apply when the client is first made.

#include <gtest/gtest.h>

#include <cblas.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/thread_pool.h>
#include "tests/devices/host_settings/use_sluice.h"

namespace sluice {
namespace {

// One more than oneTBB's default, so that the limit asked for (the threads)
// is above oneTBB's default on any machine, and the arena's size is seen to
// be the option's.
const int kThreads = tbb::info::default_concurrency() + 1;

TEST(HostFastSettings, TheOptionsAskedForAreApplied) {
  Client& c = client("host", {.host_threads = kThreads, .raise_worker_limit = true, .blas_threads = 1});
  EXPECT_EQ(c.options().host_threads, kThreads);
  EXPECT_EQ(cpu::thread_pool_concurrency(), kThreads);
  EXPECT_EQ(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
            static_cast<size_t>(kThreads));
  EXPECT_EQ(openblas_get_num_threads(), 1);
  testing::use_sluice();

  // The client exists now: asking for it plainly gets it, asking with
  // other options is an error rather than options silently not applied.
  EXPECT_EQ(&client("host"), &c);
  EXPECT_EQ(&client("host", c.options()), &c);
  try {
    client("host", ClientOptions{});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("options: expected those it was made with"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice
