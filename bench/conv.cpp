// conv2d of a ResNet layer: 3x3 kernel, 64 -> 64 channels, 56x56, batch 8,
// f32, stride 1, same padding (and, as a diagnostic, batch 1: one window of
// a stream, which sluice cuts by output channels). sluice against the library it calls, oneDNN,
// called directly as a user calls it: one primitive made once with the
// layouts oneDNN prefers, the input and weights reordered into them and the
// result out of them on every call, on oneDNN's own OpenMP threads over the
// whole batch (sluice runs oneDNN single-threaded on parts of the batch
// spread across its oneTBB workers: devices/cpu/kernels/conv_dnnl.cpp).
// Each call is followed by an untimed pause (bench_report.h, settled).

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int64_t kChannels = 64, kSize = 56, kWindow = 3;

// The baseline: one oneDNN convolution with its reorders, as in oneDNN's
// own examples (cnn_inference_f32).
class DnnlConv {
 public:
  DnnlConv(int64_t batch, const float* x, const float* k, float* y) {
    using tag = dnnl::memory::format_tag;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::dims src{batch, kChannels, kSize, kSize},
        weights{kChannels, kChannels, kWindow, kWindow};
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, {src, f32, tag::any},
        {weights, f32, tag::any}, {src, f32, tag::any}, {1, 1}, {0, 0}, {1, 1}, {1, 1});
    pd_ = dnnl::convolution_forward::primitive_desc(desc, engine_);
    conv_ = dnnl::convolution_forward(pd_);
    x_ = dnnl::memory({src, f32, tag::nchw}, engine_, const_cast<float*>(x));
    k_ = dnnl::memory({weights, f32, tag::oihw}, engine_, const_cast<float*>(k));
    y_ = dnnl::memory({src, f32, tag::nchw}, engine_, y);
    xb_ = dnnl::memory(pd_.src_desc(), engine_);
    kb_ = dnnl::memory(pd_.weights_desc(), engine_);
    yb_ = dnnl::memory(pd_.dst_desc(), engine_);
  }

  void run() {
    omp_set_num_threads(omp_get_num_procs());
    dnnl::reorder(x_, xb_).execute(stream_, x_, xb_);
    dnnl::reorder(k_, kb_).execute(stream_, k_, kb_);
    conv_.execute(stream_, {{DNNL_ARG_SRC, xb_}, {DNNL_ARG_WEIGHTS, kb_}, {DNNL_ARG_DST, yb_}});
    dnnl::reorder(yb_, y_).execute(stream_, yb_, y_);
    stream_.wait();
  }

 private:
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::memory x_, k_, y_, xb_, kb_, yb_;
};

void conv_bench(benchmark::State& state, int64_t batch, const char* row, double goal) {
  const std::vector<float> x =
      uniform_floats(static_cast<size_t>(batch * kChannels * kSize * kSize), -1, 1, 1);
  const std::vector<float> k =
      uniform_floats(static_cast<size_t>(kChannels * kChannels * kWindow * kWindow), -1, 1, 2);
  std::vector<float> y(x.size());
  DnnlConv baseline(batch, x.data(), k.data(), y.data());
  baseline.run();

  const Spec input = f32({batch, kChannels, kSize, kSize}),
             kernel = f32({kChannels, kChannels, kWindow, kWindow});
  Executable exe = compile(
      trace({input, kernel}, [](Expr a, Expr b) { return conv(a, b, {.padding = ConvPadding::Same}); }),
      host());
  Tensor tx = tensor(x, input.shape), tk = tensor(k, kernel.shape);
  if (!check_close(state, exe.run({tx, tk})[0].data<float>(), y, 1e-4)) return;

  Samples s = interleave(state, settled(timed([&] {
                           exe.run({tx, tk})[0].wait();
                         })),
                         settled(timed([&] { baseline.run(); })));
  report_speedup(row, s, goal);
}

void BM_conv2d_3x3_64ch(benchmark::State& state) { conv_bench(state, 8, "conv2d_3x3_64ch", 0.9); }
BENCHMARK(BM_conv2d_3x3_64ch)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);
void BM_conv2d_3x3_64ch_batch1(benchmark::State& state) {
  conv_bench(state, 1, "conv2d_3x3_64ch_batch1", 0.9);
}
BENCHMARK(BM_conv2d_3x3_64ch_batch1)->Iterations(41)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
