// The kernels of the CUDA backend that are algorithms rather than one
// expression per element: windows, cumulative scans, gather and scatter,
// sorting, convolution's column matrices, the copies around linear algebra.
// Each is a template over what the generator fills in for one op and dtype
// (kernel_source_algorithms.cpp):
//   IO   storage and compute types: typedef S, C; C load(S); S store(C)
//   R    a reduction: typedef Acc, Out (the result's storage type);
//        Acc identity(); Acc lift(C); Acc combine(Acc, Acc); Out finish(Acc)
// and reads its parameters by the word positions of kernel_params.h (the
// generator writes them, with kMaxRank and kBlockThreads, before this file).
// Embedded after the prelude in the kernels that use it; NVRTC only.

namespace sl {

// A grid-stride loop's first index and stride.
SL_FN i64 first_item() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
SL_FN i64 item_stride() { return (i64)gridDim.x * blockDim.x; }

// ---------------------------------------------------------------- windows

// x's dims, the window and each axis' step in x, as the window kernels
// read them from their words; returns the rows of the window's outer axes
// (all but the last).
template <int Rank>
SL_FN i64 window_axes(const i64* p, i64 (&dims)[Rank], i64 (&window)[Rank], i64 (&step)[Rank]) {
  i64 rows = 1, stride = 1;
#pragma unroll
  for (int k = Rank - 1; k >= 0; --k) {
    dims[k] = p[window_words::kDims + k];
    window[k] = p[window_words::kWindow + k];
    step[k] = stride;
    stride *= dims[k];
    if (k < Rank - 1) rows *= window[k];
  }
  return rows;
}

// One thread per output: the combination of the window's elements inside x
// (the padding holds the identity, so it is skipped), in row-major order.
// Rank is x's rank, known when the kernel is generated: the loops over axes
// unroll and the window's position stays in registers, its outer axes
// walked as an odometer and its last axis as a plain loop over the part
// inside x (no check, no division per element).
template <class IO, class R, int Rank, int W>
SL_FN void window_reduce(const Words<W>& a) {
  namespace w = window_words;
  const i64* p = (const i64*)a.w;
  const typename IO::S* x = (const typename IO::S*)a.w[w::kSource];
  typename R::Out* y = (typename R::Out*)a.w[w::kResult];
  const i64 n = p[w::kCount];
  if constexpr (Rank == 0) {
    if (first_item() == 0 && n > 0) y[0] = R::finish(R::combine(R::identity(), R::lift(IO::load(x[0]))));
    return;
  } else {
    constexpr int L = Rank - 1;  // the last axis
    i64 dims[Rank], window[Rank], step[Rank];
    const i64 rows = window_axes(p, dims, window, step);
    for (i64 i = first_item(); i < n; i += item_stride()) {
      i64 start[Rank], pos[Rank];
      i64 rest = i;
#pragma unroll
      for (int k = L; k >= 0; --k) {
        const i64 windows = p[w::kWindows + k];
        start[k] = rest % windows * p[w::kStride + k] - p[w::kLow + k];
        rest /= windows;
        pos[k] = start[k];
      }
      // The part of the last axis' window inside x.
      const i64 lo = start[L] < 0 ? -start[L] : 0;
      const i64 hi = start[L] + window[L] > dims[L] ? dims[L] - start[L] : window[L];
      typename R::Acc acc = R::identity();
      for (i64 row = 0; row < rows; ++row) {
        i64 at = start[L];
        bool inside = true;
#pragma unroll
        for (int k = 0; k < L; ++k) {
          inside = inside && pos[k] >= 0 && pos[k] < dims[k];
          at += pos[k] * step[k];
        }
        if (inside)
          for (i64 t = lo; t < hi; ++t) acc = R::combine(acc, R::lift(IO::load(x[at + t])));
#pragma unroll
        for (int k = L - 1; k >= 0; --k) {
          if (++pos[k] < start[k] + window[k]) break;
          pos[k] = start[k];
        }
      }
      y[i] = R::finish(acc);
    }
  }
}

// Windows along a long last axis share most of their inputs: a block takes
// a tile of kTile consecutive windows of one line (the output's last axis)
// and, for each row of the window's outer axes, loads the span of x they
// cover into shared memory once; each thread then combines its windows (a
// block apart, so the stores stay coalesced) from there, in the same order
// as window_reduce. LastWindow: the last axis' window where the generator
// made it a constant (the loop over it unrolls), else 0.
template <class IO, class R, int Rank, int LastWindow, int W>
SL_FN void window_tiles(const Words<W>& a) {
  namespace w = window_words;
  constexpr int L = Rank - 1, kPerThread = kWindowTile / kBlockThreads;
  __shared__ typename R::Acc span[kWindowSpan];
  const i64* p = (const i64*)a.w;
  const typename IO::S* x = (const typename IO::S*)a.w[w::kSource];
  typename R::Out* y = (typename R::Out*)a.w[w::kResult];
  i64 dims[Rank], window[Rank], step[Rank];
  const i64 rows = window_axes(p, dims, window, step);
  const i64 last = LastWindow > 0 ? LastWindow : window[L], hop = p[w::kStride + L];
  const i64 line_windows = p[w::kWindows + L], tile = p[w::kTile];
  const i64 tiles = (line_windows + tile - 1) / tile, items = p[w::kCount] / line_windows * tiles;
  // A 64-bit division costs a block more than its tile's loads: 32 bits
  // where the items fit.
  const bool narrow = items <= 0xffffffffll;
  for (i64 item = blockIdx.x; item < items; item += gridDim.x) {
    const i64 line = narrow ? (i64)((u32)item / (u32)tiles) : item / tiles;
    const i64 first_window = (item - line * tiles) * tile;
    const i64 count = line_windows - first_window < tile ? line_windows - first_window : tile;
    i64 start[Rank], pos[Rank];
    i64 rest = line;
#pragma unroll
    for (int k = L - 1; k >= 0; --k) {
      const i64 windows = p[w::kWindows + k];
      start[k] = rest % windows * p[w::kStride + k] - p[w::kLow + k];
      rest /= windows;
      pos[k] = start[k];
    }
    // The span's first element on the last axis, its length, and the part
    // of it inside x ([lo, hi) of the span; all of it in an interior tile).
    const i64 first = first_window * hop - p[w::kLow + L];
    const int width = (int)((count - 1) * hop + last);
    const int lo = first < 0 ? (int)(-first < width ? -first : width) : 0;
    const int hi = first + width > dims[L] ? (int)(dims[L] - first > lo ? dims[L] - first : lo) : width;
    const bool interior = lo == 0 && hi == width;
    typename R::Acc acc[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) acc[j] = R::identity();
    for (i64 row = 0; row < rows; ++row) {
      i64 at = first;
      bool inside = true;
#pragma unroll
      for (int k = 0; k < L; ++k) {
        inside = inside && pos[k] >= 0 && pos[k] < dims[k];
        at += pos[k] * step[k];
      }
      if (inside) {       // the same for the whole block
        __syncthreads();  // the last span is read
        for (int e = lo + (int)threadIdx.x; e < hi; e += kBlockThreads)
          span[e] = R::lift(IO::load(x[at + e]));
        __syncthreads();
        // A thread's windows: no early exit, so acc stays in registers.
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
          const int o = (int)threadIdx.x + j * kBlockThreads;
          if (o < count) {
            const typename R::Acc* v = span + o * (int)hop;
            if constexpr (LastWindow > 0) {
              if (interior) {
#pragma unroll
                for (int t = 0; t < LastWindow; ++t) acc[j] = R::combine(acc[j], v[t]);
              } else {
                const int from = lo - o * (int)hop, to = hi - o * (int)hop;
#pragma unroll
                for (int t = 0; t < LastWindow; ++t)
                  if (t >= from && t < to) acc[j] = R::combine(acc[j], v[t]);
              }
            } else {
              const int from = lo - o * (int)hop > 0 ? lo - o * (int)hop : 0;
              const int to = hi - o * (int)hop < (int)last ? hi - o * (int)hop : (int)last;
              for (int t = from; t < to; ++t) acc[j] = R::combine(acc[j], v[t]);
            }
          }
        }
      }
#pragma unroll
      for (int k = L - 1; k >= 0; --k) {
        if (++pos[k] < start[k] + window[k]) break;
        pos[k] = start[k];
      }
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int o = (int)threadIdx.x + j * kBlockThreads;
      if (o < count) y[line * line_windows + first_window + o] = R::finish(acc[j]);
    }
  }
}

