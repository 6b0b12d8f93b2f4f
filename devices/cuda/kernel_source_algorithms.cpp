// The sources of the kernels written as templates in kernels/algorithms.cuh
// (windows, cumulative scans, gather and scatter): the prelude, the word
// positions of kernel_params.h, the templates, then for one op and dtype
// the types they take (IO: storage and compute; R: the reduction) and the
// extern "C" entry points instantiating them.

#include <fmt/format.h>

#include <cstdlib>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/kernel_params.h>
#include <sluice/devices/cuda/kernel_source.h>
#include <sluice/devices/cuda/kernel_writing.h>
#include <sluice/devices/cuda/launch_geometry.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {
namespace {

// The word positions, as the kernels name them.
std::string word_positions() {
  namespace w = window_words;
  namespace s = scan_words;
  namespace x = index_words;
  namespace o = sort_words;
  namespace c = conv_words;
  namespace l = linalg_words;
  return fmt::format(
      "constexpr int kMaxRank = {}, kBlockThreads = {}, kSortTile = {}, kWindowTile = {}, kWindowSpan = {};\n"
      "namespace window_words {{ constexpr int kSource = {}, kResult = {}, kPicks = {}, kSource2 = {}, kInit "
      "= {}, "
      "kCount = {}, kRank = {}, kDims = {}, kWindows = {}, kWindow = {}, kStride = {}, kLow = {}, kTile = "
      "{}; }}\n"
      "namespace scan_words {{ constexpr int kSource = {}, kResult = {}, kOuter = {}, kN = {}, kInner = {}, "
      "kReverse = {}, kBlockPerLine = {}; }}\n"
      "namespace index_words {{ constexpr int kSource = {}, kIndices = {}, kResult = {}, kClaims = {}, kRows "
      "= {}, "
      "kBlock = {}, kK = {}, kIndexKind = {}, kDims = {}, kStrides = {}; }}\n"
      "namespace sort_words {{ constexpr int kSource = {}, kResult = {}, kKeys = {}, kPlaces = {}, kLines = "
      "{}, "
      "kN = {}, kInner = {}, kPadded = {}, kK = {}, kJ = {}, kKLast = {}; }}\n"
      "namespace conv_words {{ constexpr int kInput = {}, kColumns = {}, kItems = {}, kFirstBatch = {}, "
      "kGroups = {}, "
      "kOutBatch = {}, kChannels = {}, kGroupIn = {}, kBatchGroups = {}, kInputSize = {}, "
      "kKernelSize = {}, kOutputSize = {}, kInDims = {}, kKernelDims = {}, kOutDims = {}, kStrides = {}, "
      "kLow = {}, "
      "kInputDilation = {}, kKernelDilation = {}; }}\n"
      "namespace linalg_words {{ constexpr int kSource = {}, kResult = {}, kInfo = {}, kScratch = {}, kCount "
      "= {}, "
      "kRows = {}, kCols = {}, kTranspose = {}, kSourceLd = {}, kSourceStride = {}, kSourceRows = {}, kPart "
      "= {}, "
      "kConjugate = {}, kSecond = {}; }}\n",
      kMaxRank, kBlockThreads, kSortTile, kWindowTile, kWindowSpan, w::kSource, w::kResult, w::kPicks,
      w::kSource2, w::kInit, w::kCount, w::kRank, w::kDims, w::kWindows, w::kWindow, w::kStride, w::kLow,
      w::kTile, s::kSource, s::kResult, s::kOuter, s::kN, s::kInner, s::kReverse, s::kBlockPerLine,
      x::kSource, x::kIndices, x::kResult, x::kClaims, x::kRows, x::kBlock, x::kK, x::kIndexKind, x::kDims,
      x::kStrides, o::kSource, o::kResult, o::kKeys, o::kPlaces, o::kLines, o::kN, o::kInner, o::kPadded,
      o::kK, o::kJ, o::kKLast, c::kInput, c::kColumns, c::kItems, c::kFirstBatch, c::kGroups, c::kOutBatch,
      c::kChannels, c::kGroupIn, c::kBatchGroups, c::kInputSize, c::kKernelSize, c::kOutputSize, c::kInDims,
      c::kKernelDims, c::kOutDims, c::kStrides, c::kLow, c::kInputDilation, c::kKernelDilation, l::kSource,
      l::kResult, l::kInfo, l::kScratch, l::kCount, l::kRows, l::kCols, l::kTranspose, l::kSourceLd,
      l::kSourceStride, l::kSourceRows, l::kPart, l::kConjugate, l::kSecond);
}

// Storage and compute types of `t`, as struct `name`.
std::string io_struct(const std::string& name, DType t) {
  return fmt::format(
      "struct {0} {{\n"
      "  typedef {1} S;\n"
      "  typedef {2} C;\n"
      "  static SL_FN C load(S x) {{ return {3}; }}\n"
      "  static SL_FN S store(C x) {{ return {4}; }}\n"
      "}};\n",
      name, storage_type(t), compute_type(t), load(t, "x"), store(t, "x"));
}

// The reduction `op` from `in` to `out`, as struct R.
std::string reduction_struct(Op op, DType in, DType out) {
  const Reduction r = reduction(op, in, out);
  return fmt::format(
      "struct R {{\n"
      "  typedef {0} Acc;\n"
      "  typedef {1} Out;\n"
      "  static SL_FN Acc identity() {{ return {2}; }}\n"
      "  static SL_FN Acc lift({3} x) {{ return {4}; }}\n"
      "  static SL_FN Acc combine(Acc p, Acc q) {{ return {5}; }}\n"
      "  static SL_FN Out finish(Acc p) {{ return {6}; }}\n"
      "}};\n",
      r.acc, storage_type(out), r.identity, compute_type(in), r.lift, r.combine, r.finish);
}

// An entry point `name` calling `call` (head's `resident_blocks`).
std::string entry(const std::string& name, int words, const std::string& call, int resident_blocks = 0) {
  return head(name, words, resident_blocks) + "  sl::" + call + "(a);\n}\n";
}

std::string start() { return prelude_source() + word_positions() + algorithms_source(); }

// The element type a gather or a put copies: a storage type of that size.
std::string element_of(int bytes) {
  switch (bytes) {
    case 1: return "sl::u8";
    case 2: return "sl::u16";
    case 4: return "sl::u32";
    case 8: return "sl::u64";
    case 16: return "sl::b16";
    default: break;
  }
  throw InternalError(error_message("cuda: index kernel", "element size", "1, 2, 4, 8 or 16 bytes", bytes));
}

}  // namespace

