#pragma once
// What a block node carries beside its operands (Attrs::block): the name a
// backend's native kernel answers to, and the fallback every other backend
// runs, a Function of the block's operands whose outputs are the block's
// results (read through `result` nodes: ops/detail/results.h). CSE merges
// equal blocks (names equal, fallbacks compared structurally).

#include <string>

#include <sluice/ops/function.h>

namespace sluice {

struct BlockAttrs {
  std::string name;
  Function fallback;

  bool operator==(const BlockAttrs& o) const { return name == o.name && fallback == o.fallback; }
  uint64_t hash() const;
};

}  // namespace sluice