// Whether a replaces b as a window's pick: strictly better, or a NaN over a
// number (the first NaN stays).
template <bool Max, class C>
SL_FN bool better(C a, C b) {
  if (a != a) return b == b;
  return Max ? a > b : a < b;
}

// One thread per window: the flat index in x of its first largest
// (smallest) element inside x, or -1 for a window wholly in the padding.
template <class IO, bool Max, int W>
SL_FN void window_pick(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const typename IO::S* x = (const typename IO::S*)a.w[window_words::kSource];
  i64* picks = (i64*)a.w[window_words::kPicks];
  const int rank = (int)p[window_words::kRank];
  const i64 n = p[window_words::kCount];
  const i64* dims = p + window_words::kDims;
  const i64* windows = p + window_words::kWindows;
  const i64* window = p + window_words::kWindow;
  i64 size = 1;
  for (int k = 0; k < rank; ++k) size *= window[k];
  for (i64 w = first_item(); w < n; w += item_stride()) {
    i64 start[kMaxRank];
    i64 rest = w;
    for (int k = rank - 1; k >= 0; --k) {
      start[k] = rest % windows[k] * p[window_words::kStride + k] - p[window_words::kLow + k];
      rest /= windows[k];
    }
    i64 best = -1;
    typename IO::C best_value = typename IO::C(0);
    for (i64 t = 0; t < size; ++t) {
      i64 at = 0, step = 1, left = t;
      bool inside = true;
      for (int k = rank - 1; k >= 0; --k) {
        const i64 c = start[k] + left % window[k];
        left /= window[k];
        inside = inside && c >= 0 && c < dims[k];
        at += c * step;
        step *= dims[k];
      }
      if (!inside) continue;
      const typename IO::C v = IO::load(x[at]);
      if (best < 0 || better<Max>(v, best_value)) {
        best = at;
        best_value = v;
      }
    }
    picks[w] = best;
  }
}

