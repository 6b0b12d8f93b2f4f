// Reductions: Sum, Product, ReduceMax, ReduceMin, All, Any (this file) and
// Argmax, Argmin (reduce_arg.cpp). f16 and bf16 are reduced in f32.
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

#include "devices/cpu/kernels/isa.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/reduce_internal.h"
#include "devices/cpu/kernels/reduce_math.h"
#include "devices/cpu/kernels/split_work.h"
#include "ops/dtype_dispatch.h"
#include "ops/error.h"

namespace sluice::cpu {
namespace {

// ---- what each reduction computes: accumulator type, identity, load,
// combine, store.

// Integer sums and products accumulate in 64 bits, wrapping, as Nx: computed
// unsigned (signed overflow is undefined), stored as s64 or u64.
template <typename T>
using WideAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
template <typename T>
using WideOut = std::conditional_t<std::is_integral_v<T>,
                                   std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, T>;

template <typename T>
struct Widening {
  using In = T;
  using Acc = WideAcc<T>;
  using Out = WideOut<T>;
  static Acc load(T x) { return static_cast<Acc>(static_cast<Out>(x)); }
  static Out store(Acc a) { return static_cast<Out>(a); }
};

template <typename T>
struct SumOp : Widening<T> {
  using Acc = WideAcc<T>;
  static Acc identity() { return Acc(0); }
  static Acc combine(Acc a, Acc b) { return a + b; }
};

template <typename T>
struct ProductOp : Widening<T> {
  using Acc = WideAcc<T>;
  static Acc identity() { return Acc(1); }
  static Acc combine(Acc a, Acc b) { return a * b; }
};

template <typename T>
struct Keeping {
  using In = T;
  using Acc = T;
  using Out = T;
  static T load(T x) { return x; }
  static T store(T a) { return a; }
};

template <typename T>
struct MaxOp : Keeping<T> {
  static T identity() { return lowest<T>(); }
  static T combine(T a, T b) { return max_nan(a, b); }
};

template <typename T>
struct MinOp : Keeping<T> {
  static T identity() { return highest<T>(); }
  static T combine(T a, T b) { return min_nan(a, b); }
};

// All and Any read any dtype as truth values (nonzero, NaN included, is true).
template <typename T>
inline uint8_t truth(T x) {
  return x != T(0);
}

template <typename T>
struct Logical {
  using In = T;
  using Acc = uint8_t;
  using Out = uint8_t;
  static Acc load(T x) { return truth(x); }
  static Out store(Acc a) { return a; }
};

template <typename T>
struct AllOp : Logical<T> {
  static uint8_t identity() { return 1; }
  static uint8_t combine(uint8_t a, uint8_t b) { return a & b; }
};

template <typename T>
struct AnyOp : Logical<T> {
  static uint8_t identity() { return 0; }
  static uint8_t combine(uint8_t a, uint8_t b) { return a | b; }
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
void combine_into(typename R::Acc* __restrict acc, const typename R::Acc* __restrict other, int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] = R::combine(acc[j], other[j]);
}

// Combines k rows of width w, `stride` apart, into the first, pairwise.
template <typename R>
void fold_rows(typename R::Acc* acc, int64_t k, int64_t w, int64_t stride) {
  while (k > 1) {
    const int64_t half = k / 2;
    for (int64_t c = 0; c < half; ++c) combine_into<R>(acc + c * stride, acc + (c + k - half) * stride, w);
    k -= half;
  }
}

// p[0, n) one after another, n >= 1: for runs too short to vectorise.
template <typename R>
inline typename R::Acc reduce_short(const typename R::In* __restrict p, int64_t n) {
  typename R::Acc a = R::load(p[0]);
  for (int64_t i = 1; i < n; ++i) a = R::combine(a, R::load(p[i]));
  return a;
}

// Pairwise combination of p[0, n), n >= 1.
template <typename R>
typename R::Acc reduce_run(const typename R::In* __restrict p, int64_t n) {
  using Acc = typename R::Acc;
  if (n < 2 * kRunWidth) return reduce_short<R>(p, n);
  if (n > kRunBlock) {
    const int64_t half = (n / 2) & ~(kRunWidth - 1);
    return R::combine(reduce_run<R>(p, half), reduce_run<R>(p + half, n - half));
  }
  Acc acc[kRunWidth];
  for (int64_t j = 0; j < kRunWidth; ++j) acc[j] = R::load(p[j]);
  int64_t i = kRunWidth;
  for (; i + kRunWidth <= n; i += kRunWidth) {
    const typename R::In* __restrict row = p + i;
    for (int64_t j = 0; j < kRunWidth; ++j) acc[j] = R::combine(acc[j], R::load(row[j]));
  }
  for (int64_t width = kRunWidth / 2; width > 0; width /= 2) combine_into<R>(acc, acc + width, width);
  Acc a = acc[0];
  for (; i < n; ++i) a = R::combine(a, R::load(p[i]));
  return a;
}

// ---- inner reductions: each output combines runs of `inner` contiguous
// elements, one per combination of the outer reduced groups; long runs are
// cut into chunks. A "unit" is one chunk of one run.
template <typename R>
class InnerReduction {
 public:
  using In = typename R::In;
  using Acc = typename R::Acc;
  using Out = typename R::Out;

