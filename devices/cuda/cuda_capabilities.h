#pragma once
// What the CUDA backend runs: every op of the catalogue in every dtype. Its
// finer limits (sizes the libraries take as 32-bit ints) are declined, so
// compile fails at once naming the op. No CUDA here: tests and `sluice
// devices` read the table where no GPU is.

#include <optional>
#include <string>

#include <sluice/devices/backend.h>

namespace sluice::cuda {

Capabilities cuda_capabilities();
// Finer limits than the table: sizes cuBLAS and cuFFT take as 32-bit ints.
std::optional<std::string> cuda_declines(const Node& node);

}  // namespace sluice::cuda
