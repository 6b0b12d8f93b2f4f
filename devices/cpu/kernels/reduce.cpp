// Reductions: Sum, Product, ReduceMax, ReduceMin, All, Any (this file) and
// Argmax, Argmin (reduce_arg.cpp). f16 and bf16 are reduced in f32, integer
// sums and products in 64 bits, all and any on bytes 0 and 1.
//
// The input's axes are merged into groups of adjacent axes of one kind (kept
// or reduced; size-1 axes dropped), so every reduction is one of two shapes:
//   inner: the innermost group is reduced: each output combines contiguous
//          runs (one per combination of the outer reduced groups);
//   outer: the innermost group is kept: each output row combines whole input
//          rows, vectorised along the row.
// Both combine pairwise (numpy's scheme), so a float sum of n elements errs
// by O(log n) ulps, not O(n). Work is cut into a fixed number of pieces that
// depends only on the shape, so results do not depend on the thread count.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/reduce_internal.h>
#include <sluice/devices/cpu/kernels/reduce_math.h>
#include <sluice/devices/cpu/kernels/reduce_split.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

// ---- what each reduction computes: the element type it reads, writes and
// accumulates in, its identity and how two values combine. Integer sums and
// products run on u64 (the input widened first), whose wrapping gives s64's
// bits as well; all and any run on truth bytes (the input tested first).

template <typename E>
struct SumOp {
  using T = E;
  static T identity() { return T(0); }
  static T combine(T a, T b) { return a + b; }
};

template <typename E>
struct ProductOp {
  using T = E;
  static T identity() { return T(1); }
  static T combine(T a, T b) { return a * b; }
};

template <typename E>
struct MaxOp {
  using T = E;
  static T identity() { return lowest<T>(); }
  static T combine(T a, T b) { return max_nan(a, b); }
};

template <typename E>
struct MinOp {
  using T = E;
  static T identity() { return highest<T>(); }
  static T combine(T a, T b) { return min_nan(a, b); }
};

struct AllOp {
  using T = uint8_t;
  static T identity() { return 1; }
  static T combine(T a, T b) { return a & b; }
};

struct AnyOp {
  using T = uint8_t;
  static T identity() { return 0; }
  static T combine(T a, T b) { return a | b; }
};

// ---- shared pieces

// A contiguous run is combined as rows of kRunWidth elements into one row of
// accumulators (a loop the compiler vectorises, NaN-propagating max
// included), folded pairwise at the end; runs longer than kRunBlock are
// halved first, so a float sum of n elements errs by O(log n) ulps.
constexpr int64_t kRunWidth = 64;
constexpr int64_t kRunBlock = kRunWidth * 64;
// A contiguous run is cut into pieces of this many elements (work items).
constexpr int64_t kChunkElements = int64_t{1} << 14;
// Rows summed one after another at the leaves of the pairwise row tree.
constexpr int64_t kLeafRows = 16;
// Columns of one outer-reduction tile: a few pages of each input row.
constexpr int64_t kTileBytes = int64_t{32} * 1024;
// Narrow outer reductions read rows in groups this many elements wide.
constexpr int64_t kMergedWidth = 512;
// With at least this many independent outputs there is no need to split one
// output's reduction across tasks.
constexpr int64_t kEnoughItems = 16;
constexpr int64_t kMaxSplits = 64;

// How many pieces one output's reduction of `elements` is cut into.
int64_t split_count(int64_t items, int64_t elements, int64_t max_pieces) {
  if (items >= kEnoughItems) return 1;
  return std::clamp<int64_t>(elements / kGrainElements, 1, std::min(kMaxSplits, max_pieces));
}

template <typename R>
void combine_into(typename R::T* __restrict acc, const typename R::T* __restrict other, int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] = R::combine(acc[j], other[j]);
}

