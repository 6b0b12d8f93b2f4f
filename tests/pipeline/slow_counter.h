#pragma once
// A source for tests that look at a pipeline while it runs: n messages of
// s64[] counting 0, 1, 2..., one every `every`.

#include <chrono>
#include <memory>
#include <thread>

#include <sluice/pipeline/sources.h>

namespace sluice {

inline std::shared_ptr<Source> slow_counter(int64_t n, std::chrono::milliseconds every) {
  auto i = std::make_shared<int64_t>(0);
  return sources::generator({s64()}, [i, n, every]() -> std::optional<Tensors> {
    if (*i >= n) return std::nullopt;
    std::this_thread::sleep_for(every);
    return Tensors{scalar<int64_t>((*i)++)};
  });
}

}  // namespace sluice
