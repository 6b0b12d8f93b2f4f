// The CUDA backend's windows, scans, convolutions and sorts against the
// GPU's own limits, on the first GPU (no rows where there is none):
//   cuda_window_sum_64M   window_sum (window 8) over 64M f32, against a
//                         device-to-device copy of the input: both read
//                         and write 64M f32 (the output is 7 shorter), so
//                         the ratio of times is the ratio of bytes per second;
//   cuda_scan_steps_1024  a 1,024-step scan of a small MLP update (w' = w -
//                         0.01 tanh(w x) xᵀ, w f32[32][32]) against the same
//                         update run as 1,024 executable runs from the host;
//   cuda_conv2d_3x3_64ch  conv of f32[32][64][56][56] by f32[64][64][3][3],
//                         same padding, against cublasSgemm of a product of
//                         the same FLOPs (64 x 100,352 x 576): the ratio of
//                         times is the ratio of FLOP rates;
//   cuda_sort_16M_f32     sort of 16M random f32 against CUB's
//                         DeviceRadixSort::SortKeys on the same data.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include "bench/cuda_bench.h"
#include "bench/cuda_sort_baseline.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

void BM_cuda_window_sum_64M(benchmark::State& state) {
  constexpr int64_t n = int64_t{64} << 20, window = 8;
  constexpr int kCalls = 4;
  const Device d = gpu();
  Executable exe = compile(trace({f32({n})}, [](Expr v) { return window_sum(v, {window}); }), d);
  const std::vector<float> in = uniform_floats(static_cast<size_t>(n), -1, 1, 3);
  const Tensor x = tensor(in, Shape{n}, d);
  {
    const std::vector<float> got = exe.run({x})[0].to_vector<float>();
    std::vector<float> want, sampled;
    for (size_t i = 0; i < got.size(); i += 100003) {
      float s = 0;
      for (int64_t t = 0; t < window; ++t) s += in[i + static_cast<size_t>(t)];
      want.push_back(s);
      sampled.push_back(got[i]);
    }
    if (!check_close(state, sampled, want, 1e-5)) return;
  }
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  Samples s = against_device_copy(state, [&] { return exe.run({x})[0]; }, x.buffer()->data, bytes, kCalls);
  state.counters["GB/s"] = 2.0 * static_cast<double>(bytes) * kCalls / median(s.sluice) / 1e9;
  report_speedup("cuda_window_sum_64M", s, 0.7);
}

Expr mlp_update(Expr w, Expr x) {
  Expr h = tanh(dot(w, x));
  return w - 0.01f * dot(reshape(h, {32, 1}), reshape(x, {1, 32}));
}

void BM_cuda_scan_steps_1024(benchmark::State& state) {
  constexpr int64_t steps = 1024, m = 32;
  const Device d = gpu();
  Executable scanned = compile(trace({f32({m, m}), f32({steps, m})},
                                     [](Expr w, Expr xs) {
                                       return scan([](Expr c, Expr x) { return mlp_update(c, x); }, w, xs)[0];
                                     }),
                               d);
  Executable one = compile(trace({f32({m, m}), f32({m})}, [](Expr w, Expr x) { return mlp_update(w, x); }), d);
  const std::vector<float> xs = uniform_floats(static_cast<size_t>(steps * m), -1, 1, 4);
  const Tensor w0 = tensor(uniform_floats(static_cast<size_t>(m * m), -0.2f, 0.2f, 5), Shape{m, m}, d);
  const Tensor rows = tensor(xs, Shape{steps, m}, d);
  std::vector<Tensor> row;
  for (int64_t i = 0; i < steps; ++i)
    row.push_back(tensor(std::vector<float>(xs.begin() + i * m, xs.begin() + (i + 1) * m), Shape{m}, d));
  auto by_runs = [&] {
    Tensor w = w0;
    for (int64_t i = 0; i < steps; ++i) w = one.run({w, row[static_cast<size_t>(i)]})[0];
    return w;
  };
  if (!check_close(state, scanned.run({w0, rows})[0].to_vector<float>(), by_runs().to_vector<float>(), 1e-4)) return;
  Samples s = interleave(state, timed([&] { scanned.run({w0, rows})[0].wait(); }), timed([&] { by_runs().wait(); }));
  state.counters["us/step"] = median(s.sluice) / steps * 1e6;
  report_speedup("cuda_scan_steps_1024", s, 3.0);
}