// Combines k rows of width w, `stride` apart, into the first, pairwise.
template <typename R>
void fold_rows(typename R::T* acc, int64_t k, int64_t w, int64_t stride) {
  while (k > 1) {
    const int64_t half = k / 2;
    for (int64_t c = 0; c < half; ++c) combine_into<R>(acc + c * stride, acc + (c + k - half) * stride, w);
    k -= half;
  }
}

// p[0, n) one after another, n >= 1: for runs too short to vectorise.
template <typename R>
inline typename R::T reduce_short(const typename R::T* __restrict p, int64_t n) {
  typename R::T a = p[0];
  for (int64_t i = 1; i < n; ++i) a = R::combine(a, p[i]);
  return a;
}

// Pairwise combination of p[0, n), n >= 1.
template <typename R>
typename R::T reduce_run(const typename R::T* __restrict p, int64_t n) {
  using T = typename R::T;
  if (n < 2 * kRunWidth) return reduce_short<R>(p, n);
  if (n > kRunBlock) {
    const int64_t half = (n / 2) & ~(kRunWidth - 1);
    return R::combine(reduce_run<R>(p, half), reduce_run<R>(p + half, n - half));
  }
  T acc[kRunWidth];
  for (int64_t j = 0; j < kRunWidth; ++j) acc[j] = p[j];
  int64_t i = kRunWidth;
  for (; i + kRunWidth <= n; i += kRunWidth) {
    const typename R::T* __restrict row = p + i;
    for (int64_t j = 0; j < kRunWidth; ++j) acc[j] = R::combine(acc[j], row[j]);
  }
  for (int64_t width = kRunWidth / 2; width > 0; width /= 2) combine_into<R>(acc, acc + width, width);
  T a = acc[0];
  for (; i < n; ++i) a = R::combine(a, p[i]);
  return a;
}

// ---- inner reductions: each output combines runs of `inner` contiguous
// elements, one per combination of the outer reduced groups; long runs are
// cut into chunks. A "unit" is one chunk of one run.
template <typename R>
class InnerReduction {
 public:
  using T = typename R::T;

  InnerReduction(const ReducePlan& plan, const T* in, T* out) : plan_(plan), in_(in), out_(out) {
    const int64_t n = plan.inner;
    chunks_ = (n + kChunkElements - 1) / kChunkElements;
    chunk_ = (n + chunks_ - 1) / chunks_;
    units_ = plan.reduced.count() * chunks_;
    outputs_ = plan.kept.count();
    splits_ = split_count(outputs_, units_ * chunk_, units_);
  }

  void run() {
    std::vector<T> partial(splits_ > 1 ? static_cast<size_t>(outputs_ * splits_) : 0);
    split_items(outputs_ * splits_, units_ * chunk_ / splits_, [&](int64_t begin, int64_t end) {
      const int64_t n = plan_.inner;
      if (units_ == 1 && n < 2 * kRunWidth) {
        // One short run per output: no pieces to combine.
        for (int64_t o = begin; o < end; ++o) out_[o] = reduce_short<R>(in_ + plan_.kept.offset(o), n);
        return;
      }
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / splits_, s = t % splits_;
        const T* base = in_ + plan_.kept.offset(o);
        const T a = units(base, units_ * s / splits_, units_ * (s + 1) / splits_);
        if (splits_ == 1) {
          out_[o] = a;
        } else {
          partial[static_cast<size_t>(t)] = a;
        }
      }
    });
    if (splits_ == 1) return;
    for (int64_t o = 0; o < outputs_; ++o) {
      T* p = partial.data() + o * splits_;
      fold_rows<R>(p, splits_, 1, 1);
      out_[o] = p[0];
    }
  }

 private:
  T unit(const T* base, int64_t u) const {
    const int64_t q = u / chunks_, c = u % chunks_;
    const int64_t start = c * chunk_;
    return reduce_run<R>(base + plan_.reduced.offset(q) + start, std::min(chunk_, plan_.inner - start));
  }

  T units(const T* base, int64_t u0, int64_t u1) const {
    if (u1 - u0 <= 4) {
      T a = unit(base, u0);
      for (int64_t u = u0 + 1; u < u1; ++u) a = R::combine(a, unit(base, u));
      return a;
    }
    const int64_t mid = u0 + (u1 - u0) / 2;
    return R::combine(units(base, u0, mid), units(base, mid, u1));
  }

  const ReducePlan& plan_;
  const T* in_;
  T* out_;
  int64_t chunks_, chunk_, units_, outputs_, splits_;
};

