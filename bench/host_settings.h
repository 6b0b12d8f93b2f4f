#pragma once
// The host settings sluice's benchmarks once asked for in every program:
// oneTBB's worker limit raised and OpenBLAS on one thread, process-wide
// changes made through ClientOptions (devices/backend.h). The defaults are
// as fast now (the CPU backend's runners join its arena; a product leaves
// OpenBLAS its own threads), so every benchmark runs with the defaults a
// library user gets, and only defaults_vs_tuned asks for these, to show
// that the defaults lose nothing against them.

#include <sluice/devices/backend.h>

namespace sluice::bench {

inline void ask_for_tuned_host_settings() { client("host", {.raise_worker_limit = true, .blas_threads = 1}); }

}  // namespace sluice::bench
