// dot of two f32[1024][1024] matrices: sluice against a direct call into the
// library it calls for f32 products, oneDNN's sgemm, on preallocated output,
// on oneDNN's own OpenMP threads over every core, as a user calls it (sluice
// runs it single-threaded on blocks of rows spread across its oneTBB
// workers: devices/cpu/kernels/dot.cpp). Each call is followed by an untimed
// pause (bench_report.h, settled). Printed beside the row, not a row: the
// same product through OpenBLAS's cblas_sgemm on its own threads, with the
// kernels it chose for this CPU.

#include <omp.h>

#include <oneapi/dnnl/dnnl.h>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <benchmark/benchmark.h>
#include <cblas.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

extern "C" char* openblas_get_corename();

namespace sluice::bench {
namespace {

constexpr int64_t kN = 1024;

void BM_dot_1024_f32(benchmark::State& state) {
  const size_t count = static_cast<size_t>(kN * kN);
  const std::vector<float> a = uniform_floats(count, -1, 1, 1), b = uniform_floats(count, -1, 1, 2);
  std::vector<float> c(count), via_openblas(count);
  auto sgemm = [&] {
    omp_set_num_threads(omp_get_num_procs());
    if (dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f, c.data(), kN) !=
        dnnl_success)
      throw std::runtime_error("dnnl_sgemm failed");
  };
  auto openblas = [&] {
    const int sluice_threads = openblas_get_num_threads();
    openblas_set_num_threads(openblas_get_num_procs());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f,
                via_openblas.data(), kN);
    openblas_set_num_threads(sluice_threads);
  };

  Executable exe = compile(trace({f32({kN, kN}), f32({kN, kN})}, [](Expr x, Expr y) { return dot(x, y); }), host());
  Tensor ta = tensor(a, Shape{kN, kN}), tb = tensor(b, Shape{kN, kN});
  sgemm();
  if (!check_close(state, exe.run({ta, tb})[0].data<float>(), c, 1e-4)) return;

  Samples s = interleave(state, settled(timed([&] { exe.run({ta, tb})[0].wait(); })), settled(timed(sgemm)));
  report_speedup("dot_1024_f32", s, 0.95);
  const Trial through_openblas = settled(timed(openblas));
  through_openblas();
  std::vector<double> seconds;
  for (int i = 0; i < 7; ++i) seconds.push_back(through_openblas());
  std::printf("dot_1024_f32: OpenBLAS's cblas_sgemm (kernels: %s) took %.2f ms a call\n",
              openblas_get_corename(), median(seconds) * 1e3);
}
BENCHMARK(BM_dot_1024_f32)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
