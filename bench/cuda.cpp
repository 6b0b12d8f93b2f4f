// The CUDA backend against the GPU's own limits, on the first GPU; no rows
// where there is none (the benchmarks are registered only when one is here).
//   cuda_fused_256M    the fused chain tanh(x * 2 + 1) * x - exp(-x) over
//                      256M f32 on the device, bytes read + written per
//                      second, against a device-to-device cudaMemcpy of the
//                      same bytes (one read and one write of 1 GiB each);
//   cuda_dot_8192      dot of two f32[8192][8192] on the device against a
//                      direct cublasSgemm call on the same GPU;
//   cuda_stream_64MiB  64 MiB f32 chunks streamed from host memory through
//                      the fused chain (upload, compute, the accumulator on
//                      the device), per chunk against a host-to-device
//                      cudaMemcpy of 64 MiB from pinned memory.
// Each round queues several calls and waits once, on both sides, so that
// what is measured is the GPU's throughput, not a host's wake-up.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include "bench/cuda_bench.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include <sluice/stream/stream.h>

namespace sluice::bench {
namespace {

Expr chain(Expr v) { return tanh(v * 2 + 1) * v - exp(-v); }

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  const float step = 4.0f / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * step - 2.0f;
  return v;
}

void BM_cuda_fused_256M(benchmark::State& state) {
  constexpr int64_t n = int64_t{1} << 28;
  constexpr int kCalls = 8;
  const Device d = gpu();
  Executable exe = compile(trace({f32({n})}, [](Expr v) { return chain(v); }), d);
  const Tensor x = tensor(ramp(n), Shape{n}, d);
  {
    // Checked on a sample of elements against the host's result.
    const std::vector<float> got = exe.run({x})[0].to_vector<float>();
    const std::vector<float> in = ramp(n);
    std::vector<float> want, sampled;
    for (size_t i = 0; i < got.size(); i += 4099) {
      const float v = in[i];
      want.push_back(std::tanh(v * 2 + 1) * v - std::exp(-v));
      sampled.push_back(got[i]);
    }
    if (!check_close(state, sampled, want, 1e-5)) return;
  }
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  Samples s = against_device_copy(state, [&] { return exe.run({x})[0]; }, x.buffer()->data, bytes, kCalls);
  state.counters["GB/s"] = 2.0 * static_cast<double>(bytes) * kCalls / median(s.sluice) / 1e9;
  report_speedup("cuda_fused_256M", s, 0.85);
}

void BM_cuda_dot_8192(benchmark::State& state) {
  constexpr int64_t n = 8192;
  constexpr int kCalls = 3;
  const Device d = gpu();
  const size_t count = static_cast<size_t>(n * n);
  const std::vector<float> a = uniform_floats(count, -1, 1, 1), b = uniform_floats(count, -1, 1, 2);
  Executable exe = compile(trace({f32({n, n}), f32({n, n})}, [](Expr x, Expr y) { return dot(x, y); }), d);
  const Tensor ta = tensor(a, Shape{n, n}, d), tb = tensor(b, Shape{n, n}, d);
  float* c = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&c), count * sizeof(float)), "cudaMalloc");
  cublasHandle_t handle = nullptr;
  cublasCreate(&handle);
  const float one = 1, zero = 0;
  // Row-major C = A B as column-major C^T = B^T A^T.
  auto sgemm = [&] {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<const float*>(tb.buffer()->data), n,
                static_cast<const float*>(ta.buffer()->data), n, &zero, c, n);
  };
  {
    sgemm();
    std::vector<float> want(count);
    check_cuda(cudaMemcpy(want.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost), "download");
    if (!check_close(state, exe.run({ta, tb})[0].to_vector<float>(), want, 1e-4)) return;
  }
  Samples s = interleave(state, timed([&] {
                           Tensor y;
                           for (int i = 0; i < kCalls; ++i) y = exe.run({ta, tb})[0];
                           y.wait();
                         }),
                         timed([&] {
                           for (int i = 0; i < kCalls; ++i) sgemm();
                           check_cuda(cudaDeviceSynchronize(), "sync");
                         }));
  cublasDestroy(handle);
  cudaFree(c);
  state.counters["TFLOP/s"] = 2.0 * n * n * n * kCalls / median(s.sluice) / 1e12;
  report_speedup("cuda_dot_8192", s, 0.95);
}

void BM_cuda_stream_64MiB(benchmark::State& state) {
  constexpr int64_t n = int64_t{16} << 20;  // 16M f32: 64 MiB
  constexpr int kChunks = 12;
  const Device d = gpu();
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  auto step = [](Expr x, Expr acc) {
    Expr y = chain(x);
    return tuple(y, acc + y);
  };
  const Tensor acc0 = zeros(f32({n}));
  {
    Stream warm = stream(step, {f32({n})}, {acc0}, d);
    warm.send(tensor(ramp(n), Shape{n}));
    warm.recv();
    warm.done();
  }
  // Host chunks as sluice allocates them (its pool pins large blocks once the
  // GPU is in use, as it is now), a few reused as a source would.
  std::vector<Tensor> chunks;
  for (int i = 0; i < 3; ++i) chunks.push_back(tensor(ramp(n), Shape{n}));
  void* dst = nullptr;
  void* pinned = nullptr;
  check_cuda(cudaMalloc(&dst, bytes), "cudaMalloc");
  check_cuda(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  std::copy_n(static_cast<const char*>(chunks[0].host_data()), bytes, static_cast<char*>(pinned));
  Samples s = interleave(state, timed([&] {
                           Stream st = stream(step, {f32({n})}, {acc0}, d);
                           for (int i = 0; i < kChunks; ++i) st.send(chunks[static_cast<size_t>(i % 3)]);
                           for (int i = 0; i < kChunks; ++i) st.recv();
                           st.done()[0].wait();
                         }),
                         timed([&] {
                           for (int i = 0; i < kChunks; ++i)
                             check_cuda(cudaMemcpy(dst, pinned, bytes, cudaMemcpyHostToDevice), "upload");
                         }));
  cudaFree(dst);
  cudaFreeHost(pinned);
  state.counters["GB/s"] = static_cast<double>(bytes) * kChunks / median(s.sluice) / 1e9;
  report_speedup("cuda_stream_64MiB", s, 0.85);
}

// Registered only where there is a GPU: no rows elsewhere.
const bool registered = [] {
  if (!gpu_here()) return false;
  benchmark::RegisterBenchmark("BM_cuda_fused_256M", BM_cuda_fused_256M)
      ->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_cuda_dot_8192", BM_cuda_dot_8192)
      ->Iterations(7)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_cuda_stream_64MiB", BM_cuda_stream_64MiB)
      ->Iterations(7)->UseManualTime()->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace

Samples against_device_copy(benchmark::State& state, const std::function<Tensor()>& run, const void* source,
                            size_t bytes, int calls) {
  void* copy = nullptr;
  check_cuda(cudaMalloc(&copy, bytes), "cudaMalloc");
  Samples s = interleave(state, timed([&] {
                           Tensor y;
                           for (int i = 0; i < calls; ++i) y = run();
                           y.wait();
                         }),
                         timed([&] {
                           for (int i = 0; i < calls; ++i)
                             check_cuda(cudaMemcpyAsync(copy, source, bytes, cudaMemcpyDeviceToDevice, nullptr), "copy");
                           check_cuda(cudaStreamSynchronize(nullptr), "sync");
                         }));
  cudaFree(copy);
  return s;
}

bool gpu_here() {
  const std::vector<std::string> here = platforms();
  return std::find(here.begin(), here.end(), "cuda") != here.end();
}

}  // namespace sluice::bench
