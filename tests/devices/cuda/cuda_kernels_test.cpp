// Every kernel the CUDA backend generates compiles with NVRTC for sm_80 and
// sm_90, on any machine (NVRTC needs no GPU): each elementwise op in each
// dtype the backend claims (fused into one region per dtype, so that every
// op's code is in it), every conversion, every reduction, the shape-copy,
// creation, integer-dot and scaling kernels. A kernel that does not compile
// fails here, not on a GPU.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sluice/devices/cuda/cuda_capabilities.h>
#include <sluice/devices/cuda/kernel_source.h>
#include <sluice/devices/cuda/nvrtc_compiler.h>
#include <sluice/devices/detail/lowering.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::cuda {
namespace {

constexpr int kArchitectures[] = {80, 90};

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (int t = 0; t < kDTypeCount; ++t) out.push_back(static_cast<DType>(t));
  return out;
}

using Unary = std::function<Expr(Expr)>;
using Binary = std::function<Expr(Expr, Expr)>;

// The catalogue's unary and binary builders, by op.
std::vector<std::pair<Op, Unary>> unary_ops() {
  return {
#define SLUICE_OP(e, name, arity, family, rule, props, grad)
#define SLUICE_UNARY_OP(e, name, rule, props, grad) {Op::e, [](Expr x) { return sluice::name(x); }},
#include <sluice/ops/op_list.def>
  };
}
std::vector<std::pair<Op, Binary>> binary_ops() {
  return {
#define SLUICE_OP(e, name, arity, family, rule, props, grad)
#define SLUICE_BINARY_OP(e, name, rule, props, grad) {Op::e, [](Expr x, Expr y) { return sluice::name(x, y); }},
#include <sluice/ops/op_list.def>
  };
}

// Compiles every region of f for every architecture; the number of kernels.
int compile_regions(const Function& f) {
  const LoweredFunction lowered = lower(passes::eliminate_common_subexpressions(f), {.alignment = 256});
  int kernels = 0;
  for (const LoweredUnit& step : lowered.steps) {
    if (!step.region) continue;
    const KernelSource source = region_kernel(step);
    for (int arch : kArchitectures) {
      EXPECT_NO_THROW(nvrtc_compile(source, arch)) << step.what;
      ++kernels;
    }
  }
  return kernels;
}

// One kernel per dtype: every elementwise op the backend claims for that
// dtype, applied to parameters, in one region (made by hand: independent
// ops would each be a region of their own, a compile each).
TEST(CudaKernels, EveryElementwiseOpInEveryDtypeCompiles) {
  const Capabilities caps = cuda_capabilities();
  int claimed = 0;
  for (DType t : all_dtypes()) {
    const Spec spec{t, Shape{7}};
    Function f = trace({spec, spec, Spec{DType::Pred, Shape{7}}}, [&](Expr x, Expr y, Expr p) {
      Tuple out;
      auto keep = [&](Op op, const std::function<Expr()>& build) {
        if (!caps.supports(op, t)) return;
        try {
          out.push_back(build());
        } catch (const ShapeError&) {
        } catch (const TypeError&) {
          // Not an op of this dtype: its type rule refuses it.
        }
      };
      for (const auto& [op, build] : unary_ops())
        if (op != Op::StopGradient) keep(op, [&] { return build(x); });
      for (const auto& [op, build] : binary_ops()) keep(op, [&] { return build(x, y); });
      keep(Op::Select, [&] { return select(p, x, y); });
      keep(Op::Clip, [&] { return clip(x, x, y); });
      for (DType to : all_dtypes()) {
        keep(Op::AsType, [&] { return as_type(x, to); });
        if (dtype_bits(to) == dtype_bits(t)) keep(Op::Bitcast, [&] { return bitcast(x, to); });
      }
      return out;
    });
    LoweredUnit region;
    region.region = true;
    region.what = fmt::format("every op on {}", dtype_name(t));
    // Every node the outputs reach, operands first; parameters and
    // constants are read.
    std::function<void(const Node*)> visit = [&](const Node* n) {
      auto listed = [](const std::vector<const Node*>& v, const Node* x) {
        return std::find(v.begin(), v.end(), x) != v.end();
      };
      if (listed(region.nodes, n) || listed(region.reads, n)) return;
      if (n->op == Op::Parameter || n->op == Op::Constant) {
        region.reads.push_back(n);
        return;
      }
      for (const NodePtr& o : n->operands) visit(o.get());
      region.nodes.push_back(n);
    };
    for (const Expr& e : f.outputs()) {
      const Node* n = e.node().get();
      if (n->op == Op::Parameter) continue;  // as_type to its own dtype is x itself
      visit(n);
      if (std::find(region.writes.begin(), region.writes.end(), n) == region.writes.end()) region.writes.push_back(n);
    }
    claimed += static_cast<int>(region.nodes.size());
    const KernelSource source = region_kernel(region);
    for (int arch : kArchitectures) EXPECT_NO_THROW(nvrtc_compile(source, arch)) << region.what;
  }
  EXPECT_GT(claimed, 500) << "every dtype's ops were traced";
}

