#pragma once
// The rows of one stream aligned to another's by time, zip_by_time's core
// (pipeline/zip_by_time_node.cpp, pipeline/event_time.h): for each row of
// a reference chunk, the other stream's sample nearest in time, within a
// tolerance.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/rows.h>

namespace sluice {

// A chunk the zip holds: its message (and so its source's credit), its
// tensors on the host, and the times of its rows (computed where needed,
// not stored: a stored time costs more to read back, from memory, than
// to compute).
struct Held {
  Envelope message;
  Tensors host;
  std::vector<const std::byte*> data;  // each tensor's, on the host
  int64_t rows = 0;
  RowTimes times;
  int64_t first = 0, last = 0;  // its first and last rows' times
  int64_t time(int64_t row) const { return times.at(row); }
};

// Chunks of a stream with rows, oldest first, shared with the jobs aligned to them.
using HeldChunks = std::vector<std::shared_ptr<const Held>>;

// The reference chunk `c`'s rows aligned with `held` (another stream's
// chunks, oldest first, its rows going forward in time): for each tensor
// of `specs` (that stream's), a tensor with c's rows holding each row's
// nearest sample within `tolerance` nanoseconds (ties to the earlier,
// zeros where none is), then a pred[rows] saying which rows matched;
// appended to `out`. Returns how many matched. PipelineError naming `who`
// when no host memory is left.
uint64_t align_by_time(const Held& c, const HeldChunks& held, const std::vector<Spec>& specs,
                       int64_t tolerance, const std::string& who, Tensors& out);

}  // namespace sluice
