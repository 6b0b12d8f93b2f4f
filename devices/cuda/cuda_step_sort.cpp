// sort and argsort along an axis (top_k is argsort then slices): a bitonic
// network over (key, place) pairs of each line, padded to a power of two,
// whose places break ties, so the result is stable (kernels/algorithms.cuh).
// Steps whose partners lie within a tile run in shared memory, a block per
// tile: the first tile-sized sorts at once, then after each longer merge's
// wide steps its narrow ones; the wide steps are a launch each.
//
// A long line of 32- or 64-bit numbers to sort (not argsort) laid out
// contiguously goes to CUB's radix sort instead (radix_sort.h), a line at a
// time: its few passes over the data beat the network's log² n wide steps
// (16M f32: 0.55 ms against 16 ms on an H200). Lines of at most a tile stay
// with the network, which sorts them in shared memory, and so do many
// lines of middling length, where the radix sort's launches per line would
// cost more than the network.

#include <bit>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/cuda/radix_sort.h>

namespace sluice::cuda {
namespace {

// Lines of at least this many go to the radix sort however many there are; a
// single line, once it is longer than a tile.
constexpr int64_t kRadixSortLine = int64_t{1} << 16;

class SortStep final : public CudaUnit {
 public:
  SortStep(const Node& node, CudaDevice& device) : what_(op_name(node.op)) {
    namespace w = sort_words;
    const Shape& x = node.operands[0]->spec.shape;
    const int axis = static_cast<int>(node.attrs.axis);
    int64_t inner = 1;
    for (int k = axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
    n_ = x.rank() == 0 ? 1 : x.dim(axis);
    lines_ = n_ == 0 ? 0 : x.size() / n_;
    padded_ = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n_, 1))));
    dtype_ = node.operands[0]->spec.dtype;
    descending_ = node.attrs.reverse;
    if (node.op == Op::Sort && inner == 1 && (n_ >= kRadixSortLine || (lines_ == 1 && n_ > kSortTile)) &&
        radix_sorts(dtype_, device.arch())) {
      radix_scratch_ = radix_sort_scratch(dtype_, n_);
      return;
    }
    words_.assign(w::kWords, 0);
    words_[w::kLines] = word(lines_);
    words_[w::kN] = word(n_);
    words_[w::kInner] = word(inner);
    words_[w::kPadded] = word(padded_);
    kernels_ = load_kernels(sort_kernel(node), device.arch());
    const int sms = device.multiprocessors();
    pairs_ = loop_launch(lines_ * padded_, sms);
    steps_ = loop_launch(lines_ * padded_ / 2, sms);
    tiles_ = {static_cast<uint32_t>(std::clamp<int64_t>(lines_ * padded_ / std::min(padded_, kSortTile), 1, int64_t{sms} * 16)),
              kBlockThreads};
    results_ = loop_launch(lines_ * n_, sms);
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    namespace w = sort_words;
    if (lines_ * n_ == 0) return;
    if (radix_scratch_ != 0) {
      enqueue_radix(ctx, in[0], out[0]);
      return;
    }
    const size_t bytes = static_cast<size_t>(lines_ * padded_) * sizeof(uint64_t);
    std::shared_ptr<void> keys = ctx.device.allocate(bytes), places = ctx.device.allocate(bytes);
    ctx.keep.push_back(keys);
    ctx.keep.push_back(places);
    std::vector<Word> words = words_;
    words[w::kSource] = word(in[0]);
    words[w::kResult] = word(out[0]);
    words[w::kKeys] = word(keys.get());
    words[w::kPlaces] = word(places.get());
    const std::string& who = ctx.device.who();
    launch(kernels_[0], pairs_, words, ctx.stream, who, what_);
    const int64_t tile = std::min(padded_, kSortTile);
    if (padded_ > 1) {
      words[w::kK] = word(int64_t{2});
      words[w::kKLast] = word(tile);
      launch(kernels_[2], tiles_, words, ctx.stream, who, what_);
    }
    for (int64_t k = 2 * tile; k <= padded_; k *= 2) {
      words[w::kK] = word(k);
      for (int64_t j = k / 2; j >= tile; j /= 2) {
        words[w::kJ] = word(j);
        launch(kernels_[1], steps_, words, ctx.stream, who, what_);
      }
      words[w::kKLast] = word(k);
      launch(kernels_[2], tiles_, words, ctx.stream, who, what_);
    }
    launch(kernels_[3], results_, words, ctx.stream, who, what_);
  }

 private:
  void enqueue_radix(StepContext& ctx, const void* in, void* out) const {
    std::shared_ptr<void> scratch = ctx.device.allocate(radix_scratch_);
    ctx.keep.push_back(scratch);
    const size_t line_bytes = static_cast<size_t>(n_) * dtype_size(dtype_);
    for (int64_t line = 0; line < lines_; ++line) {
      const size_t at = line_bytes * static_cast<size_t>(line);
      check(enqueue_radix_sort(dtype_, static_cast<const char*>(in) + at, static_cast<char*>(out) + at, n_,
                               descending_, scratch.get(), radix_scratch_, ctx.stream),
            ctx.device.who(), what_ + ": radix sort");
    }
  }

  std::string what_;
  DType dtype_ = DType::F32;
  bool descending_ = false;
  size_t radix_scratch_ = 0;  // not 0: the radix sort's scratch, which it takes
  std::vector<Word> words_;
  int64_t n_ = 0, lines_ = 0, padded_ = 1;
  std::vector<cudaKernel_t> kernels_;
  Launch pairs_, steps_, tiles_, results_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_sort_step(const Node& node, CudaDevice& device) {
  return std::make_unique<SortStep>(node, device);
}

}  // namespace sluice::cuda