// A broadcast load of each kind: a scalar, a row, a column.
TEST(CudaKernels, BroadcastLoadsCompile) {
  Function f = trace({f32({}), f32({5}), f32({4, 1}), f16({4, 5})}, [](Expr s, Expr row, Expr column, Expr h) {
    return tuple(h * s + row * column, as_type(h, DType::F32) - column);
  });
  EXPECT_GE(compile_regions(f), 2);
}

TEST(CudaKernels, ShapeCopiesCompileForEveryElementSize) {
  for (int bytes : {1, 2, 4, 8, 16})
    for (int arch : kArchitectures) EXPECT_NO_THROW(nvrtc_compile(box_copy_kernel(bytes), arch)) << bytes << " bytes";
}

// The node of a function's only output.
const Node& output_node(const Function& f) { return *f.outputs().front().node(); }

TEST(CudaKernels, EveryReductionInEveryDtypeCompiles) {
  const std::vector<std::pair<const char*, std::function<Expr(Expr)>>> reductions = {
      {"sum", [](Expr x) { return sum(x, {.axes = {1}}); }},
      {"product", [](Expr x) { return product(x, {.axes = {0}}); }},
      {"reduce_max", [](Expr x) { return reduce_max(x, {.axes = {1}}); }},
      {"reduce_min", [](Expr x) { return reduce_min(x); }},
      {"argmax", [](Expr x) { return argmax(x, {.axis = 1}); }},
      {"argmin", [](Expr x) { return argmin(x, {.tie_break = TieBreak::High}); }},
      {"all", [](Expr x) { return all(x); }},
      {"any", [](Expr x) { return any(x, {.axes = {0}}); }},
  };
  int compiled = 0;
  for (DType t : all_dtypes()) {
    for (const auto& [name, build] : reductions) {
      Function f;
      try {
        f = trace({Spec{t, Shape{3, 4}}}, [&](Expr x) { return build(x); });
      } catch (const TypeError&) {
        continue;  // complex numbers have no order
      }
      const KernelSource source = reduce_kernel(output_node(f));
      for (int arch : kArchitectures) {
        EXPECT_NO_THROW(nvrtc_compile(source, arch)) << name << " of " << dtype_name(t);
        ++compiled;
      }
    }
  }
  EXPECT_GT(compiled, 150);
}

TEST(CudaKernels, CreationDotAndScaleKernelsCompile) {
  for (DType t : all_dtypes()) {
    if (t == DType::Pred) continue;
    const Function iota_f = trace({}, [&](const std::vector<Expr>&) { return iota(Spec{t, Shape{3, 4}}, 1); });
    const Function eye_f = trace({}, [&](const std::vector<Expr>&) { return eye(Spec{t, Shape{2, 3, 3}}); });
    for (int arch : kArchitectures) {
      EXPECT_NO_THROW(nvrtc_compile(creation_kernel(output_node(iota_f)), arch)) << "iota " << dtype_name(t);
      EXPECT_NO_THROW(nvrtc_compile(creation_kernel(output_node(eye_f)), arch)) << "eye " << dtype_name(t);
      EXPECT_NO_THROW(nvrtc_compile(dot_kernel(t), arch)) << "dot " << dtype_name(t);
      if (is_complex(t)) {
        EXPECT_NO_THROW(nvrtc_compile(scale_kernel(t), arch)) << "scale " << dtype_name(t);
      }
    }
  }
}