// One thread per element of the result: init plus the source values of the
// windows that picked it, added in window order (as the host backend, so
// float sums are the same), R summing in the result's compute type.
template <class IO, class R, int W>
SL_FN void window_scatter(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const i64* picks = (const i64*)a.w[window_words::kPicks];
  const typename IO::S* source = (const typename IO::S*)a.w[window_words::kSource2];
  const typename IO::S init = *(const typename IO::S*)a.w[window_words::kInit];
  typename R::Out* y = (typename R::Out*)a.w[window_words::kResult];
  const int rank = (int)p[window_words::kRank];
  const i64* dims = p + window_words::kDims;
  const i64* windows = p + window_words::kWindows;
  const i64* window = p + window_words::kWindow;
  i64 n = 1;
  for (int k = 0; k < rank; ++k) n *= dims[k];
  for (i64 i = first_item(); i < n; i += item_stride()) {
    // Per axis, the windows whose span holds this element: j with
    // j * stride - low <= c < j * stride - low + window.
    i64 lo[kMaxRank], hi[kMaxRank], j[kMaxRank];
    bool none = false;
    i64 rest = i;
    for (int k = rank - 1; k >= 0; --k) {
      const i64 c = rest % dims[k] + p[window_words::kLow + k];
      rest /= dims[k];
      const i64 s = p[window_words::kStride + k];
      const i64 first = c - window[k] + 1 <= 0 ? 0 : (c - window[k] + s) / s;
      const i64 last = c / s < windows[k] - 1 ? c / s : windows[k] - 1;
      lo[k] = first;
      hi[k] = last;
      j[k] = first;
      none = none || c < 0 || first > last;
    }
    typename R::Acc acc = R::lift(IO::load(init));
    if (!none) {
      for (;;) {
        i64 w = 0;
        for (int k = 0; k < rank; ++k) w = w * windows[k] + j[k];
        if (picks[w] == i) acc = R::combine(acc, R::lift(IO::load(source[w])));
        int k = rank - 1;
        for (; k >= 0; --k) {
          if (++j[k] <= hi[k]) break;
          j[k] = lo[k];
        }
        if (k < 0) break;
      }
    }
    y[i] = R::finish(acc);
  }
}

// ---------------------------------------------------------------- cumulative scans

