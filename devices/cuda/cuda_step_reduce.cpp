// Reductions (sum, product, reduce_max/min, argmax/min, all, any): one
// generated kernel per op and dtypes, shape-generic: the input's axes are
// grouped into kept and reduced runs (size-1 axes dropped, neighbours of a
// kind merged) that the kernel walks from its parameters.

#include <algorithm>

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/detail/shape_copies.h>

namespace sluice::cuda {
namespace {

class ReduceStep final : public CudaUnit {
 public:
  ReduceStep(const Node& node, CudaDevice& device) : what_(op_name(node.op)) {
    const Shape& x = node.operands[0]->spec.shape;
    std::vector<int64_t> axes = node.attrs.axes;
    if (node.op == Op::Argmax || node.op == Op::Argmin) {
      axes.clear();
      if (node.attrs.axis >= 0) {
        axes.push_back(node.attrs.axis);
      } else {
        for (int k = 0; k < x.rank(); ++k) axes.push_back(k);
      }
    }
    const auto strides = row_major_strides(x);
    struct Run {
      int64_t dim, stride;
      bool reduced;
    };
    std::vector<Run> runs;
    for (int k = 0; k < x.rank(); ++k) {
      if (x.dim(k) == 1) continue;
      const bool reduced = std::find(axes.begin(), axes.end(), k) != axes.end();
      if (!runs.empty() && runs.back().reduced == reduced && runs.back().stride == strides[k] * x.dim(k)) {
        runs.back().dim *= x.dim(k);
        runs.back().stride = strides[k];
      } else {
        runs.push_back({x.dim(k), strides[k], reduced});
      }
    }
    namespace w = reduce_words;
    words_.assign(w::kWords, 0);
    int64_t outputs = 1, reduced = 1;
    int kept_rank = 0, reduced_rank = 0;
    for (const Run& r : runs) {
      if (r.reduced) {
        words_[w::kReducedDims + reduced_rank] = word(r.dim);
        words_[w::kReducedStrides + reduced_rank++] = word(r.stride);
        reduced *= r.dim;
      } else {
        words_[w::kKeptDims + kept_rank] = word(r.dim);
        words_[w::kKeptStrides + kept_rank++] = word(r.stride);
        outputs *= r.dim;
      }
    }
    if (x.size() == 0) reduced = 0;  // an empty input: every output is the identity
    outputs_ = node.spec.size();
    words_[w::kOutputs] = word(outputs_);
    words_[w::kReduced] = word(reduced);
    words_[w::kKeptRank] = word(int64_t{kept_rank});
    words_[w::kReducedRank] = word(int64_t{reduced_rank});
    const bool contiguous = !runs.empty() && runs.back().reduced;
    const ReduceLaunch how = reduce_launch(outputs_, reduced, contiguous, device.multiprocessors());
    geometry_ = how.launch;
    words_[w::kBlockPerOutput] = word(int64_t{how.block_per_output});
    kernel_ = load_kernels(reduce_kernel(node), device.arch()).front();
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (outputs_ == 0) return;
    std::vector<Word> words = words_;
    words[reduce_words::kSource] = word(in[0]);
    words[reduce_words::kResult] = word(out[0]);
    launch(kernel_, geometry_, words, ctx.stream, ctx.device.who(), what_);
  }

 private:
  std::string what_;
  std::vector<Word> words_;
  int64_t outputs_ = 0;
  Launch geometry_;
  cudaKernel_t kernel_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaUnit> make_reduce_step(const Node& node, CudaDevice& device) {
  return std::make_unique<ReduceStep>(node, device);
}

}  // namespace sluice::cuda