// The longest last-axis window a tile kernel unrolls, and the tile
// kernel's blocks resident on a multiprocessor.
constexpr int64_t kUnrolledWindow = 16;
constexpr int kResidentWindowTiles = 2048 / static_cast<int>(kBlockThreads);

KernelSource window_kernel(const Node& node) {
  Op op;
  switch (node.op) {
    case Op::WindowSum: op = Op::Sum; break;
    case Op::WindowProduct: op = Op::Product; break;
    case Op::WindowMax: op = Op::ReduceMax; break;
    case Op::WindowMin: op = Op::ReduceMin; break;
    default:
      throw InternalError(error_message("cuda: window kernel", "op", "a window reduction", std::string(op_name(node.op))));
  }
  const DType in = node.operands[0]->spec.dtype;
  const int rank = node.spec.shape.rank();
  std::string code = start() + io_struct("IO", in) + reduction_struct(op, in, node.spec.dtype) +
                     entry("window", window_words::kWords, fmt::format("window_reduce<IO, R, {}>", rank));
  if (rank > 0) {
    // The last axis' window as a constant where it is short, so a tile's
    // windows unroll their loop over it. Eight blocks resident (a full
    // multiprocessor of threads, registers capped to fit): 0.65 of a copy's
    // bandwidth on an H200, against 0.60 with the registers uncapped (six).
    const int64_t last = node.attrs.dims.back();
    code += entry("window_tiles", window_words::kWords,
                  fmt::format("window_tiles<IO, R, {}, {}>", rank, last <= kUnrolledWindow ? last : 0),
                  kResidentWindowTiles);
    return {std::move(code), {"window", "window_tiles"}};
  }
  return {std::move(code), {"window"}};
}

KernelSource window_scatter_kernel(const Node& node) {
  if (node.op != Op::WindowScatterMax && node.op != Op::WindowScatterMin)
    throw InternalError(error_message("cuda: window scatter kernel", "op", "window_scatter_max or window_scatter_min",
                                      std::string(op_name(node.op))));
  const DType x = node.operands[0]->spec.dtype, t = node.spec.dtype;
  const bool max = node.op == Op::WindowScatterMax;
  std::string code = start() + io_struct("X", x) + io_struct("IO", t) + reduction_struct(Op::Sum, t, t) +
                     entry("window_pick", window_words::kWords, fmt::format("window_pick<X, {}>", max)) +
                     entry("window_scatter", window_words::kWords, "window_scatter<IO, R>");
  return {std::move(code), {"window_pick", "window_scatter"}};
}