// The input as [outer][n][inner]: a line is one (outer, inner) pair, its n
// elements `inner` apart. The running value starts as the line's first
// element (not identity combined with it: 0 + -0.0 would lose the sign).
template <class IO, class R, int W>
SL_FN void cumulative(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const typename IO::S* x = (const typename IO::S*)a.w[scan_words::kSource];
  typename R::Out* y = (typename R::Out*)a.w[scan_words::kResult];
  const i64 outer = p[scan_words::kOuter], n = p[scan_words::kN], inner = p[scan_words::kInner], lines = outer * inner;
  const bool reverse = p[scan_words::kReverse] != 0;
  if (!p[scan_words::kBlockPerLine]) {
    // A thread per line: neighbouring threads read neighbouring elements
    // when inner > 1.
    for (i64 line = first_item(); line < lines; line += item_stride()) {
      const i64 base = line / inner * n * inner + line % inner;
      typename R::Acc acc = R::identity();
      for (i64 s = 0; s < n; ++s) {
        const i64 at = base + (reverse ? n - 1 - s : s) * inner;
        const typename R::Acc v = R::lift(IO::load(x[at]));
        acc = s == 0 ? v : R::combine(acc, v);
        y[at] = R::finish(acc);
      }
    }
    return;
  }
  // A block per line, a tile of blockDim elements at a time: an inclusive
  // scan of the tile in shared memory (Hillis and Steele), then the running
  // value of the tiles before combined in front.
  __shared__ typename R::Acc tile[kBlockThreads];
  for (i64 line = blockIdx.x; line < lines; line += gridDim.x) {
    const i64 base = line / inner * n * inner + line % inner;
    typename R::Acc carry = R::identity();
    for (i64 t0 = 0; t0 < n; t0 += blockDim.x) {
      const i64 s = t0 + threadIdx.x;
      const i64 at = base + (reverse ? n - 1 - s : s) * inner;
      if (s < n) tile[threadIdx.x] = R::lift(IO::load(x[at]));
      __syncthreads();
      for (unsigned off = 1; off < blockDim.x; off *= 2) {
        typename R::Acc before = R::identity();
        const bool takes = threadIdx.x >= off && s < n;
        if (takes) before = tile[threadIdx.x - off];
        __syncthreads();
        if (takes) tile[threadIdx.x] = R::combine(before, tile[threadIdx.x]);
        __syncthreads();
      }
      if (s < n) {
        const typename R::Acc v = t0 == 0 ? tile[threadIdx.x] : R::combine(carry, tile[threadIdx.x]);
        y[at] = R::finish(v);
      }
      const i64 last = (n - t0 < (i64)blockDim.x ? n - t0 : (i64)blockDim.x) - 1;
      carry = t0 == 0 ? tile[last] : R::combine(carry, tile[last]);
      __syncthreads();
    }
  }
}

// ---------------------------------------------------------------- gather and scatter

// Entry q of index row r, clamped into [0, dim): below 0 is 0; unsigned
// indices compare unsigned, so those at or above 2^63 clamp high. The
// index dtype is a word (its size in bytes, times 2, plus 1 when signed),
// so that one kernel serves every index dtype.
template <class I>
SL_FN i64 clamp_index(I v, i64 dim) {
  if constexpr (traits<I>::is_signed)
    if (v < I(0)) return 0;
  return (u64)v > (u64)(dim - 1) ? dim - 1 : (i64)v;
}
SL_FN i64 index_entry(const void* indices, int kind, i64 at, i64 dim) {
  switch (kind) {
    case 2: return clamp_index(((const u8*)indices)[at], dim);
    case 3: return clamp_index(((const i8*)indices)[at], dim);
    case 4: return clamp_index(((const u16*)indices)[at], dim);
    case 5: return clamp_index(((const i16*)indices)[at], dim);
    case 8: return clamp_index(((const u32*)indices)[at], dim);
    case 9: return clamp_index(((const i32*)indices)[at], dim);
    case 16: return clamp_index(((const u64*)indices)[at], dim);
    default: return clamp_index(((const i64*)indices)[at], dim);
  }
}

// Where index row r's block starts in x, in elements.
template <int W>
SL_FN i64 block_start(const Words<W>& a, i64 r) {
  const i64* p = (const i64*)a.w;
  const void* indices = (const void*)a.w[index_words::kIndices];
  const int k = (int)p[index_words::kK], kind = (int)p[index_words::kIndexKind];
  i64 offset = 0;
  for (int q = 0; q < k; ++q)
    offset += index_entry(indices, kind, r * k + q, p[index_words::kDims + q]) * p[index_words::kStrides + q];
  return offset * p[index_words::kBlock];
}

// One thread per element of the result (rows x block).
template <class E, int W>
SL_FN void gather(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const E* x = (const E*)a.w[index_words::kSource];
  E* y = (E*)a.w[index_words::kResult];
  const i64 block = p[index_words::kBlock], n = p[index_words::kRows] * block;
  for (i64 i = first_item(); i < n; i += item_stride()) y[i] = x[block_start(a, i / block) + i % block];
}

// Adds v at p atomically. Elements of one or two bytes (no atomics of
// their own) are added by compare-and-swap of the aligned word holding
// them; f16 and bf16 round each sum, as the host backend.
template <class IO>
SL_FN void atomic_add(typename IO::S* at, typename IO::C v) {
  typedef typename IO::S S;
  if constexpr (sizeof(S) <= 2) {
    u32* word = (u32*)((u64)at & ~(u64)3);
    const int shift = (int)((u64)at & 3) * 8;
    const u32 mask = (sizeof(S) == 1 ? 0xffu : 0xffffu) << shift;
    u32 old = *word, assumed;
    do {
      assumed = old;
      const S current = (S)((assumed & mask) >> shift);  // S is an integer type: f16 and bf16 are stored as u16
      const S next = IO::store(add(IO::load(current), v));
      const u32 next_bits = (u32)(sizeof(S) == 1 ? (u32)(u8)next : (u32)(u16)next);
      old = atomicCAS(word, assumed, (assumed & ~mask) | (next_bits << shift));
    } while (assumed != old);
  } else if constexpr (traits<S>::is_cx) {
    atomicAdd(&at->re, v.re);
    atomicAdd(&at->im, v.im);
  } else if constexpr (traits<S>::is_float) {
    atomicAdd(at, v);
  } else if constexpr (sizeof(S) == 4) {
    atomicAdd((unsigned*)at, (unsigned)v);  // wraps, as the host's
  } else {
    atomicAdd((unsigned long long*)at, (unsigned long long)v);
  }
}

