#pragma once
// How the creation and shape kernels share out work: a kernel cuts its output
// into items (rows, tiles, row segments) and hands split_work a body over a
// range of items. Small outputs run on the calling thread, since waking
// workers costs more than moving a few hundred kilobytes; large ones are
// split across oneTBB's workers in tasks of at least kGrainElements.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>

namespace sluice::cpu {

inline constexpr int64_t kSerialElements = int64_t{1} << 16;
inline constexpr int64_t kGrainElements = int64_t{1} << 14;

// Calls body(begin, end) on disjoint ranges covering [0, items); each item
// writes about elements_per_item output elements.
template <typename Body>
void split_work(int64_t items, int64_t elements_per_item, const Body& body) {
  if (items <= 0) return;
  elements_per_item = std::max<int64_t>(elements_per_item, 1);
  if (items == 1 || items * elements_per_item <= kSerialElements) {
    body(int64_t{0}, items);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainElements / elements_per_item);
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

}  // namespace sluice::cpu