KernelSource scan_kernel(const Node& node) {
  Op op;
  switch (node.op) {
    case Op::CumulativeSum: op = Op::Sum; break;
    case Op::CumulativeProduct: op = Op::Product; break;
    case Op::CumulativeMax: op = Op::ReduceMax; break;
    case Op::CumulativeMin: op = Op::ReduceMin; break;
    default:
      throw InternalError(error_message("cuda: scan kernel", "op", "a cumulative op", std::string(op_name(node.op))));
  }
  const DType in = node.operands[0]->spec.dtype;
  std::string code = start() + io_struct("IO", in) + reduction_struct(op, in, node.spec.dtype) +
                     entry("cumulative", scan_words::kWords, "cumulative<IO, R>");
  return {std::move(code), {"cumulative"}};
}

KernelSource gather_kernel(int elem_bytes) {
  std::string code =
      start() + entry("gather", index_words::kWords, fmt::format("gather<{}>", element_of(elem_bytes)));
  return {std::move(code), {"gather"}};
}

KernelSource scatter_add_kernel(DType dtype) {
  std::string code = start() + io_struct("IO", dtype) + entry("scatter_add", index_words::kWords, "scatter_add<IO>");
  return {std::move(code), {"scatter_add"}};
}

KernelSource put_kernel(int elem_bytes) {
  std::string code = start() + entry("put_claim", index_words::kWords, "put_claim") +
                     entry("put_write", index_words::kWords, fmt::format("put_write<{}>", element_of(elem_bytes)));
  return {std::move(code), {"put_claim", "put_write"}};
}

KernelSource sort_kernel(const Node& node) {
  if (node.op != Op::Sort && node.op != Op::Argsort)
    throw InternalError(error_message("cuda: sort kernel", "op", "sort or argsort", std::string(op_name(node.op))));
  const DType x = node.operands[0]->spec.dtype;
  const bool positions = node.op == Op::Argsort;
  const std::string written = positions ? storage_type(node.spec.dtype) : element_of(dtype_size(x));
  std::string code = start() + io_struct("IO", x) +
                     entry("sort_prepare", sort_words::kWords, fmt::format("sort_prepare<IO, {}>", node.attrs.reverse)) +
                     entry("sort_step", sort_words::kWords, "sort_step") +
                     entry("sort_tile", sort_words::kWords, "sort_tile") +
                     entry("sort_write", sort_words::kWords, fmt::format("sort_write<{}, {}>", written, positions));
  return {std::move(code), {"sort_prepare", "sort_step", "sort_tile", "sort_write"}};
}

KernelSource im2col_kernel(int elem_bytes, int spatial, bool wide) {
  std::string code = start() + entry("im2col", conv_words::kWords,
                                     fmt::format("im2col<{}, {}, {}>", element_of(elem_bytes), spatial,
                                                 wide ? "sl::i64" : "sl::i32"));
  return {std::move(code), {"im2col"}};
}

bool conv_offsets_are_wide(const ConvGeometry& g) {
  // Each axis' coordinates stay within its dim plus the padding, the
  // output's reach and the window's: their product bounds any offset.
  double bound = 1;
  for (int d = 0; d < g.spatial(); ++d) {
    const auto s = static_cast<size_t>(d);
    bound *= static_cast<double>(g.input[s] + std::abs(g.low[s]) + g.output[s] * g.strides[s] +
                                 g.kernel[s] * g.kernel_dilation[s]);
  }
  return bound >= 2147483647.0;
}

KernelSource linalg_kernel(DType dtype) {
  const std::string e = storage_type(dtype);
  std::string code = start() + entry("matrix_copy", linalg_words::kWords, fmt::format("matrix_copy<{}>", e)) +
                     entry("nan_where_failed", linalg_words::kWords, fmt::format("nan_where_failed<{}>", e)) +
                     entry("permutation", linalg_words::kWords, "permutation") +
                     entry("qr_signs", linalg_words::kWords, fmt::format("qr_signs<{}>", e));
  return {std::move(code), {"matrix_copy", "nan_where_failed", "permutation", "qr_signs"}};
}

}  // namespace sluice::cuda