// indexed_add: one thread per update element. Duplicate rows add in any
// order: integers give the host's bits, floats its sums to rounding.
template <class IO, int W>
SL_FN void scatter_add(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const typename IO::S* updates = (const typename IO::S*)a.w[index_words::kSource];
  typename IO::S* y = (typename IO::S*)a.w[index_words::kResult];
  const i64 block = p[index_words::kBlock], n = p[index_words::kRows] * block;
  for (i64 i = first_item(); i < n; i += item_stride())
    atomic_add<IO>(y + block_start(a, i / block) + i % block, IO::load(updates[i]));
}

// indexed_put in two kernels, so that where rows repeat the last one wins
// (as the host, which writes them in order): each row claims its block
// (the claims, one per block of x, start at -1 and keep the largest row),
// then each element of a row that holds its block's claim is written.
template <int W>
SL_FN void put_claim(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  long long* claims = (long long*)a.w[index_words::kClaims];
  const i64 rows = p[index_words::kRows], block = p[index_words::kBlock];
  for (i64 r = first_item(); r < rows; r += item_stride()) atomicMax(claims + block_start(a, r) / block, (long long)r);
}
template <class E, int W>
SL_FN void put_write(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const E* updates = (const E*)a.w[index_words::kSource];
  const long long* claims = (const long long*)a.w[index_words::kClaims];
  E* y = (E*)a.w[index_words::kResult];
  const i64 block = p[index_words::kBlock], n = p[index_words::kRows] * block;
  for (i64 i = first_item(); i < n; i += item_stride()) {
    const i64 r = i / block, start = block_start(a, r);
    if (claims[start / block] == r) y[start + i % block] = updates[i];
  }
}

// ---------------------------------------------------------------- sorting

// Sort and argsort along an axis, each line (the input as [outer][n][inner])
// on its own: a bitonic sort of (key, position) pairs, padded to a power of
// two P per line. The key is the value as an unsigned integer of the same
// order (numpy's: NaNs after every number, -0.0 equal to 0.0), inverted
// when descending; the position breaks ties, so the order is total and the
// sort stable whatever the network does. Pairs live in a scratch of
// [lines][P] keys and positions; steps whose partners are within a tile of
// kSortTile (kernel_params.h) share memory, the others run a launch each.

template <class C>
SL_FN u64 sort_key(C v) {
  if constexpr (traits<C>::is_int) {
    if constexpr (traits<C>::is_signed) return (u64)(i64)v ^ 0x8000000000000000ull;
    return (u64)v;
  } else {
    double d = (double)v;
    if (d != d) return ~0ull;
    if (d == 0) d = 0;  // -0.0 sorts as 0.0
    const u64 b = bits(d);
    return (b >> 63) ? ~b : b | 0x8000000000000000ull;
  }
}

// Orders the pair at i and its partner i + j: ascending where bit k of i is
// clear (i is a position within the line).
SL_FN void sort_pair(u64* keys, u64* places, i64 a, i64 b, bool ascending) {
  const u64 ka = keys[a], kb = keys[b], pa = places[a], pb = places[b];
  const bool greater = ka > kb || (ka == kb && pa > pb);
  if (greater == ascending) {
    keys[a] = kb;
    keys[b] = ka;
    places[a] = pb;
    places[b] = pa;
  }
}

// Pairs of every line: (key, position) of each element, padding last.
template <class IO, bool Descending, int W>
SL_FN void sort_prepare(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const typename IO::S* x = (const typename IO::S*)a.w[sort_words::kSource];
  u64* keys = (u64*)a.w[sort_words::kKeys];
  u64* places = (u64*)a.w[sort_words::kPlaces];
  const i64 n = p[sort_words::kN], inner = p[sort_words::kInner], padded = p[sort_words::kPadded];
  const i64 total = p[sort_words::kLines] * padded;
  for (i64 i = first_item(); i < total; i += item_stride()) {
    const i64 line = i / padded, s = i % padded;
    if (s < n) {
      const u64 key = sort_key(IO::load(x[line / inner * n * inner + line % inner + s * inner]));
      keys[i] = Descending ? ~key : key;  // a NaN first
      places[i] = (u64)s;
    } else {
      keys[i] = ~0ull;
      places[i] = ~0ull;
    }
  }
}

