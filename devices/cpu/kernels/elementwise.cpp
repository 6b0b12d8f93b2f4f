// FusedRegion: a compiled region (elementwise_program.h) run tile by tile,
// on the calling thread when small, split across cores by oneTBB when large.

#include <sluice/devices/cpu/kernels/elementwise.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>

#include <sluice/devices/cpu/kernels/elementwise_program.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {

struct FusedRegion::Program : RegionProgram {};

namespace {

constexpr int64_t kSerialBelow = 32768;  // smaller regions never involve oneTBB
constexpr int64_t kTilesPerTask = 16;
constexpr int64_t kPrefetchAbove = 1 << 20;  // bytes of inputs and outputs: beyond, they are not in cache

// Per-thread scratch, grown when a larger region first runs on the thread
// and kept: runs allocate nothing.
std::byte* thread_scratch(int64_t bytes) {
  struct Buffer {
    std::byte* data = nullptr;
    int64_t size = 0;
    ~Buffer() { ::operator delete(data, std::align_val_t(kScratchAlign)); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    ::operator delete(buffer.data, std::align_val_t(kScratchAlign));
    buffer.data = nullptr;
    buffer.size = 0;
    buffer.data =
        static_cast<std::byte*>(::operator new(static_cast<size_t>(bytes), std::align_val_t(kScratchAlign)));
    buffer.size = bytes;
  }
  return buffer.data;
}

void build_pattern(const RepeatedLoad& p, const void* src, std::byte* base) {
  std::byte* data = base + p.offset;
  const int64_t period = p.map.period;
  if (p.widen) {
    broadcast_gather(p.map, src, static_cast<int>(p.stored_bytes), 0, period, base + p.staging);
    p.widen(data, base + p.staging, nullptr, nullptr, period);
  } else {
    broadcast_gather(p.map, src, static_cast<int>(p.stored_bytes), 0, period, data);
  }
  // Repeat the period by doubling until every window of one tile fits.
  const int64_t length = p.length * p.compute_bytes;
  for (int64_t have = period * p.compute_bytes; have < length;) {
    int64_t n = std::min(have, length - have);
    std::memcpy(data + have, data, static_cast<size_t>(n));
    have += n;
  }
}

// While a tile computes, the next tile's inputs and outputs are requested a
// slice after each instruction: the hardware prefetcher sees no accesses to
// them during the math of a tile, so each tile would start by waiting on
// memory, and asking for a whole tile at once stalls on the core's limit of
// outstanding misses. (Inline asm: g++ deletes a function made only of
// __builtin_prefetch as side-effect free.)
inline void prefetch_line(const void* p) {
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
}

void prefetch_slice(const TilePlan& plan, void* const* ptr, int64_t tile, int64_t step) {
  constexpr int64_t kLine = 64;
  for (const Moving& m : plan.moving) {
    if (m.prefetch == 0) continue;
    const char* next = static_cast<const char*>(ptr[m.slot]) + tile * m.bytes;
    const int64_t end = std::min((step + 1) * m.prefetch, tile * m.bytes);
    for (int64_t b = step * m.prefetch; b < end; b += kLine) prefetch_line(next + b);
  }
}

// Runs elements [begin, end) on the calling thread. `prefetch`: the data is
// too large to be in cache already.
void run_range(const TilePlan& plan, int64_t tile, const void* const* in, void* const* out, int64_t begin,
               int64_t end, bool prefetch) {
  std::byte* scratch = thread_scratch(plan.scratch_bytes);
  std::byte* base = scratch + plan.slots_offset;
  auto** ptr = reinterpret_cast<void**>(scratch);
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const TileSlot& slot = plan.slots[s];
    ptr[s] = slot.kind == SlotKind::Scratch    ? base + slot.offset
             : slot.kind == SlotKind::Constant ? const_cast<void*>(constant_data(slot.index))
                                               : nullptr;
  }
  for (const RepeatedLoad& p : plan.patterns) build_pattern(p, in[p.input], base);
  for (int64_t start = begin; start < end; start += tile) {
    const int64_t len = std::min(tile, end - start);
    for (const Moving& m : plan.moving) {
      if (m.kind == SlotKind::Input) {
        ptr[m.slot] = const_cast<std::byte*>(static_cast<const std::byte*>(in[m.index])) + start * m.bytes;
      } else if (m.kind == SlotKind::Output) {
        ptr[m.slot] = static_cast<std::byte*>(out[m.index]) + start * m.bytes;
      } else {
        ptr[m.slot] = base + m.offset + (start % m.period) * m.bytes;
      }
    }
    for (const Gather& g : plan.gathers) {
      void* dst = g.widen ? base + g.staging : ptr[g.slot];
      broadcast_gather(g.map, in[g.input], static_cast<int>(g.stored_bytes), start, len, dst);
      if (g.widen) g.widen(ptr[g.slot], dst, nullptr, nullptr, len);
    }
    if (prefetch && start + 2 * tile <= end) {
      for (size_t k = 0; k < plan.instrs.size(); ++k) {
        const Instr& i = plan.instrs[k];
        i.fn(ptr[i.out], ptr[i.a], ptr[i.b], ptr[i.c], len);
        prefetch_slice(plan, ptr, tile, static_cast<int64_t>(k));
      }
    } else {
      for (const Instr& i : plan.instrs) i.fn(ptr[i.out], ptr[i.a], ptr[i.b], ptr[i.c], len);
    }
  }
}

bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

}  // namespace

FusedRegion::FusedRegion(std::vector<const Node*> nodes, std::vector<const Node*> inputs,
                         std::vector<const Node*> outputs)
    : program_(std::make_unique<Program>(Program{compile_region(kernel_table(), nodes, inputs, outputs)})) {}

FusedRegion::~FusedRegion() = default;
FusedRegion::FusedRegion(FusedRegion&&) noexcept = default;
FusedRegion& FusedRegion::operator=(FusedRegion&&) noexcept = default;

void FusedRegion::run(std::span<const void* const> inputs, std::span<void* const> outputs) const {
  const Program& p = *program_;
  if (inputs.size() != p.input_bytes.size() || outputs.size() != p.output_bytes.size()) {
    throw DeviceError(
        error_message("fused region", "",
                      fmt::format("{} inputs and {} outputs", p.input_bytes.size(), p.output_bytes.size()),
                      fmt::format("{} and {}", inputs.size(), outputs.size())));
  }
  if (p.elements == 0) return;
  // An output may reuse an input's buffer only element for element.
  const TilePlan* plan = &p.direct;
  for (size_t k = 0; k < outputs.size(); ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!overlap(outputs[k], p.output_bytes[k], inputs[i], p.input_bytes[i])) continue;
      if (outputs[k] != inputs[i] || p.output_bytes[k] != p.input_bytes[i] || p.input_broadcast[i]) {
        throw DeviceError(error_message("fused region", fmt::format("output {} overlaps input {}", k, i),
                                        "separate buffers, or the same buffer read element for element",
                                        "other overlapping bytes"));
      }
      plan = &p.safe;
    }
  }
  if (p.elements < kSerialBelow) {
    run_range(*plan, p.tile, inputs.data(), outputs.data(), 0, p.elements, false);
    return;
  }
  const int64_t tiles = (p.elements + p.tile - 1) / p.tile;
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, tiles, kTilesPerTask),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      run_range(*plan, p.tile, inputs.data(), outputs.data(), r.begin() * p.tile,
                                std::min(r.end() * p.tile, p.elements), p.io_bytes > kPrefetchAbove);
                    });
}

}  // namespace sluice::cpu