  InnerReduction(const ReducePlan& plan, const In* in, Out* out) : plan_(plan), in_(in), out_(out) {
    const int64_t n = plan.inner;
    chunks_ = (n + kChunkElements - 1) / kChunkElements;
    chunk_ = (n + chunks_ - 1) / chunks_;
    units_ = plan.reduced.count() * chunks_;
    outputs_ = plan.kept.count();
    splits_ = split_count(outputs_, units_ * chunk_, units_);
  }

  void run() {
    std::vector<Acc> partial(splits_ > 1 ? static_cast<size_t>(outputs_ * splits_) : 0);
    split_work(outputs_ * splits_, units_ * chunk_ / splits_, [&](int64_t begin, int64_t end) {
      const int64_t n = plan_.inner;
      if (units_ == 1 && n < 2 * kRunWidth) {
        // One short run per output: no pieces to combine.
        for (int64_t o = begin; o < end; ++o) out_[o] = R::store(reduce_short<R>(in_ + plan_.kept.offset(o), n));
        return;
      }
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / splits_, s = t % splits_;
        const In* base = in_ + plan_.kept.offset(o);
        const Acc a = units(base, units_ * s / splits_, units_ * (s + 1) / splits_);
        if (splits_ == 1) {
          out_[o] = R::store(a);
        } else {
          partial[static_cast<size_t>(t)] = a;
        }
      }
    });
    if (splits_ == 1) return;
    for (int64_t o = 0; o < outputs_; ++o) {
      Acc* p = partial.data() + o * splits_;
      fold_rows<R>(p, splits_, 1, 1);
      out_[o] = R::store(p[0]);
    }
  }

 private:
  Acc unit(const In* base, int64_t u) const {
    const int64_t q = u / chunks_, c = u % chunks_;
    const int64_t start = c * chunk_;
    return reduce_run<R>(base + plan_.reduced.offset(q) + start, std::min(chunk_, plan_.inner - start));
  }

  Acc units(const In* base, int64_t u0, int64_t u1) const {
    if (u1 - u0 <= 4) {
      Acc a = unit(base, u0);
      for (int64_t u = u0 + 1; u < u1; ++u) a = R::combine(a, unit(base, u));
      return a;
    }
    const int64_t mid = u0 + (u1 - u0) / 2;
    return R::combine(units(base, u0, mid), units(base, mid, u1));
  }

  const ReducePlan& plan_;
  const In* in_;
  Out* out_;
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
  using In = typename R::In;
  using Acc = typename R::Acc;
  using Out = typename R::Out;