// One step (k, j) of the network over every line, partners j apart.
template <int W>
SL_FN void sort_step(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  u64* keys = (u64*)a.w[sort_words::kKeys];
  u64* places = (u64*)a.w[sort_words::kPlaces];
  const i64 padded = p[sort_words::kPadded], k = p[sort_words::kK], j = p[sort_words::kJ];
  const i64 pairs = p[sort_words::kLines] * (padded / 2);
  for (i64 t = first_item(); t < pairs; t += item_stride()) {
    const i64 line = t / (padded / 2), q = t % (padded / 2);
    const i64 i = 2 * j * (q / j) + q % j;
    sort_pair(keys + line * padded, places + line * padded, i, i + j, (i & k) == 0);
  }
}

// The steps k = kK, 2 kK, ... kKLast, each with every j below the tile, on
// a tile of kSortTile pairs in shared memory: a block per tile.
template <int W>
SL_FN void sort_tile(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  u64* keys = (u64*)a.w[sort_words::kKeys];
  u64* places = (u64*)a.w[sort_words::kPlaces];
  const i64 padded = p[sort_words::kPadded];
  const i64 size = padded < kSortTile ? padded : kSortTile;
  const i64 tiles = p[sort_words::kLines] * (padded / size);
  __shared__ u64 tile_keys[kSortTile], tile_places[kSortTile];
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const i64 first = tile * size, at = first % padded;  // where the tile starts in its line
    for (i64 e = threadIdx.x; e < size; e += blockDim.x) {
      tile_keys[e] = keys[first + e];
      tile_places[e] = places[first + e];
    }
    __syncthreads();
    for (i64 k = p[sort_words::kK]; k <= p[sort_words::kKLast]; k *= 2) {
      for (i64 j = (k / 2 < size / 2 ? k / 2 : size / 2); j >= 1; j /= 2) {
        for (i64 q = threadIdx.x; q < size / 2; q += blockDim.x) {
          const i64 i = 2 * j * (q / j) + q % j;
          sort_pair(tile_keys, tile_places, i, i + j, ((at + i) & k) == 0);
        }
        __syncthreads();
      }
    }
    for (i64 e = threadIdx.x; e < size; e += blockDim.x) {
      keys[first + e] = tile_keys[e];
      places[first + e] = tile_places[e];
    }
    __syncthreads();
  }
}

// The result: each line's values in sorted order (E: the storage type), or
// their positions as indices of type E.
template <class E, bool Positions, int W>
SL_FN void sort_write(const Words<W>& a) {
  const i64* p = (const i64*)a.w;
  const E* x = (const E*)a.w[sort_words::kSource];
  const u64* places = (const u64*)a.w[sort_words::kPlaces];
  E* y = (E*)a.w[sort_words::kResult];
  const i64 n = p[sort_words::kN], inner = p[sort_words::kInner], padded = p[sort_words::kPadded];
  const i64 total = p[sort_words::kLines] * n;
  for (i64 i = first_item(); i < total; i += item_stride()) {
    const i64 line = i / n, r = i % n, base = line / inner * n * inner + line % inner;
    const u64 from = places[line * padded + r];
    if constexpr (Positions) y[base + r * inner] = (E)from;
    else y[base + r * inner] = x[base + (i64)from * inner];
  }
}

// ---------------------------------------------------------------- convolution

