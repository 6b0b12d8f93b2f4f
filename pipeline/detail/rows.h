#pragma once
// Rows of messages on the host, for the nodes that gather, cut and time
// them (the batcher, zip_by_time, window). Internal.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sluice/devices/tags.h>
#include <sluice/stream/step.h>

namespace sluice {

// A host tensor of `spec`, zero-filled (unless `zeroed` is off: for a
// caller that writes all of it), from the host backend's pool of blocks
// (devices/detail/host_memory.h). DeviceError naming `who` when it cannot
// be allocated.
Tensor host_tensor(const Spec& spec, const std::string& who, bool zeroed = true);
// Its data, writable: for a tensor zeroed_host just made.
std::byte* host_bytes(Tensor& t);

// The bytes of one row (along axis 0) of a tensor of `spec`.
size_t row_bytes(const Spec& spec);
// `spec` with `rows` rows along axis 0 (it has rank 1 or more).
Spec with_rows(const Spec& spec, int64_t rows);
// How many rows every tensor of a message has (along axis 0).
// PipelineError naming `who` when they differ, or when one is a scalar
// and scalars are refused; passed over, a scalar is a value of the whole
// message, and at least one tensor must have rows.
enum class Scalars : uint8_t { Refused, PassOver };
int64_t message_rows(const Tensors& tensors, const std::string& who, Scalars scalars = Scalars::Refused);

// When each row of a chunk was sampled: time_ns + row_offset_ns(row, rate).
struct RowTimes {
  int64_t first = 0;
  double period_ns = 0;  // row_period_ns(rate)
  int64_t at(int64_t row) const { return first + row_offset_at(row, period_ns); }
};
// PipelineError naming `who` when the tags lack time_ns or sample_rate.
RowTimes row_times(const Tags& tags, const std::string& who);

// The tags of the chunks a node holds, as its checkpoint keeps them: their
// wire tags blocks (io/wire_format.h) one after another in one u8 tensor
// (of one byte at least), and the bytes of each.
struct TagsBlocks {
  Tensor blocks;
  std::vector<size_t> bytes;
};
TagsBlocks tags_blocks(const std::vector<const Tags*>& tags, const std::string& who);
// Back from a checkpoint: CheckpointError naming `who` when the blocks do
// not fill the tensor as `bytes` says, or one does not read.
std::vector<Tags> read_tags_blocks(const Tensor& blocks, const std::vector<size_t>& bytes,
                                   const std::string& who);

}  // namespace sluice