// Compiles source for every architecture; the number of kernels compiled.
int compile_everywhere(const KernelSource& source, const std::string& what) {
  for (int arch : kArchitectures) EXPECT_NO_THROW(nvrtc_compile(source, arch)) << what;
  return static_cast<int>(std::size(kArchitectures));
}

// The output node of `build` traced on `specs`, or null where its type
// rule refuses the dtypes (windows and scans of maxima take real types).
template <typename Build>
std::optional<Function> traced(const std::vector<Spec>& specs, Build build) {
  try {
    return trace(specs, build);
  } catch (const TypeError&) {
    return std::nullopt;
  }
}

const WindowOptions kWindowOptions{.strides = {1, 2}, .padding = {{1, 0}, {0, 1}}};

// Each op of `ops` on x of every dtype its type rule takes, compiled; the
// number of kernels.
int compile_unary_in_every_dtype(const std::vector<std::pair<const char*, std::function<Expr(Expr)>>>& ops,
                                 const std::function<KernelSource(const Node&)>& kernel) {
  int compiled = 0;
  for (DType t : all_dtypes()) {
    for (const auto& [name, build] : ops) {
      const auto f = traced({Spec{t, Shape{6, 5}}}, [&](Expr x) { return build(x); });
      if (f) compiled += compile_everywhere(kernel(output_node(*f)), fmt::format("{} of {}", name, dtype_name(t)));
    }
  }
  return compiled;
}

TEST(CudaKernels, EveryWindowInEveryDtypeCompiles) {
  const WindowOptions& o = kWindowOptions;
  EXPECT_GT(compile_unary_in_every_dtype({{"window_sum", [&](Expr x) { return window_sum(x, {2, 3}, o); }},
                                          {"window_product", [&](Expr x) { return window_product(x, {2, 3}, o); }},
                                          {"window_max", [&](Expr x) { return window_max(x, {2, 3}, o); }},
                                          {"window_min", [&](Expr x) { return window_min(x, {2, 3}, o); }}},
                                         window_kernel),
            100);
  // A last axis' window too long to unroll: its loop is the tile kernel's
  // other form.
  int long_windows = 0;
  for (DType t : {DType::F32, DType::F64, DType::S8}) {
    const auto f = traced({Spec{t, Shape{2, 40}}}, [](Expr x) { return window_max(x, {1, 20}); });
    if (f) long_windows += compile_everywhere(window_kernel(output_node(*f)), "a long window");
  }
  EXPECT_GT(long_windows, 0);
}

TEST(CudaKernels, EveryScanInEveryDtypeCompiles) {
  EXPECT_GT(compile_unary_in_every_dtype(
                {{"cumulative_sum", [](Expr x) { return cumulative_sum(x, {.axis = 1}); }},
                 {"cumulative_product", [](Expr x) { return cumulative_product(x, {.axis = 0, .reverse = true}); }},
                 {"cumulative_max", [](Expr x) { return cumulative_max(x, {.axis = 1}); }},
                 {"cumulative_min", [](Expr x) { return cumulative_min(x, {.axis = 1}); }}},
                scan_kernel),
            100);
}

// The picks depend on x's dtype (and max or min), the sums on the result's:
// each x dtype picking either way onto f32, and f32 onto each result dtype.
TEST(CudaKernels, WindowScattersCompileForEveryDtype) {
  int compiled = 0;
  auto compile = [&](DType x_type, DType sum_type, bool max) {
    const auto f = traced({Spec{x_type, Shape{6, 5}}, Spec{sum_type, Shape{6, 2}}, Spec{sum_type, Shape{}}},
                          [&](Expr x, Expr source, Expr init) {
                            return max ? window_scatter_max(x, source, init, {2, 3}, kWindowOptions)
                                       : window_scatter_min(x, source, init, {2, 3}, kWindowOptions);
                          });
    if (f)
      compiled += compile_everywhere(window_scatter_kernel(output_node(*f)),
                                     fmt::format("window_scatter of {} onto {}", dtype_name(x_type), dtype_name(sum_type)));
  };
  for (DType t : all_dtypes()) {
    compile(t, DType::F32, true);
    compile(t, DType::F32, false);
    if (t != DType::F32) compile(DType::F32, t, true);
  }
  EXPECT_GT(compiled, 60);
}

