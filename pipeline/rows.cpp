#include <sluice/pipeline/detail/rows.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <fmt/format.h>

#include <sluice/base/error.h>
#include <sluice/devices/detail/host_memory.h>
#include <sluice/io/wire_format.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

Tensor host_tensor(const Spec& spec, const std::string& who, bool zeroed) {
  const auto bytes = static_cast<size_t>(spec.bytes());
  std::shared_ptr<void> memory;
  try {
    // From the host pool: a block freed by an earlier message comes back
    // faulted in, where fresh memory costs a page fault every 4 KiB.
    memory = host_allocate(bytes);
  } catch (const std::bad_alloc&) {
    throw DeviceError(error_message(who, fmt::format("cannot allocate {}", spec), "", ""));
  }
  if (zeroed) std::memset(memory.get(), 0, bytes);
  void* data = memory.get();
  return wrap_host(spec, data, std::move(memory));
}

std::byte* host_bytes(Tensor& t) { return static_cast<std::byte*>(const_cast<void*>(t.host_data())); }

size_t row_bytes(const Spec& spec) {
  const int64_t rows = spec.shape.rank() == 0 ? 1 : spec.shape.dim(0);
  return rows == 0 ? 0 : static_cast<size_t>(spec.bytes() / rows);
}

Spec with_rows(const Spec& spec, int64_t rows) {
  std::vector<int64_t> dims(spec.shape.dims().begin(), spec.shape.dims().end());
  dims.at(0) = rows;
  return Spec{spec.dtype, Shape(dims)};
}

int64_t message_rows(const Tensors& tensors, const std::string& who, Scalars scalars) {
  int64_t rows = -1;
  size_t first = 0;  // the first tensor with rows
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (t.rank() == 0) {
      if (scalars == Scalars::PassOver) continue;
      throw PipelineError(
          error_message(who, fmt::format("tensor {}", k), "rows along axis 0", fmt::format("{}", t.spec())));
    }
    if (rows >= 0 && t.shape().dim(0) != rows)
      throw PipelineError(error_message(who, fmt::format("tensor {}", k),
                                        fmt::format("{} rows, as tensor {} has", rows, first),
                                        fmt::format("{}", t.spec())));
    if (rows < 0) first = k;
    rows = t.shape().dim(0);
  }
  if (rows < 0 && scalars == Scalars::PassOver && !tensors.empty())
    throw PipelineError(error_message(who, "tensors", "one with rows along axis 0", "scalars only"));
  return rows < 0 ? 0 : rows;
}

RowTimes row_times(const Tags& tags, const std::string& who) {
  std::optional<int64_t> first = tags.time_ns();
  std::optional<double> rate = tags.sample_rate();
  if (!first || !rate)
    throw PipelineError(error_message(who, "a chunk's tags", "time_ns and sample_rate (devices/tags.h)",
                                      !first && !rate ? "neither"
                                      : !first        ? "no time_ns"
                                                      : "no sample_rate"));
  return {*first, row_period_ns(*rate)};
}

TagsBlocks tags_blocks(const std::vector<const Tags*>& tags, const std::string& who) {
  TagsBlocks t;
  size_t total = 0;
  for (const Tags* tag : tags) total += t.bytes.emplace_back(wire::tags_block_bytes(*tag));
  t.blocks = host_tensor(Spec{DType::U8, Shape{static_cast<int64_t>(std::max<size_t>(total, 1))}}, who);
  auto* at = reinterpret_cast<uint8_t*>(host_bytes(t.blocks));
  for (size_t i = 0; i < tags.size(); ++i) {
    wire::write_tags_block(*tags[i], at);
    at += t.bytes[i];
  }
  return t;
}

std::vector<Tags> read_tags_blocks(const Tensor& blocks, const std::vector<size_t>& bytes,
                                   const std::string& who) {
  size_t total = 0;
  for (size_t b : bytes) total += b;
  if (blocks.spec() != Spec{DType::U8, Shape{static_cast<int64_t>(std::max<size_t>(total, 1))}})
    throw CheckpointError(error_message(
        who, "its chunks' tags", fmt::format("u8[{}]", std::max<size_t>(total, 1)), blocks.spec().str()));
  std::vector<Tags> tags;
  const auto* at = static_cast<const uint8_t*>(blocks.host_data());
  try {
    for (size_t b : bytes) {
      tags.push_back(wire::read_tags_block({at, b}, who));
      at += b;
    }
  } catch (const Error& e) {
    throw CheckpointError(error_message(who, "its chunks' tags", "tags blocks", e.what()));
  }
  return tags;
}

}  // namespace sluice
