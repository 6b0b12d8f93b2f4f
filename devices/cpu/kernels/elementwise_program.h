#pragma once
// A fused region compiled for the CPU: the program elementwise.cpp runs tile
// by tile, and the compiler that makes it from a region's nodes
// (elementwise_compile.cpp).
//
// The program is a list of kernel calls over slots. A slot is where one
// value's elements for the current tile are: a window into a region input
// (read in place) or output (written in place), a window into a pattern (a
// short-period broadcast, built once per task: a scalar is a pattern of
// period 1), a constant, or a scratch buffer of one tile in the thread's
// scratch memory, reused once its value is dead. f16 and bf16 values live
// in scratch as f32 (isa.h's compute representation): they are widened on
// load, rounded after each op that can leave their precision, narrowed on
// store.

#include <cstdint>
#include <vector>

#include <sluice/devices/cpu/kernels/elementwise_broadcast.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/ops/expr.h>

namespace sluice::cpu {

inline constexpr int64_t kTile = 512;         // elements per tile: a region's intermediates stay in L1
inline constexpr int64_t kScratchAlign = 64;  // bytes: scratch buffers start on cache lines

enum class SlotKind : uint8_t { Null, Input, Output, Pattern, Scratch, Constant };

// Scalars some kernels read (elementwise_compile.cpp's Affine): 1, -1, -0
// as f32 (indices 0..2), then as f64 (3..5).
inline constexpr float kConstantsF32[] = {1.0f, -1.0f, -0.0f};
inline constexpr double kConstantsF64[] = {1.0, -1.0, -0.0};
inline const void* constant_data(int index) {
  return index < 3 ? static_cast<const void*>(&kConstantsF32[index]) : &kConstantsF64[index - 3];
}

struct TileSlot {
  SlotKind kind = SlotKind::Null;
  int index = 0;       // Input/Output: position in run()'s spans; Pattern: index in TilePlan::patterns;
                       // Constant: constant_data's index
  int64_t bytes = 0;   // per element: stored for Input/Output, compute representation otherwise
  int64_t offset = 0;  // Scratch: byte offset in the thread's scratch
};

struct Instr {
  Kernel fn;
  int out = 0, a = 0, b = 0, c = 0;  // slots; 0 is the null slot
};

// A broadcast load whose output repeats every `map.period` elements: kept
// in scratch as tile + period - 1 elements, so every tile is a window into
// it (only one period when it is read as a scalar).
struct RepeatedLoad {
  int input = 0;
  BroadcastMap map;
  int64_t stored_bytes = 0, compute_bytes = 0;
  int64_t offset = 0;    // in scratch
  int64_t staging = -1;  // f16/bf16: scratch offset of the stored bits
  Kernel widen = nullptr;
  int64_t length = 0;  // elements kept: a tile's worth of windows, or one period
};

// A broadcast load gathered again for every tile.
struct Gather {
  int input = 0;
  BroadcastMap map;
  int64_t stored_bytes = 0;
  int slot = 0;
  int64_t staging = -1;
  Kernel widen = nullptr;
};

// A slot re-pointed every tile (Input, Output, Pattern), with what that takes.
struct Moving {
  int slot = 0;
  SlotKind kind = SlotKind::Input;
  int index = 0;         // Input/Output: position in run()'s spans
  int64_t bytes = 0;     // per element
  int64_t offset = 0;    // Pattern: its scratch offset
  int64_t period = 1;    // Pattern: its period
  int64_t prefetch = 0;  // Input/Output: bytes of the next tile to prefetch after each instruction
};

// One tile's program. (Not `Plan` or `Slot`: plan.h's types of those names
// live in this namespace too, and two definitions of one name corrupt memory.)
struct TilePlan {
  std::vector<TileSlot> slots{TileSlot{}};
  std::vector<Moving> moving;
  std::vector<RepeatedLoad> patterns;
  std::vector<Gather> gathers;
  std::vector<Instr> instrs;
  int64_t slots_offset = 0;  // scratch layout: slot pointers, then the rest
  int64_t scratch_bytes = 0;
};

// A region ready to run: a plan that writes outputs in place, and one that
// writes them through scratch at the end of each tile, after the tile's last
// read of the inputs (for an output that shares its buffer with an input).
struct RegionProgram {
  int64_t elements = 0;
  int64_t tile = 1;
  std::vector<int64_t> input_bytes, output_bytes;
  int64_t io_bytes = 0;               // of the inputs and outputs read and written element for element
  std::vector<bool> input_broadcast;  // read through a broadcast load
  TilePlan direct;
  TilePlan safe;
};

// Compiles a region (FusedRegion's constructor arguments) with `table`'s
// kernels. Throws TypeError for an op or dtype the kernels lack, ShapeError
// or DeviceError for a malformed region.
RegionProgram compile_region(const KernelTable& table, const std::vector<const Node*>& nodes,
                             const std::vector<const Node*>& inputs, const std::vector<const Node*>& outputs);

}  // namespace sluice::cpu
