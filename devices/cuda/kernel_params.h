#pragma once
// How the CUDA backend's generated kernels take their parameters: one
// struct of 64-bit words (sl::Words<N> in the prelude), which the launcher
// fills and the kernel reads by index. The word positions of the
// shape-generic kernels are named here, once, for both sides: the generator
// writes these numbers into the source, the launcher packs by them.

#include <array>
#include <cstdint>
#include <cstring>

#include <sluice/ops/shape.h>

namespace sluice::cuda {

using Word = uint64_t;

// Box copies (shape ops, dot's permutations): devices/detail/shape_copies.h's Box,
// normalised, with the offsets and dynamic starts of one BoxCopy.
namespace box_words {
inline constexpr int kSource = 0, kResult = 1, kCount = 2, kRank = 3, kSourceOffset = 4, kResultOffset = 5,
                     kDynamicRank = 6, kDynamicOnSource = 7, kDims = 8, kResultStrides = kDims + kMaxRank,
                     kSourceStrides = kResultStrides + kMaxRank, kStarts = kSourceStrides + kMaxRank,
                     kMaxStart = kStarts + kMaxRank, kDynamicStride = kMaxStart + kMaxRank,
                     kWords = kDynamicStride + kMaxRank;
}

// Reductions: the input's kept axes (in the output's order) and reduced axes,
// each with its dims and its strides in the input; kBlockPerOutput chooses
// how the kernel shares the work (launch_geometry.h).
namespace reduce_words {
inline constexpr int kSource = 0, kResult = 1, kOutputs = 2, kReduced = 3, kKeptRank = 4, kReducedRank = 5,
                     kBlockPerOutput = 6, kKeptDims = 7, kKeptStrides = kKeptDims + kMaxRank, kReducedDims = kKeptStrides + kMaxRank,
                     kReducedStrides = kReducedDims + kMaxRank, kWords = kReducedStrides + kMaxRank;
}

// Integer dot over [batch][m][k] x [batch][k][n].
namespace dot_words {
inline constexpr int kA = 0, kB = 1, kC = 2, kBatch = 3, kM = 4, kN = 5, kK = 6, kWords = 7;
}

// ifft's scaling by 1/n: the data, its complex element count, the scale.
namespace scale_words {
inline constexpr int kData = 0, kCount = 1, kScale = 2, kWords = 3;
}

// Windows (window_sum/product/max/min, window_scatter_max/min): the input's
// (x's) dims, the windows' count per axis (the output's dims, source's for a
// scatter), and per axis the window, its stride and its low padding.
// kPicks: a scatter's scratch of one pick per window; kSource2 and kInit its
// source and init.
namespace window_words {
inline constexpr int kSource = 0, kResult = 1, kPicks = 2, kSource2 = 3, kInit = 4, kCount = 5, kRank = 6,
                     kDims = 7, kWindows = kDims + kMaxRank, kWindow = kWindows + kMaxRank,
                     kStride = kWindow + kMaxRank, kLow = kStride + kMaxRank, kTile = kLow + kMaxRank,
                     kWords = kTile + 1;
}

// Cumulative scans over the input viewed as [outer][n][inner], from the end
// when kReverse; kBlockPerLine chooses how the kernel shares the work
// (launch_geometry.h).
namespace scan_words {
inline constexpr int kSource = 0, kResult = 1, kOuter = 2, kN = 3, kInner = 4, kReverse = 5, kBlockPerLine = 6,
                     kWords = 7;
}

// Gather and scatter (indexed_add, indexed_put): `rows` index rows of k
// entries each pick a block of `block` elements of x, at the sum of each
// entry, clamped into its axis' dim, times that axis' stride in blocks.
// kIndexKind: the index dtype, as its size in bytes times 2 plus 1 when
// signed. kClaims: indexed_put's scratch of one claim per block of x.
namespace index_words {
inline constexpr int kSource = 0, kIndices = 1, kResult = 2, kClaims = 3, kRows = 4, kBlock = 5, kK = 6,
                     kIndexKind = 7, kDims = 8, kStrides = kDims + kMaxRank, kWords = kStrides + kMaxRank;
}

// Sort and argsort: the input as [lines / inner][n][inner], its lines
// padded to a power of two (kPadded) of (key, place) pairs in two scratch
// arrays; kK, kJ: a step of the network (kKLast: the last k of a tile's).
namespace sort_words {
inline constexpr int kSource = 0, kResult = 1, kKeys = 2, kPlaces = 3, kLines = 4, kN = 5, kInner = 6, kPadded = 7,
                     kK = 8, kJ = 9, kKLast = 10, kWords = 11;
}
// Pairs a block sorts in shared memory (16 bytes each: 32 KiB).
inline constexpr int64_t kSortTile = 2048;

// Conv's column matrices (devices/detail/conv_geometry.h's sizes): kItems
// (output batch, group) items from output batch kFirstBatch on, each a
// [group_in * kernel_size][output_size] matrix of the input's elements its
// windows read; per spatial axis the input's, kernel's and output's dims,
// the stride, the low padding and the input and kernel dilations.
namespace conv_words {
inline constexpr int kInput = 0, kColumns = 1, kItems = 2, kFirstBatch = 3, kGroups = 4, kOutBatch = 5,
                     kChannels = 6, kGroupIn = 7, kBatchGroups = 8, kInputSize = 9, kKernelSize = 10, kOutputSize = 11,
                     kInDims = 12, kKernelDims = kInDims + kMaxRank, kOutDims = kKernelDims + kMaxRank,
                     kStrides = kOutDims + kMaxRank, kLow = kStrides + kMaxRank, kInputDilation = kLow + kMaxRank,
                     kKernelDilation = kInputDilation + kMaxRank, kWords = kKernelDilation + kMaxRank;
}

// Linear algebra's helpers around cuSOLVER (which stores matrices by
// column): a batch of kCount result matrices [kRows][kCols] copied from a
// source read by row (or by column, kTranspose), whose matrices start
// kSourceStride apart with kSourceLd elements between rows (columns) and
// have kSourceRows rows (columns) (zeros past them); kPart keeps a part
// (linalg_part), kConjugate conjugates. kInfo: one status per matrix, whose
// matrices become NaN where it is not 0. kSecond: a second result (qr's r).
namespace linalg_words {
inline constexpr int kSource = 0, kResult = 1, kInfo = 2, kScratch = 3, kCount = 4, kRows = 5, kCols = 6,
                     kTranspose = 7, kSourceLd = 8, kSourceStride = 9, kSourceRows = 10, kPart = 11, kConjugate = 12,
                     kSecond = 13, kWords = 14;
}
// The part of a matrix a copy keeps (zeros elsewhere).
enum class LinalgPart : int64_t { All = 0, Lower = 1, UnitLower = 2, Upper = 3 };

// A word holding a pointer, a count or the bits of a double.
inline Word word(const void* p) { return static_cast<Word>(reinterpret_cast<uintptr_t>(p)); }
inline Word word(int64_t v) { return static_cast<Word>(v); }
inline Word word_of_double(double v) {
  Word w;
  std::memcpy(&w, &v, sizeof w);
  return w;
}

}  // namespace sluice::cuda
