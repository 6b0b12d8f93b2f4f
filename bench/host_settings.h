#pragma once
// The host settings sluice's benchmarks measure with, asked for by every
// benchmark program (bench_main.cpp) and by the processes they start:
// oneTBB's worker limit raised so that no core idles while callers park, and
// OpenBLAS on one thread, so that oneTBB alone shares out the cores. sluice
// made both process-wide changes by itself before they became ClientOptions
// (devices/backend.h), so results stay comparable with earlier runs.

#include <sluice/devices/backend.h>

namespace sluice::bench {

inline void ask_for_fast_host_settings() { client("host", {.raise_worker_limit = true, .blas_threads = 1}); }

}  // namespace sluice::bench