// ---- outer reductions: each output row (`inner` wide) combines input rows.
// Rows come in blocks of `adjacent` contiguous rows, one block per
// combination of the outer reduced groups. Wide outputs are cut into column
// tiles; narrow ones read k rows at a time as one wide row (k * inner
// columns), folded to inner columns at the end, so loops stay long.
template <typename R>
class OuterReduction {
 public:
  using T = typename R::T;

  OuterReduction(const ReducePlan& plan, const T* in, T* out) : plan_(plan), in_(in), out_(out) {
    const int64_t m = plan.inner, r = plan.adjacent;
    const int64_t max_tile = std::max<int64_t>(16, kTileBytes / static_cast<int64_t>(sizeof(T)));
    tiles_ = (m + max_tile - 1) / max_tile;
    tile_ = (m + tiles_ - 1) / tiles_;
    const int64_t group = kMergedWidth / m;
    merge_ = (tiles_ == 1 && group >= 2 && r >= 2 * group) ? group : 1;
    wide_rows_ = r / merge_;
    rows_ = plan.reduced.count() * wide_rows_;
    outputs_ = plan.kept.count();
    splits_ = split_count(outputs_ * tiles_, rows_ * merge_ * tile_, rows_);
  }

  void run() {
    const int64_t items = outputs_ * tiles_ * splits_;
    std::vector<T> partial(splits_ > 1 ? static_cast<size_t>(items * tile_) : 0);
    const int64_t width = merge_ * tile_;
    // Depth of the pairwise tree: rows, or the rows merging left over.
    const int64_t all_rows = plan_.reduced.count() * plan_.adjacent;
    const int64_t levels = std::bit_width(static_cast<uint64_t>(all_rows)) + 2;
    split_items(items, rows_ * width / splits_, [&](int64_t begin, int64_t end) {
      std::vector<T> scratch(static_cast<size_t>((levels + 1) * width));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t s = t % splits_, tile = (t / splits_) % tiles_, o = t / splits_ / tiles_;
        const int64_t c0 = tile * tile_, w = std::min(tile_, plan_.inner - c0);
        T* acc = scratch.data();
        reduce_tile(o, c0, w, rows_ * s / splits_, rows_ * (s + 1) / splits_, s == 0, acc, acc + width);
        if (splits_ == 1) {
          T* dst = out_ + o * plan_.inner + c0;
          for (int64_t j = 0; j < w; ++j) dst[j] = acc[j];
        } else {
          std::copy(acc, acc + w, partial.begin() + t * tile_);
        }
      }
    });
    if (splits_ == 1) return;
    for (int64_t ot = 0; ot < outputs_ * tiles_; ++ot) {
      T* p = partial.data() + ot * splits_ * tile_;
      const int64_t c0 = (ot % tiles_) * tile_, w = std::min(tile_, plan_.inner - c0);
      fold_rows<R>(p, splits_, w, tile_);
      T* dst = out_ + (ot / tiles_) * plan_.inner + c0;
      for (int64_t j = 0; j < w; ++j) dst[j] = p[j];
    }
  }

 private:
  // Rows [i0, i1) of `stride` elements, `per_block` to a block.
  struct Rows {
    const T* base;
    const Groups* blocks;
    int64_t per_block, stride;
    const T* row(int64_t i) const { return base + blocks->offset(i / per_block) + (i % per_block) * stride; }
  };

  // Output row o, columns [c0, c0 + w), wide rows [i0, i1) into acc; the
  // rows left over by merging are added by the first split.
  void reduce_tile(int64_t o, int64_t c0, int64_t w, int64_t i0, int64_t i1, bool first, T* acc,
                   T* scratch) const {
    const int64_t m = plan_.inner;
    const T* base = in_ + plan_.kept.offset(o) + c0;
    combine_rows(Rows{base, &plan_.reduced, wide_rows_, merge_ * m}, i0, i1, merge_ * w, acc, scratch);
    if (merge_ == 1) return;
    fold_rows<R>(acc, merge_, m, m);
    const int64_t left = plan_.adjacent - wide_rows_ * merge_;
    if (!first || left == 0) return;
    const Rows rest{base + wide_rows_ * merge_ * m, &plan_.reduced, left, m};
    combine_rows(rest, 0, plan_.reduced.count() * left, m, scratch, scratch + m);
    combine_into<R>(acc, scratch, m);
  }

  static void combine_rows(const Rows& rows, int64_t i0, int64_t i1, int64_t w, T* __restrict acc,
                           T* scratch) {
    if (i1 - i0 <= kLeafRows) {
      const T* __restrict p = rows.row(i0);
      for (int64_t j = 0; j < w; ++j) acc[j] = p[j];
      for (int64_t i = i0 + 1; i < i1; ++i) {
        p = rows.row(i);
        for (int64_t j = 0; j < w; ++j) acc[j] = R::combine(acc[j], p[j]);
      }
      return;
    }
    const int64_t mid = i0 + (i1 - i0) / 2;
    combine_rows(rows, i0, mid, w, acc, scratch + w);
    combine_rows(rows, mid, i1, w, scratch, scratch + w);
    combine_into<R>(acc, scratch, w);
  }

  const ReducePlan& plan_;
  const T* in_;
  T* out_;
  int64_t tiles_, tile_, merge_, wide_rows_, rows_, outputs_, splits_;
};

