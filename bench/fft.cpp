// fft of 4096 rows of 1024 c64 along the last axis: sluice against FFTW
// executing a plan made once (fftwf_plan_many_dft, FFTW_MEASURE). Like for
// like: the baseline spreads its rows over oneTBB's threads as sluice does,
// one block of rows per thread, each transform single-threaded.

#include <complex>
#include <cstring>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>
#include <fftw3.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int kRows = 4096;
constexpr int kLength = 1024;

// The rows split into a power of two of blocks (so kRows divides evenly), one
// per thread, all transformed by one plan.
class FftwRows {
 public:
  FftwRows() {
    while (blocks_ * 2 <= tbb::this_task_arena::max_concurrency() && blocks_ * 2 <= kRows) blocks_ *= 2;
    const size_t count = size_t{kRows} * kLength;
    in_ = fftwf_alloc_complex(count);
    out_ = fftwf_alloc_complex(count);
    int n = kLength;
    plan_ = fftwf_plan_many_dft(1, &n, kRows / blocks_, in_, nullptr, 1, kLength, out_, nullptr, 1, kLength,
                                FFTW_FORWARD, FFTW_MEASURE);
  }
  ~FftwRows() {
    fftwf_destroy_plan(plan_);
    fftwf_free(in_);
    fftwf_free(out_);
  }
  FftwRows(const FftwRows&) = delete;
  FftwRows& operator=(const FftwRows&) = delete;

  void set_input(std::span<const complex64> x) { std::memcpy(in_, x.data(), x.size_bytes()); }
  void run() {
    const size_t block = size_t{kRows} / static_cast<size_t>(blocks_) * kLength;
    tbb::parallel_for(0, blocks_, [&](int b) {
      fftwf_execute_dft(plan_, in_ + static_cast<size_t>(b) * block, out_ + static_cast<size_t>(b) * block);
    });
  }
  std::span<const float> output() const {
    return {reinterpret_cast<const float*>(out_), size_t{kRows} * kLength * 2};
  }

 private:
  int blocks_ = 1;
  fftwf_complex* in_ = nullptr;
  fftwf_complex* out_ = nullptr;
  fftwf_plan plan_ = nullptr;
};

void BM_fft_4096x1024_c64(benchmark::State& state) {
  const size_t count = size_t{kRows} * kLength;
  const std::vector<float> parts = uniform_floats(2 * count, -1, 1, 3);
  std::vector<complex64> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = {parts[2 * i], parts[2 * i + 1]};

  FftwRows fftw;  // plans first: FFTW_MEASURE overwrites the arrays
  fftw.set_input(x);
  fftw.run();

  Executable exe = compile(trace({c64({kRows, kLength})}, [](Expr v) { return fft(v); }), host());
  Tensor tx = tensor(x, Shape{kRows, kLength});
  Tensor y = exe.run({tx})[0];
  std::span<const complex64> got = y.data<complex64>();
  if (!check_close(state, {reinterpret_cast<const float*>(got.data()), got.size() * 2}, fftw.output(), 1e-4)) return;

  Samples s = interleave(state, timed([&] { exe.run({tx})[0].wait(); }), timed([&] { fftw.run(); }));
  report_speedup("fft_4096x1024_c64", s, 0.95);
}
BENCHMARK(BM_fft_4096x1024_c64)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