void BM_cuda_conv2d_3x3_64ch(benchmark::State& state) {
  constexpr int64_t batch = 32, channels = 64, side = 56;
  const Device d = gpu();
  Executable exe = compile(trace({f32({batch, channels, side, side}), f32({channels, channels, 3, 3})},
                                 [](Expr x, Expr k) { return conv(x, k, {.padding = ConvPadding::Same}); }),
                           d);
  const std::vector<float> xv = uniform_floats(static_cast<size_t>(batch * channels * side * side), -1, 1, 6);
  const std::vector<float> kv = uniform_floats(static_cast<size_t>(channels * channels * 9), -1, 1, 7);
  const Tensor x = tensor(xv, Shape{batch, channels, side, side}, d);
  const Tensor k = tensor(kv, Shape{channels, channels, 3, 3}, d);
  {
    // A sample of outputs against the convolution's definition.
    const std::vector<float> got = exe.run({x, k})[0].to_vector<float>();
    std::vector<float> want, sampled;
    for (size_t at = 0; at < got.size(); at += 1000003) {
      const int64_t i = static_cast<int64_t>(at), col = i % side, row = i / side % side;
      const int64_t o = i / (side * side) % channels, b = i / (side * side * channels);
      double sum = 0;
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t dy = 0; dy < 3; ++dy)
          for (int64_t dx = 0; dx < 3; ++dx) {
            const int64_t y = row + dy - 1, xx = col + dx - 1;
            if (y < 0 || y >= side || xx < 0 || xx >= side) continue;
            sum += static_cast<double>(xv[static_cast<size_t>(((b * channels + c) * side + y) * side + xx)]) *
                   kv[static_cast<size_t>(((o * channels + c) * 3 + dy) * 3 + dx)];
          }
      want.push_back(static_cast<float>(sum));
      sampled.push_back(got[at]);
    }
    if (!check_close(state, sampled, want, 1e-3)) return;
  }
  // The same FLOPs as one matrix product: [64][576] x [576][100352].
  const int gm = static_cast<int>(channels), gn = static_cast<int>(batch * side * side), gk = static_cast<int>(channels * 9);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&a), sizeof(float) * gm * gk), "cudaMalloc");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&b), sizeof(float) * static_cast<size_t>(gk) * gn), "cudaMalloc");
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&c), sizeof(float) * static_cast<size_t>(gm) * gn), "cudaMalloc");
  check_cuda(cudaMemset(a, 0, sizeof(float) * gm * gk), "cudaMemset");
  check_cuda(cudaMemset(b, 0, sizeof(float) * static_cast<size_t>(gk) * gn), "cudaMemset");
  cublasHandle_t handle = nullptr;
  cublasCreate(&handle);
  const float one = 1, zero = 0;
  Samples s = interleave(state, timed([&] { exe.run({x, k})[0].wait(); }), timed([&] {
                           cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, gn, gm, gk, &one, b, gn, a, gk, &zero, c, gn);
                           check_cuda(cudaDeviceSynchronize(), "sync");
                         }));
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  state.counters["TFLOP/s"] = 2.0 * gm * gn * gk / median(s.sluice) / 1e12;
  report_speedup("cuda_conv2d_3x3_64ch", s, 0.6);
}

void BM_cuda_sort_16M_f32(benchmark::State& state) {
  constexpr int64_t n = int64_t{16} << 20;
  const Device d = gpu();
  Executable exe = compile(trace({f32({n})}, [](Expr v) { return sort(v); }), d);
  std::vector<float> in = uniform_floats(static_cast<size_t>(n), -1000, 1000, 8);
  const Tensor x = tensor(in, Shape{n}, d);
  float* out = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float) * n), "cudaMalloc");
  CubSortKeys cub(static_cast<const float*>(x.buffer()->data), out, n);
  {
    std::sort(in.begin(), in.end());
    if (!check_close(state, exe.run({x})[0].to_vector<float>(), in, 0)) return;
  }
  Samples s = interleave(state, timed([&] { exe.run({x})[0].wait(); }), timed([&] {
                           cub.run();
                           check_cuda(cudaDeviceSynchronize(), "sync");
                         }));
  cudaFree(out);
  state.counters["Gkeys/s"] = static_cast<double>(n) / median(s.sluice) / 1e9;
  report_speedup("cuda_sort_16M_f32", s, 0.9);
}

const bool registered = [] {
  if (!gpu_here()) return false;
  benchmark::RegisterBenchmark("BM_cuda_window_sum_64M", BM_cuda_window_sum_64M)
      ->Iterations(9)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_cuda_scan_steps_1024", BM_cuda_scan_steps_1024)
      ->Iterations(9)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_cuda_conv2d_3x3_64ch", BM_cuda_conv2d_3x3_64ch)
      ->Iterations(9)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_cuda_sort_16M_f32", BM_cuda_sort_16M_f32)
      ->Iterations(9)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace sluice::bench
