// Gather, IndexedAdd, IndexedPut. indices' last axis (k entries) indexes
// x's first k axes; each index row picks one contiguous block of x (the
// product of x's dims from k on), so a gather is one memcpy per row, split
// across cores, and a scatter one copy or one add per row. Scatters run
// their rows in order on one thread: duplicate rows then sum in a fixed
// order (add) and the last row wins (put), as ops.h promises. Indices clamp
// into their axis; unsigned ones compare unsigned, so u64 indices at or
// above 2^63 clamp high.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

template <typename I>
int64_t clamp_index(I v, int64_t dim) {
  if constexpr (std::is_signed_v<I>) {
    if (v < 0) return 0;
  }
  const auto last = static_cast<uint64_t>(dim - 1);
  return static_cast<uint64_t>(v) > last ? dim - 1 : static_cast<int64_t>(v);
}

// Where each index row's block starts, in blocks.
struct Blocks {
  int64_t rows = 0;        // index rows
  int64_t block = 1;       // elements per block
  std::vector<int64_t> dims, strides;  // x's first k dims, their strides in blocks
};

Blocks blocks_of(const Shape& x, const Shape& indices) {
  Blocks b;
  const int k = static_cast<int>(indices[indices.rank() - 1]);
  b.rows = k == 0 ? 0 : indices.size() / k;
  for (int i = k; i < x.rank(); ++i) b.block *= x[i];
  b.dims.assign(x.dims().begin(), x.dims().begin() + k);
  b.strides.assign(static_cast<size_t>(k), 1);
  for (int i = k - 2; i >= 0; --i) b.strides[static_cast<size_t>(i)] = b.strides[static_cast<size_t>(i) + 1] * x[i + 1];
  return b;
}

// Calls body(row, block offset) for rows [begin, end).
template <typename Body>
void for_rows(const Blocks& b, DType index_dtype, const void* indices, int64_t begin, int64_t end,
              const Body& body) {
  visit_dtype(index_dtype, [&]<typename I>() {
    if constexpr (std::is_integral_v<I>) {
      const I* idx = static_cast<const I*>(indices);
      const size_t k = b.dims.size();
      for (int64_t r = begin; r < end; ++r) {
        int64_t offset = 0;
        for (size_t j = 0; j < k; ++j) offset += clamp_index(idx[static_cast<size_t>(r) * k + j], b.dims[j]) * b.strides[j];
        body(r, offset);
      }
    }
  });
}

constexpr int64_t kChunkRows = 256;
constexpr int64_t kRowsAhead = 4;
constexpr size_t kPrefetchFrom = 256;    // blocks smaller than this are not prefetched
constexpr size_t kPrefetchBytes = 4096;  // the most of one block prefetched

template <size_t N>
struct CopyFixed {
  void operator()(void* to, const void* from) const { std::memcpy(to, from, N); }
};

void gather(const Node& node, const void* x, const void* indices, void* out) {
  const Spec& xs = node.operands[0]->spec;
  const Spec& is = node.operands[1]->spec;
  const Blocks b = blocks_of(xs.shape, is.shape);
  const auto bytes = static_cast<size_t>(b.block * dtype_size(xs.dtype));
  if (b.rows == 0 || bytes == 0) return;
  auto* to = static_cast<uint8_t*>(out);
  const auto* from = static_cast<const uint8_t*>(x);
  // Offsets are worked out a chunk of rows at a time, so that the source
  // rows a few places ahead can be prefetched: rows picked at random from a
  // large table each start with a cache (and TLB) miss, which a plain loop
  // waits out one row at a time.
  const size_t prefetched = std::min<size_t>(bytes, kPrefetchBytes);
  auto run = [&](auto copy) {
    split_work(b.rows, b.block, [&](int64_t begin, int64_t end) {
      int64_t offsets[kChunkRows];
      for (int64_t c0 = begin; c0 < end; c0 += kChunkRows) {
        const int64_t c1 = std::min(end, c0 + kChunkRows);
        for_rows(b, is.dtype, indices, c0, c1, [&](int64_t r, int64_t offset) { offsets[r - c0] = offset; });
        for (int64_t r = c0; r < c1; ++r) {
          if (r + kRowsAhead < c1 && bytes >= kPrefetchFrom) {
            const uint8_t* ahead = from + static_cast<size_t>(offsets[r + kRowsAhead - c0]) * bytes;
            for (size_t line = 0; line < prefetched; line += 64) __builtin_prefetch(ahead + line);
          }
          copy(to + static_cast<size_t>(r) * bytes, from + static_cast<size_t>(offsets[r - c0]) * bytes);
        }
      }
    });
  };
  switch (bytes) {
    case 1: return run(CopyFixed<1>{});
    case 2: return run(CopyFixed<2>{});
    case 4: return run(CopyFixed<4>{});
    case 8: return run(CopyFixed<8>{});
    case 16: return run(CopyFixed<16>{});
    default: return run([bytes](void* t, const void* f) { std::memcpy(t, f, bytes); });
  }
}

// to[i] += from[i]; integers wrap, f16/bf16 round each sum.
template <typename T>
void add_block(T* to, const T* from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, half>) {
      to[i].bits = float_to_f16(f16_to_float(to[i].bits) + f16_to_float(from[i].bits));
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      to[i].bits = float_to_bf16(bf16_to_float(to[i].bits) + bf16_to_float(from[i].bits));
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      to[i] = static_cast<T>(static_cast<U>(static_cast<U>(to[i]) + static_cast<U>(from[i])));
    } else {
      to[i] = to[i] + from[i];
    }
  }
}

void scatter(const Node& node, const void* x, const void* indices, const void* updates, void* out) {
  const Spec& xs = node.operands[0]->spec;
  const Spec& is = node.operands[1]->spec;
  if (out != x && xs.bytes() > 0) std::memcpy(out, x, static_cast<size_t>(xs.bytes()));
  if (xs.size() == 0) return;
  const Blocks b = blocks_of(xs.shape, is.shape);
  if (node.op == Op::IndexedPut) {
    const auto bytes = static_cast<size_t>(b.block * dtype_size(xs.dtype));
    for_rows(b, is.dtype, indices, 0, b.rows, [&](int64_t r, int64_t offset) {
      std::memcpy(static_cast<uint8_t*>(out) + static_cast<size_t>(offset) * bytes,
                  static_cast<const uint8_t*>(updates) + static_cast<size_t>(r) * bytes, bytes);
    });
    return;
  }
  visit_dtype(node.spec.dtype, [&]<typename T>() {
    T* to = static_cast<T*>(out);
    const T* from = static_cast<const T*>(updates);
    for_rows(b, is.dtype, indices, 0, b.rows, [&](int64_t r, int64_t offset) {
      add_block(to + offset * b.block, from + r * b.block, b.block);
    });
  });
}

}  // namespace

void run_index(const Node& node, std::span<const void* const> in, void* out) {
  switch (node.op) {
    case Op::Gather: return gather(node, in[0], in[1], out);
    case Op::IndexedAdd:
    case Op::IndexedPut: return scatter(node, in[0], in[1], in[2], out);
    default:
      throw InternalError(error_message("host", "run_index given " + std::string(op_name(node.op)), "", ""));
  }
}

}  // namespace sluice::cpu
