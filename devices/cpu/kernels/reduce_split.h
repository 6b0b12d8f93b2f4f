#pragma once
// split_work (split_work.h) for kernels instantiated over many types: the
// body is passed type-erased, so oneTBB's loop templates are instantiated
// once per file rather than once per kernel and type (a large part of the
// build time of window.cpp and reduce.cpp). A body covers a range of items,
// so the indirect call costs nothing measurable.

#include <cstdint>
#include <functional>

#include <sluice/devices/cpu/kernels/split_work.h>

namespace sluice::cpu {

using RangeBody = std::function<void(int64_t begin, int64_t end)>;

inline void split_items(int64_t items, int64_t elements_per_item, const RangeBody& body) {
  split_work(items, elements_per_item, body);
}

}  // namespace sluice::cpu