template <typename R>
void reduce(const Node& node, const void* in, void* out) {
  using T = typename R::T;
  const Spec& in_spec = node.operands[0]->spec;
  T* dst = static_cast<T*>(out);
  if (in_spec.size() == 0) {
    std::fill(dst, dst + node.spec.size(), R::identity());
    return;
  }
  const ReducePlan plan = make_reduce_plan(in_spec.shape, node.attrs.axes);
  const T* src = static_cast<const T*>(in);
  if (plan.inner_reduced && !plan.reduced.dims.empty() && plan.inner < kChunkElements) {
    // Short runs under outer reduced axes (f32[64][4096][64] over {0, 2}):
    // each run to one accumulator, then an outer reduction of those, rather
    // than many short runs per output.
    ReducePlan runs;
    runs.kept = {{in_spec.size() / plan.inner}, {plan.inner}};
    runs.inner = plan.inner;
    std::vector<T> partial(static_cast<size_t>(in_spec.size() / plan.inner));
    InnerReduction<R>(runs, src, partial.data()).run();
    OuterReduction<R>(make_reduce_plan(Shape(plan.outer_dims), plan.outer_reduced), partial.data(), dst).run();
  } else if (plan.inner_reduced) {
    InnerReduction<R>(plan, src, dst).run();
  } else {
    OuterReduction<R>(plan, src, dst).run();
  }
}

