// dot of two f32[1024][1024] matrices: sluice against a direct cblas_sgemm
// call into the same OpenBLAS, on preallocated output, with OpenBLAS's own
// threads on every core (as the defaults leave OpenBLAS, and as a user
// calls it; set here too, should the process have changed it).

#include <vector>

#include <benchmark/benchmark.h>
#include <cblas.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int64_t kN = 1024;

void BM_dot_1024_f32(benchmark::State& state) {
  const size_t count = static_cast<size_t>(kN * kN);
  const std::vector<float> a = uniform_floats(count, -1, 1, 1), b = uniform_floats(count, -1, 1, 2);
  std::vector<float> c(count);
  auto sgemm = [&] {
    const int sluice_threads = openblas_get_num_threads();
    openblas_set_num_threads(openblas_get_num_procs());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f,
                c.data(), kN);
    openblas_set_num_threads(sluice_threads);
  };

  Executable exe = compile(trace({f32({kN, kN}), f32({kN, kN})}, [](Expr x, Expr y) { return dot(x, y); }), host());
  Tensor ta = tensor(a, Shape{kN, kN}), tb = tensor(b, Shape{kN, kN});
  sgemm();
  if (!check_close(state, exe.run({ta, tb})[0].data<float>(), c, 1e-4)) return;

  Samples s = interleave(state, timed([&] { exe.run({ta, tb})[0].wait(); }), timed(sgemm));
  report_speedup("dot_1024_f32", s, 0.95);
}
BENCHMARK(BM_dot_1024_f32)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
