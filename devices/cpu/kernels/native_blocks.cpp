// Blocks the host runs natively (ops/block.h). Each answers to a name whose
// meaning block.h states, and computes what the block's fallback would, in
// fewer passes over memory.
//
// softmax, along the last axis of f32 or f64: the kernel table's row kernel
// (blocks_isa.cpp) over rows spread across cores, each row read from memory
// once and finished while it is in cache. The fallback makes four passes
// over the whole tensor (max, exp, sum, divide), with broadcasts between.

#include <cstdint>

#include <sluice/base/error.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

bool is_softmax(const Node& node) {
  if (node.operands.size() != 1) return false;
  const Spec& x = node.operands[0]->spec;
  const Function& fallback = node.attrs.block->fallback;
  return (x.dtype == DType::F32 || x.dtype == DType::F64) && x.shape.rank() >= 1 &&
         fallback.outputs().size() == 1 && fallback.outputs()[0].spec() == x;
}

}  // namespace

bool has_native_block(const Node& node) {
  if (node.op != Op::Block || !node.attrs.block) return false;
  return node.attrs.block->name == "softmax" && is_softmax(node);
}

std::vector<std::string> native_block_names() { return {"softmax"}; }

void run_native_block(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  if (!has_native_block(node))
    throw InternalError(error_message("host",
                                      "block '" +
                                          (node.attrs.block ? node.attrs.block->name : std::string()) +
                                          "' has no native kernel here: its fallback runs in its place",
                                      "", ""));
  const Spec& x = node.operands[0]->spec;
  const int64_t n = x.shape.dim(x.shape.rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.size() / n;
  const RowKernel softmax = kernel_table().softmax[static_cast<int>(x.dtype)];
  const auto* from = static_cast<const uint8_t*>(in[0]);
  auto* to = static_cast<uint8_t*>(out[0]);
  const int64_t row_bytes = n * dtype_size(x.dtype);
  split_work(rows, n, [&](int64_t begin, int64_t end) {
    softmax(to + begin * row_bytes, from + begin * row_bytes, end - begin, n);
  });
}

}  // namespace sluice::cpu
