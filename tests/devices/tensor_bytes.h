#pragma once
// Tensors by their bytes, for the tests that move tensors whole and check
// that nothing changed on the way (to_pointer/from_pointer here; the wire,
// channels and processes in tests/io, whose helpers include this).

#include <cstdint>
#include <vector>

#include <sluice/devices/backend.h>

namespace sluice::test {

// Every dtype at ranks 0 to 4, and empty tensors of ranks 1 to 4.
std::vector<Spec> round_trip_specs();
// A tensor of `spec` filled with bytes from `seed` (pred: 0 or 1).
Tensor random_tensor(const Spec& spec, uint32_t seed);
// Same spec and the same bytes (NaN payloads included).
bool identical(const Tensor& a, const Tensor& b);

}  // namespace sluice::test