  OuterReduction(const ReducePlan& plan, const In* in, Out* out) : plan_(plan), in_(in), out_(out) {
    const int64_t m = plan.inner, r = plan.adjacent;
    const int64_t max_tile = std::max<int64_t>(16, kTileBytes / static_cast<int64_t>(sizeof(Acc)));
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
    std::vector<Acc> partial(splits_ > 1 ? static_cast<size_t>(items * tile_) : 0);
    const int64_t width = merge_ * tile_;
    // Depth of the pairwise tree: rows, or the rows merging left over.
    const int64_t all_rows = plan_.reduced.count() * plan_.adjacent;
    const int64_t levels = std::bit_width(static_cast<uint64_t>(all_rows)) + 2;
    split_work(items, rows_ * width / splits_, [&](int64_t begin, int64_t end) {
      std::vector<Acc> scratch(static_cast<size_t>((levels + 1) * width));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t s = t % splits_, tile = (t / splits_) % tiles_, o = t / splits_ / tiles_;
        const int64_t c0 = tile * tile_, w = std::min(tile_, plan_.inner - c0);
        Acc* acc = scratch.data();
        reduce_tile(o, c0, w, rows_ * s / splits_, rows_ * (s + 1) / splits_, s == 0, acc, acc + width);
        if (splits_ == 1) {
          Out* dst = out_ + o * plan_.inner + c0;
          for (int64_t j = 0; j < w; ++j) dst[j] = R::store(acc[j]);
        } else {
          std::copy(acc, acc + w, partial.begin() + t * tile_);
        }
      }
    });
    if (splits_ == 1) return;
    for (int64_t ot = 0; ot < outputs_ * tiles_; ++ot) {
      Acc* p = partial.data() + ot * splits_ * tile_;
      const int64_t c0 = (ot % tiles_) * tile_, w = std::min(tile_, plan_.inner - c0);
      fold_rows<R>(p, splits_, w, tile_);
      Out* dst = out_ + (ot / tiles_) * plan_.inner + c0;
      for (int64_t j = 0; j < w; ++j) dst[j] = R::store(p[j]);
    }
  }

 private:
  // Rows [i0, i1) of `stride` elements, `per_block` to a block.
  struct Rows {
    const In* base;
    const Groups* blocks;
    int64_t per_block, stride;
    const In* row(int64_t i) const { return base + blocks->offset(i / per_block) + (i % per_block) * stride; }
  };

  // Output row o, columns [c0, c0 + w), wide rows [i0, i1) into acc; the
  // rows left over by merging are added by the first split.
  void reduce_tile(int64_t o, int64_t c0, int64_t w, int64_t i0, int64_t i1, bool first, Acc* acc,
                   Acc* scratch) const {
    const int64_t m = plan_.inner;
    const In* base = in_ + plan_.kept.offset(o) + c0;
    combine_rows(Rows{base, &plan_.reduced, wide_rows_, merge_ * m}, i0, i1, merge_ * w, acc, scratch);
    if (merge_ == 1) return;
    fold_rows<R>(acc, merge_, m, m);
    const int64_t left = plan_.adjacent - wide_rows_ * merge_;
    if (!first || left == 0) return;
    const Rows rest{base + wide_rows_ * merge_ * m, &plan_.reduced, left, m};
    combine_rows(rest, 0, plan_.reduced.count() * left, m, scratch, scratch + m);
    combine_into<R>(acc, scratch, m);
  }

  static void combine_rows(const Rows& rows, int64_t i0, int64_t i1, int64_t w, Acc* __restrict acc,
                           Acc* scratch) {
    if (i1 - i0 <= kLeafRows) {
      const In* __restrict p = rows.row(i0);
      for (int64_t j = 0; j < w; ++j) acc[j] = R::load(p[j]);
      for (int64_t i = i0 + 1; i < i1; ++i) {
        p = rows.row(i);
        for (int64_t j = 0; j < w; ++j) acc[j] = R::combine(acc[j], R::load(p[j]));
      }
      return;
    }
    const int64_t mid = i0 + (i1 - i0) / 2;
    combine_rows(rows, i0, mid, w, acc, scratch + w);
    combine_rows(rows, mid, i1, w, scratch, scratch + w);
    combine_into<R>(acc, scratch, w);
  }

