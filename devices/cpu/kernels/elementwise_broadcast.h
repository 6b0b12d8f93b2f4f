#pragma once
// Broadcast loads of a fused region on the host: the elements of a tile of
// the region's output gathered from a smaller operand, by its BroadcastMap
// (devices/detail/broadcast_map.h).

#include <cstdint>
#include <vector>

#include <sluice/devices/detail/broadcast_map.h>

namespace sluice::cpu {

// Writes elements [start, start + len) of the broadcast output into dst;
// src is the operand, elements of `elem_bytes` bytes.
void broadcast_gather(const BroadcastMap& map, const void* src, int elem_bytes, int64_t start, int64_t len,
                      void* dst);

}  // namespace sluice::cpu
