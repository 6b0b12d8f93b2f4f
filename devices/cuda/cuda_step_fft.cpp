// fft and ifft along the last axis of c64 or c128 data on cuFFT, a plan per
// (length, rows, precision) made once per device; ifft is scaled by 1/n, as
// Nx and numpy (cuFFT's inverse is not), by a generated kernel.

#include <fmt/format.h>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_libraries.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>

namespace sluice::cuda {
namespace {

class FftStep final : public CudaUnit {
 public:
  FftStep(const Node& node, CudaDevice& device) : inverse_(node.op == Op::Ifft) {
    const Spec& x = node.operands[0]->spec;
    double_ = x.dtype == DType::C128;
    count_ = x.size();
    if (count_ == 0) return;
    n_ = x.shape.dim(x.shape.rank() - 1);
    rows_ = count_ / n_;
    std::lock_guard lock(device.enqueue());
    device.fft_plan(n_, rows_, double_, device.compute().stream());
    if (inverse_) {
      scale_ = load_kernels(scale_kernel(x.dtype), device.arch()).front();
      geometry_ = loop_launch(count_, device.multiprocessors());
    }
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (count_ == 0) return;
    const cufftHandle plan = ctx.device.fft_plan(n_, rows_, double_, ctx.stream);
    const int direction = inverse_ ? CUFFT_INVERSE : CUFFT_FORWARD;
    const std::string what = fmt::format("{} of {} rows of length {}", inverse_ ? "ifft" : "fft", rows_, n_);
    if (double_)
      check_cufft(cufft_library().exec_z2z(plan, static_cast<cufftDoubleComplex*>(in[0]), static_cast<cufftDoubleComplex*>(out[0]),
                               direction),
                  ctx.device.who(), what);
    else
      check_cufft(cufft_library().exec_c2c(plan, static_cast<cufftComplex*>(in[0]), static_cast<cufftComplex*>(out[0]), direction),
                  ctx.device.who(), what);
    if (!inverse_) return;
    namespace w = scale_words;
    std::vector<Word> words(w::kWords, 0);
    words[w::kData] = word(out[0]);
    words[w::kCount] = word(count_);
    words[w::kScale] = word_of_double(1.0 / static_cast<double>(n_));
    launch(scale_, geometry_, words, ctx.stream, ctx.device.who(), what);
  }

 private:
  bool inverse_, double_ = false;
  int64_t count_ = 0, n_ = 0, rows_ = 0;
  cudaKernel_t scale_ = nullptr;
  Launch geometry_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_fft_step(const Node& node, CudaDevice& device) {
  return std::make_unique<FftStep>(node, device);
}

}  // namespace sluice::cuda