  const ReducePlan& plan_;
  const In* in_;
  Out* out_;
  int64_t tiles_, tile_, merge_, wide_rows_, rows_, outputs_, splits_;
};

template <typename R>
void reduce(const Node& node, const void* in, void* out) {
  using Out = typename R::Out;
  const Spec& in_spec = node.operands[0]->spec;
  Out* dst = static_cast<Out*>(out);
  if (in_spec.size() == 0) {
    std::fill(dst, dst + node.spec.size(), R::store(R::identity()));
    return;
  }
  const ReducePlan plan = make_reduce_plan(in_spec.shape, node.attrs.axes);
  const auto* src = static_cast<const typename R::In*>(in);
  using Acc = typename R::Acc;
  if constexpr (std::is_same_v<typename R::In, Acc> && std::is_same_v<Out, Acc>) {
    if (plan.inner_reduced && !plan.reduced.dims.empty() && plan.inner < kChunkElements) {
      // Short runs under outer reduced axes (f32[64][4096][64] over {0, 2}):
      // each run to one accumulator, then an outer reduction of those,
      // rather than many short runs per output.
      ReducePlan runs;
      runs.kept = {{in_spec.size() / plan.inner}, {plan.inner}};
      runs.inner = plan.inner;
      std::vector<Acc> partial(static_cast<size_t>(in_spec.size() / plan.inner));
      InnerReduction<R>(runs, src, partial.data()).run();
      const ReducePlan rest = make_reduce_plan(Shape(plan.outer_dims), plan.outer_reduced);
      OuterReduction<R>(rest, partial.data(), dst).run();
      return;
    }
  }
  if (plan.inner_reduced) {
    InnerReduction<R>(plan, src, dst).run();
  } else {
    OuterReduction<R>(plan, src, dst).run();
  }
}

template <typename T>
void reduce_typed(const Node& node, const void* in, void* out) {
  switch (node.op) {
    case Op::Sum: return reduce<SumOp<T>>(node, in, out);
    case Op::Product: return reduce<ProductOp<T>>(node, in, out);
    case Op::All: return reduce<AllOp<T>>(node, in, out);
    case Op::Any: return reduce<AnyOp<T>>(node, in, out);
    case Op::ReduceMax:
    case Op::ReduceMin:
      if constexpr (kIsComplex<T>) {
        throw_not_real(node);
      } else if (node.op == Op::ReduceMax) {
        return reduce<MaxOp<T>>(node, in, out);
      } else {
        return reduce<MinOp<T>>(node, in, out);
      }
    default:
      throw Error("run_reduce: op " + std::string(op_name(node.op)) + " is not a reduction");
  }
}

// f16 and bf16: widened to f32 by the vector kernels in one pass, reduced as
// f32 and rounded back (all and any need no rounding: they give pred).
void reduce_narrow(const Node& node, const void* in, void* out) {
  const int t = static_cast<int>(node.operands[0]->spec.dtype);
  const KernelTable& table = kernel_table();
  std::vector<float> wide(static_cast<size_t>(node.operands[0]->spec.size()));
  table.widen[t](wide.data(), in, nullptr, nullptr, node.operands[0]->spec.size());
  if (node.op == Op::All || node.op == Op::Any) return reduce_typed<float>(node, wide.data(), out);
  std::vector<float> result(static_cast<size_t>(node.spec.size()));
  reduce_typed<float>(node, wide.data(), result.data());
  table.narrow[t](out, result.data(), nullptr, nullptr, node.spec.size());
}

}  // namespace

void run_reduce(const Node& node, const void* in, void* out) {
  if (node.op == Op::Argmax || node.op == Op::Argmin) return run_reduce_arg(node, in, out);
  const DType t = node.operands[0]->spec.dtype;
  if (t == DType::F16 || t == DType::BF16) return reduce_narrow(node, in, out);
  visit_dtype(t, [&]<typename T>() {
    if constexpr (!kIsHalf<T>) reduce_typed<T>(node, in, out);
  });
}

}  // namespace sluice::cpu
