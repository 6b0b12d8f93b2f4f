// Shape ops: the box copies of devices/detail/shape_copies.h, each one launch of
// the box-copy kernel of the element size.

#include <fmt/format.h>

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/detail/shape_copies.h>

namespace sluice::cuda {

void enqueue_box_copy(StepContext& ctx, int elem_bytes, const void* source, void* result, Box box,
                      const DynamicStarts* dynamic, std::span<void* const> starts) {
  if (!normalize_box(box)) return;
  namespace w = box_words;
  std::vector<Word> words(w::kWords, 0);
  words[w::kSource] = word(source);
  words[w::kResult] = word(result);
  const int64_t count = box.count();
  words[w::kCount] = word(count);
  words[w::kRank] = word(int64_t{box.rank});
  for (int k = 0; k < box.rank; ++k) {
    words[w::kDims + k] = word(box.dims[k]);
    words[w::kResultStrides + k] = word(box.out_strides[k]);
    words[w::kSourceStrides + k] = word(box.in_strides[k]);
  }
  if (dynamic) {
    words[w::kDynamicRank] = word(int64_t{dynamic->rank});
    words[w::kDynamicOnSource] = word(int64_t{dynamic->on_source});
    for (int k = 0; k < dynamic->rank; ++k) {
      words[w::kStarts + k] = word(starts[dynamic->first_operand + static_cast<size_t>(k)]);
      words[w::kMaxStart + k] = word(dynamic->max_start[k]);
      words[w::kDynamicStride + k] = word(dynamic->stride[k]);
    }
  }
  const cudaKernel_t kernel = load_kernels(box_copy_kernel(elem_bytes), ctx.device.arch()).front();
  launch(kernel, loop_launch(count, ctx.device.multiprocessors()), words, ctx.stream, ctx.device.who(),
         fmt::format("a copy of {}-byte elements", elem_bytes));
}

namespace {

class ShapeStep final : public CudaUnit {
 public:
  ShapeStep(const Node& node, CudaDevice& device)
      : copies_(shape_copies(node)), elem_bytes_(dtype_size(node.spec.dtype)) {
    load_kernels(box_copy_kernel(elem_bytes_), device.arch());  // compiled now, not on the first run
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    const auto bytes = static_cast<int64_t>(elem_bytes_);
    for (size_t i = 0; i < copies_.copies.size(); ++i) {
      const BoxCopy& c = copies_.copies[i];
      const void* source = in[static_cast<size_t>(c.source)];
      if (c.whole && source == out[0]) continue;
      const bool last = i + 1 == copies_.copies.size();
      const DynamicStarts* dynamic = last && copies_.dynamic ? &*copies_.dynamic : nullptr;
      enqueue_box_copy(ctx, elem_bytes_, static_cast<const char*>(source) + c.source_offset * bytes,
                       static_cast<char*>(out[0]) + c.result_offset * bytes, c.box, dynamic, in);
    }
  }

 private:
  ShapeCopies copies_;
  int elem_bytes_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_shape_step(const Node& node, CudaDevice& device) {
  return std::make_unique<ShapeStep>(node, device);
}

}  // namespace sluice::cuda