// y[i] = f(x[i]) over n elements, split across cores when large.
template <typename Y, typename X, typename F>
void convert(const X* x, Y* y, int64_t n, F f) {
  split_items(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// Sum and Product of T (any dtype but f16 and bf16).
template <typename T>
void reduce_arithmetic(const Node& node, const void* in, void* out) {
  if constexpr (std::is_integral_v<T> && sizeof(T) < 8) {
    // Widened to 64 bits first: sign-extended (s64 result) or zero-extended
    // (u64 result, pred included).
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    std::vector<uint64_t> wide(static_cast<size_t>(node.operands[0]->spec.size()));
    convert(static_cast<const T*>(in), wide.data(), node.operands[0]->spec.size(),
            [](T v) { return static_cast<uint64_t>(static_cast<Wide>(v)); });
    reduce_arithmetic<uint64_t>(node, wide.data(), out);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    node.op == Op::Sum ? reduce<SumOp<U>>(node, in, out) : reduce<ProductOp<U>>(node, in, out);
  } else {
    node.op == Op::Sum ? reduce<SumOp<T>>(node, in, out) : reduce<ProductOp<T>>(node, in, out);
  }
}

// All and Any of T: nonzero (NaN included) is true, -0 is false.
template <typename T>
void reduce_logical(const Node& node, const void* in, void* out) {
  const bool all = node.op == Op::All;
  if (node.operands[0]->spec.dtype == DType::Pred) {
    return all ? reduce<AllOp>(node, in, out) : reduce<AnyOp>(node, in, out);
  }
  std::vector<uint8_t> truth(static_cast<size_t>(node.operands[0]->spec.size()));
  convert(static_cast<const T*>(in), truth.data(), node.operands[0]->spec.size(), [](T v) -> uint8_t {
    if constexpr (kIsHalf<T>) {
      return (v.bits & 0x7fffu) != 0;
    } else {
      return v != T(0);
    }
  });
  all ? reduce<AllOp>(node, truth.data(), out) : reduce<AnyOp>(node, truth.data(), out);
}

template <typename T>
void reduce_order(const Node& node, const void* in, void* out) {
  node.op == Op::ReduceMax ? reduce<MaxOp<T>>(node, in, out) : reduce<MinOp<T>>(node, in, out);
}

// f16 and bf16 sums, products, max and min: widened to f32 by the vector
// kernels in one pass, reduced as f32, rounded back.
void reduce_narrow(const Node& node, const void* in, void* out) {
  const int t = static_cast<int>(node.operands[0]->spec.dtype);
  const KernelTable& table = kernel_table();
  std::vector<float> wide(static_cast<size_t>(node.operands[0]->spec.size()));
  table.widen[t](wide.data(), in, nullptr, nullptr, node.operands[0]->spec.size());
  std::vector<float> result(static_cast<size_t>(node.spec.size()));
  if (node.op == Op::ReduceMax || node.op == Op::ReduceMin) {
    reduce_order<float>(node, wide.data(), result.data());
  } else {
    reduce_arithmetic<float>(node, wide.data(), result.data());
  }
  table.narrow[t](out, result.data(), nullptr, nullptr, node.spec.size());
}

}  // namespace

void run_reduce(const Node& node, const void* in, void* out) {
  const DType t = node.operands[0]->spec.dtype;
  switch (node.op) {
    case Op::Argmax:
    case Op::Argmin: return run_reduce_arg(node, in, out);
    case Op::All:
    case Op::Any: return visit_dtype(t, [&]<typename T>() { reduce_logical<T>(node, in, out); });
    case Op::Sum:
    case Op::Product:
    case Op::ReduceMax:
    case Op::ReduceMin: break;
    default:
      throw InternalError(
          error_message("run_reduce", "op " + std::string(op_name(node.op)) + " is not a reduction", "", ""));
  }
  // The min and max of truth values are all and any: identities 1 and 0, where
  // u8's min identity (255) would leave a pred that is neither 0 nor 1.
  if (t == DType::Pred && node.op == Op::ReduceMin) return reduce<AllOp>(node, in, out);
  if (t == DType::Pred && node.op == Op::ReduceMax) return reduce<AnyOp>(node, in, out);
  if (t == DType::F16 || t == DType::BF16) return reduce_narrow(node, in, out);
  visit_dtype(t, [&]<typename T>() {
    if constexpr (kIsHalf<T>) {
      return;  // reduce_narrow above
    } else if (node.op == Op::Sum || node.op == Op::Product) {
      reduce_arithmetic<T>(node, in, out);
    } else if constexpr (kIsComplex<T>) {
      throw_not_real(node);
    } else {
      reduce_order<T>(node, in, out);
    }
  });
}

}  // namespace sluice::cpu
