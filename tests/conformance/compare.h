#pragma once
// Element-wise comparison of what a device computed with a case's expectation.

#include <cstddef>
#include <string>
#include <vector>

#include "tests/conformance/cases.h"

namespace sluice::conformance {

// Integers and pred compare exactly (pred must be stored as 0 or 1); floats
// and complex numbers within `tolerance`, where a NaN expectation needs a
// NaN and an infinite one the same infinity. Returns one line per mismatching
// element, at most `limit` of them, then a count of the rest; empty: all match.
std::vector<std::string> mismatches(const CaseTensor& expected, const std::vector<uint8_t>& found,
                                    const Tolerance& tolerance, size_t limit = 6);

// "f32[3] [1.5, nan, -2]", elided after `limit` elements.
std::string tensor_str(const CaseTensor& t, size_t limit = 16);

}  // namespace sluice::conformance