// Sort's keys depend on x's dtype and direction; argsort writes indices of
// any integer dtype.
TEST(CudaKernels, SortsCompileForEveryDtype) {
  int compiled = 0;
  for (DType t : all_dtypes()) {
    for (SortDirection direction : {SortDirection::Ascending, SortDirection::Descending}) {
      const auto f = traced({Spec{t, Shape{6, 5}}}, [&](Expr x) { return sort(x, {.axis = 1, .direction = direction}); });
      if (f) compiled += compile_everywhere(sort_kernel(output_node(*f)), fmt::format("sort of {}", dtype_name(t)));
    }
    if (!is_integer(t)) continue;
    const auto f = traced({f32({6, 5})}, [&](Expr x) { return argsort(x, {.axis = 0, .index_dtype = t}); });
    if (f) compiled += compile_everywhere(sort_kernel(output_node(*f)), fmt::format("argsort into {}", dtype_name(t)));
  }
  EXPECT_GT(compiled, 2 * (2 * 12 + 8) - 1);
}

// im2col works out a channel's offsets in 32 bits unless they could pass
// 2^31 - 1: the ImageNet-sized conv stays narrow, a volume of 1,300^3 does not.
TEST(CudaKernels, ConvOffsetsAreWideOnlyPastThirtyOneBits) {
  auto geometry = [](int64_t side, int spatial) {
    auto image = [spatial](int64_t dim) {
      std::vector<int64_t> dims{1, 1};
      dims.insert(dims.end(), static_cast<size_t>(spatial), dim);
      return Shape(dims);
    };
    const Function f = trace({Spec{DType::F32, image(side)}, Spec{DType::F32, image(3)}},
                             [](Expr x, Expr k) { return conv(x, k, {.padding = ConvPadding::Same}); });
    return conv_geometry(output_node(f));
  };
  EXPECT_FALSE(conv_offsets_are_wide(geometry(224, 2)));
  EXPECT_FALSE(conv_offsets_are_wide(geometry(400, 3)));
  EXPECT_TRUE(conv_offsets_are_wide(geometry(1300, 3)));
}

// Conv's column matrices of every floating element size (2: f16/bf16, 4, 8,
// 16: c128), over one to three spatial axes, and none (a product over channels).
TEST(CudaKernels, ConvColumnsCompileForEveryElementAndRank) {
  int compiled = 0;
  for (int bytes : {2, 4, 8, 16})
    for (int spatial = 0; spatial <= 3; ++spatial)
      for (bool wide : {false, true})
        compiled +=
            compile_everywhere(im2col_kernel(bytes, spatial, wide),
                               fmt::format("im2col of {} bytes, {} axes, wide {}", bytes, spatial, wide));
  EXPECT_EQ(compiled, 64);
}

TEST(CudaKernels, LinearAlgebraCopiesCompileForEveryLapackDtype) {
  int compiled = 0;
  for (DType t : {DType::F32, DType::F64, DType::C64, DType::C128})
    compiled += compile_everywhere(linalg_kernel(t), fmt::format("linear algebra copies of {}", dtype_name(t)));
  EXPECT_EQ(compiled, 8);
}

TEST(CudaKernels, GatherAndScatterKernelsCompileForEveryElement) {
  int compiled = 0;
  for (int bytes : {1, 2, 4, 8, 16}) {
    compiled += compile_everywhere(gather_kernel(bytes), fmt::format("gather of {}-byte elements", bytes));
    compiled += compile_everywhere(put_kernel(bytes), fmt::format("indexed_put of {}-byte elements", bytes));
  }
  for (DType t : all_dtypes())
    if (t != DType::Pred)  // indexed_add of pred adds in u8
      compiled += compile_everywhere(scatter_add_kernel(t), fmt::format("indexed_add of {}", dtype_name(t)));
  EXPECT_EQ(compiled, 2 * (10 + kDTypeCount - 1));
}

}  // namespace
}  // namespace sluice::cuda
