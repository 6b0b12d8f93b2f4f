#include <sluice/devices/cpu/loop.h>

#include <algorithm>
#include <cstring>

#include <sluice/devices/detail/host_memory.h>
#include <sluice/devices/cpu/thread_pool.h>
#include <sluice/ops/detail/loop_attrs.h>

namespace sluice::cpu {
namespace {

const void* row(const void* base, size_t row_bytes, int64_t i) {
  return static_cast<const uint8_t*>(base) + row_bytes * static_cast<size_t>(i);
}

}  // namespace

CompiledLoop::Body::Body(const Function& f) : plan(make_plan(f)) {
  for (const Spec& s : f.output_specs()) output_bytes.push_back(static_cast<size_t>(s.bytes()));
}

void CompiledLoop::Body::run(std::span<const void* const> args, std::span<void* const> dests, void* arena,
                             Pointers<void*>& slots) const {
  for (size_t s = 0; s < plan.lowered.slots.size(); ++s) slots[s] = dests[plan.lowered.slots[s].output];
  const PlanMemory memory{args, slots.span(), arena};
  run_plan(plan, memory);
  for (size_t j = 0; j < dests.size(); ++j) {
    const void* value = address(plan, memory, plan.lowered.outputs[j]);
    if (value != dests[j] && output_bytes[j] != 0) std::memcpy(dests[j], value, output_bytes[j]);
  }
}

CompiledLoop::CompiledLoop(const Node& loop)
    : op_(loop.op),
      carries_(loop.attrs.loop->carries),
      xs_(loop.attrs.loop->xs),
      length_(loop.attrs.loop->length),
      reverse_(loop.attrs.loop->reverse),
      body_(loop.attrs.loop->body) {
  const LoopAttrs& attrs = *loop.attrs.loop;
  const std::vector<Spec>& params = attrs.body.inputs();
  const std::vector<Spec> results = attrs.result_specs();
  for (int64_t i = 0; i < carries_; ++i) {
    carry_bytes_.push_back(static_cast<size_t>(results[static_cast<size_t>(i)].bytes()));
    spare_offset_.push_back(scratch_bytes_);
    scratch_bytes_ += host_aligned_size(results[static_cast<size_t>(i)].bytes());
  }
  for (int64_t j = carries_; j < carries_ + xs_; ++j)
    x_row_bytes_.push_back(static_cast<size_t>(params[static_cast<size_t>(j)].bytes()));
  for (size_t j = static_cast<size_t>(carries_); j < body_.output_bytes.size(); ++j)
    y_row_bytes_.push_back(body_.output_bytes[j]);
  int64_t arena = body_.plan.lowered.scratch_bytes;
  if (op_ == Op::WhileLoop) {
    cond_.emplace(attrs.cond);
    pred_offset_ = scratch_bytes_;
    scratch_bytes_ += host_aligned_size(1);
    arena = std::max(arena, cond_->plan.lowered.scratch_bytes);
    work_ = kSmallWorkElements;
  } else {
    work_ = body_.plan.lowered.work * length_;
  }
  arena_offset_ = scratch_bytes_;
  scratch_bytes_ += host_aligned_size(arena);
}

void CompiledLoop::run(std::span<const void* const> in, std::span<void* const> out) const {
  if (op_ == Op::WhileLoop)
    run_while(in, out);
  else
    run_scan(in, out);
}

void CompiledLoop::run_scan(std::span<const void* const> in, std::span<void* const> out) const {
  auto* scratch = static_cast<uint8_t*>(out.back());
  const auto k = static_cast<size_t>(carries_), nx = static_cast<size_t>(xs_);
  if (length_ == 0) {
    for (size_t i = 0; i < k; ++i)
      if (carry_bytes_[i] != 0) std::memcpy(out[i], in[i], carry_bytes_[i]);
    return;
  }
  Pointers<const void*> args(in.size());  // the carry, one row of each xs, the captured values
  for (size_t i = 0; i < in.size(); ++i) args[i] = in[i];
  Pointers<void*> dests(k + y_row_bytes_.size()), slots(body_.plan.lowered.slots.size());
  // Steps alternate between the result and the spare buffer: the last one writes the result.
  bool to_result = (length_ - 1) % 2 == 0;
  for (int64_t step = 0; step < length_; ++step) {
    const int64_t i = reverse_ ? length_ - 1 - step : step;
    for (size_t j = 0; j < nx; ++j) args[k + j] = row(in[k + j], x_row_bytes_[j], i);
    for (size_t c = 0; c < k; ++c) dests[c] = to_result ? out[c] : scratch + spare_offset_[c];
    for (size_t j = 0; j < y_row_bytes_.size(); ++j)
      dests[k + j] = const_cast<void*>(row(out[k + j], y_row_bytes_[j], i));
    body_.run(args.span(), dests.span(), scratch + arena_offset_, slots);
    for (size_t c = 0; c < k; ++c) args[c] = dests[c];
    to_result = !to_result;
  }
}

void CompiledLoop::run_while(std::span<const void* const> in, std::span<void* const> out) const {
  auto* scratch = static_cast<uint8_t*>(out.back());
  const auto k = static_cast<size_t>(carries_);
  Pointers<const void*> args(in.size());  // the carry, the captured values
  for (size_t i = 0; i < in.size(); ++i) args[i] = in[i];
  Pointers<void*> dests(k), slots(body_.plan.lowered.slots.size()), cond_slots(cond_->plan.lowered.slots.size());
  void* const pred[] = {scratch + pred_offset_};
  bool to_result = true;
  for (;;) {
    cond_->run(args.span(), pred, scratch + arena_offset_, cond_slots);
    if (*static_cast<const uint8_t*>(pred[0]) == 0) break;
    for (size_t c = 0; c < k; ++c) dests[c] = to_result ? out[c] : scratch + spare_offset_[c];
    body_.run(args.span(), dests.span(), scratch + arena_offset_, slots);
    for (size_t c = 0; c < k; ++c) args[c] = dests[c];
    to_result = !to_result;
  }
  for (size_t c = 0; c < k; ++c)
    if (args[c] != out[c] && carry_bytes_[c] != 0) std::memcpy(out[c], args[c], carry_bytes_[c]);
}

}  // namespace sluice::cpu