// Conv's column matrices: item (b, group)'s element [c * kernel_size + t][q]
// is the input element that window position t of output position q reads in
// the item's channel c, or zero in padding and in the holes of input
// dilation. Feature groups read a block of channels of batch b; batch
// groups all channels of batch group * out_batch + b. A block takes a plane
// (an item's channel: kernel_size rows) at a time; its threads take output
// positions, each working out its position's coordinates once and then
// walking the window (the same walk for the whole block) to write its
// column of the plane's rows, so an element costs a few additions and a
// comparison per axis; the plane's input stays in cache while its rows are
// written. Spatial is known when the kernel is generated (its loops
// unroll), and so is I: int where a channel's input and its offsets fit in
// 31 bits, else i64 (the generator's choice).
template <class E, int Spatial, class I, int W>
SL_FN void im2col(const Words<W>& a) {
  namespace w = conv_words;
  const i64* p = (const i64*)a.w;
  const E* x = (const E*)a.w[w::kInput];
  E* col = (E*)a.w[w::kColumns];
  // One launch's columns are under 2^31 elements (cuda_step_conv.cpp and
  // the backend's declines see to it): their indices are 32-bit.
  const u32 groups = (u32)p[w::kGroups], group_in = (u32)p[w::kGroupIn];
  const u32 kernel_size = (u32)p[w::kKernelSize], output_size = (u32)p[w::kOutputSize];
  const i64 first_batch = p[w::kFirstBatch], out_batch = p[w::kOutBatch], channels = p[w::kChannels];
  const i64 batch_groups = p[w::kBatchGroups], input_size = p[w::kInputSize];
  const u32 planes = (u32)p[w::kItems] * group_in;
  constexpr int kAxes = Spatial > 0 ? Spatial : 1;  // arrays of at least one
  I in_dims[kAxes], kernel_reach[kAxes], dilation[kAxes], input_dilation[kAxes];
  bool dilated = false;  // input dilation on some axis: a remainder per element
#pragma unroll
  for (int d = 0; d < Spatial; ++d) {
    in_dims[d] = (I)p[w::kInDims + d];
    dilation[d] = (I)p[w::kKernelDilation + d];
    kernel_reach[d] = (I)p[w::kKernelDims + d] * dilation[d];
    input_dilation[d] = (I)p[w::kInputDilation + d];
    dilated = dilated || input_dilation[d] != 1;
  }
  for (u32 plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const u32 c = plane % group_in, item = plane / group_in;
    const i64 b = first_batch + item / groups, group = item % groups;
    const i64 batch = batch_groups > 1 ? group * out_batch + b : b;
    const i64 c0 = batch_groups > 1 ? 0 : group * group_in;
    const E* source = x + (batch * channels + c0 + c) * input_size;
    E* rows = col + plane * kernel_size * output_size;
    for (u32 q = threadIdx.x; q < output_size; q += blockDim.x) {
      // Where q's window starts on each axis, in the (dilated) input, and
      // how far into the window the walk is.
      I origin[kAxes], reach[kAxes];
      u32 rest = q;
#pragma unroll
      for (int d = Spatial - 1; d >= 0; --d) {
        const u32 out_dim = (u32)p[w::kOutDims + d];
        origin[d] = (I)(rest % out_dim) * (I)p[w::kStrides + d] - (I)p[w::kLow + d];
        rest /= out_dim;
        reach[d] = 0;
      }
      for (u32 t = 0; t < kernel_size; ++t) {
        I offset = 0;
        bool inside = true;
#pragma unroll
        for (int d = 0; d < Spatial; ++d) {
          I at = origin[d] + reach[d];
          if (dilated) {
            inside = inside && at % input_dilation[d] == 0;
            at = at < 0 ? -1 : at / input_dilation[d];
          }
          // One comparison for 0 <= at < in_dims.
          inside = inside && (typename unsigned_of<I>::type)at < (typename unsigned_of<I>::type)in_dims[d];
          offset = offset * in_dims[d] + at;
        }
        rows[t * output_size + q] = inside ? source[offset] : E{};
        // The next window position: the last axis fastest.
#pragma unroll
        for (int d = Spatial - 1; d >= 0; --d) {
          reach[d] += dilation[d];
          if (reach[d] < kernel_reach[d]) break;
          reach[d] = 0;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- linear algebra

template <class E> SL_FN E conjugated(E v) { return v; }
template <class F> SL_FN cx<F> conjugated(cx<F> v) { return mk(v.re, -v.im); }
template <class E> SL_FN E unit() { return E(1); }
template <class E> SL_FN E nothing() { return E(0); }
template <> SL_FN c64 unit<c64>() { return mk(1.0f, 0.0f); }
template <> SL_FN c128 unit<c128>() { return mk(1.0, 0.0); }
template <> SL_FN c64 nothing<c64>() { return mk(0.0f, 0.0f); }
template <> SL_FN c128 nothing<c128>() { return mk(0.0, 0.0); }
template <class E> SL_FN E not_a_number() { return E(flt<E>::nan()); }
template <> SL_FN c64 not_a_number<c64>() { return mk(flt<float>::nan(), flt<float>::nan()); }
template <> SL_FN c128 not_a_number<c128>() { return mk(flt<double>::nan(), flt<double>::nan()); }

// One thread per element of the result (linalg_words).
template <class E, int W>
SL_FN void matrix_copy(const Words<W>& a) {
  namespace w = linalg_words;
  const i64* p = (const i64*)a.w;
  const E* x = (const E*)a.w[w::kSource];
  E* y = (E*)a.w[w::kResult];
  const i64 rows = p[w::kRows], cols = p[w::kCols], n = p[w::kCount] * rows * cols;
  const bool transpose = p[w::kTranspose] != 0, conjugate = p[w::kConjugate] != 0;
  const i64 ld = p[w::kSourceLd], stride = p[w::kSourceStride], source_rows = p[w::kSourceRows];
  const int part = (int)p[w::kPart];
  for (i64 i = first_item(); i < n; i += item_stride()) {
    const i64 c = i % cols, r = i / cols % rows, b = i / cols / rows;
    const i64 major = transpose ? c : r, minor = transpose ? r : c;
    E v = nothing<E>();
    const bool kept = part == 0 || (part == 1 && c <= r) || (part == 2 && c < r) || (part == 3 && c >= r);
    if (kept && major < source_rows) v = x[b * stride + major * ld + minor];
    if (conjugate) v = conjugated(v);
    if (part == 2 && c == r) v = unit<E>();
    y[i] = v;
  }
}

// Matrices whose status is not 0 (cuSOLVER's info: not positive definite,
// singular, no convergence) become NaN, as ops.h says: a thread per element.
template <class E, int W>
SL_FN void nan_where_failed(const Words<W>& a) {
  namespace w = linalg_words;
  const i64* p = (const i64*)a.w;
  const int* info = (const int*)a.w[w::kInfo];
  E* y = (E*)a.w[w::kResult];
  const i64 size = p[w::kRows] * p[w::kCols], n = p[w::kCount] * size;
  for (i64 i = first_item(); i < n; i += item_stride())
    if (info[i / size] != 0) y[i] = not_a_number<E>();
}

// qr (a [m][n], q [m][kSourceLd], r [..][n]): where a's first column starts
// with -0.0 (its real part) and is not all zero, LAPACK's first reflector
// takes the sign of -0.0 and cuSOLVER's that of +0.0, so q's first column
// and r's first row are negated, making them LAPACK's (a thread per matrix).
SL_FN bool negative_zero(float v) { return v == 0 && (bits(v) >> 31) != 0; }
SL_FN bool negative_zero(double v) { return v == 0 && (bits(v) >> 63) != 0; }
template <class E> SL_FN bool negative_zero(E v) { return negative_zero(v.re); }
template <class E> SL_FN bool nonzero(E v) { return v != E(0); }
template <class F> SL_FN bool nonzero(cx<F> v) { return v.re != 0 || v.im != 0; }
template <class E> SL_FN bool nonzero_imag(E) { return false; }
template <class F> SL_FN bool nonzero_imag(cx<F> v) { return v.im != 0; }

template <class E, int W>
SL_FN void qr_signs(const Words<W>& a) {
  namespace w = linalg_words;
  const i64* p = (const i64*)a.w;
  const E* x = (const E*)a.w[w::kSource];
  E* q = (E*)a.w[w::kResult];
  E* r = (E*)a.w[w::kSecond];
  const i64 m = p[w::kRows], n = p[w::kCols], qcols = p[w::kSourceLd], rrows = qcols;
  for (i64 b = first_item(); b < p[w::kCount]; b += item_stride()) {
    const E* xb = x + b * m * n;
    bool reflects = nonzero_imag(xb[0]);
    for (i64 i = 1; i < m; ++i) reflects = reflects || nonzero(xb[i * n]);
    if (!negative_zero(xb[0]) || !reflects) continue;
    for (i64 i = 0; i < m; ++i) q[b * m * qcols + i * qcols] = negate(q[b * m * qcols + i * qcols]);
    if (rrows > 0)
      for (i64 j = 0; j < n; ++j) r[b * rrows * n + j] = negate(r[b * rrows * n + j]);
  }
}

// lu's p (s64 [n][n], zeroed before) from getrf's pivots (1-based, row r
// swapped with row pivots[r] in order): a thread per matrix, the
// permutation built in the scratch (n per matrix). Row r of l u is row
// perm[r] of a, so p has a 1 at (perm[r], r).
template <int W>
SL_FN void permutation(const Words<W>& a) {
  namespace w = linalg_words;
  const i64* p = (const i64*)a.w;
  const i64* pivots = (const i64*)a.w[w::kSource];
  i64* y = (i64*)a.w[w::kResult];
  i64* perm = (i64*)a.w[w::kScratch];
  const i64 n = p[w::kRows];
  for (i64 b = first_item(); b < p[w::kCount]; b += item_stride()) {
    i64* q = perm + b * n;
    for (i64 r = 0; r < n; ++r) q[r] = r;
    for (i64 r = 0; r < n; ++r) {
      const i64 s = pivots[b * n + r] - 1, t = q[r];
      q[r] = q[s];
      q[s] = t;
    }
    for (i64 r = 0; r < n; ++r) y[b * n * n + q[r] * n + r] = 1;
  }
}

}  // namespace sl
