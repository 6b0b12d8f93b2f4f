#pragma once
// Where sluice keeps what a machine's processes share between runs (FFTW
// wisdom, compiled CUDA kernels): the path an environment variable names,
// "off" for none, by default under $XDG_CACHE_HOME/sluice/ or
// ~/.cache/sluice/. Internal to the devices layer.

#include <string>

namespace sluice {

// `variable`'s value, or the default path of `name` in sluice's cache
// folder; empty when the variable says "off" or no home is known.
std::string cache_path(const char* variable, const char* name);

}  // namespace sluice
