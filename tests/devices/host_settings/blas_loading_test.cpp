// OpenBLAS and LAPACKE load when sluice first calls them, not with sluice
// (devices/cpu/kernels/blas_library.h): OpenBLAS's threads each spin on a
// core for about 0.1 s once it loads, which every process using sluice
// paid at its start while it was linked. A program of its own that does
// not link OpenBLAS itself, since what a process has loaded is process-wide.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

// Whether this process has mapped a file whose name contains `name`.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST(BlasLoading, OpenBlasLoadsWithTheFirstKernelThatCallsIt) {
  ASSERT_FALSE(mapped("libopenblas")) << "loaded with sluice, before anything called it";

  // f32 work, products included (oneDNN's), calls neither library.
  Function f32_work = trace({f32({8, 8}), f32({8, 8})}, [](Expr a, Expr b) { return dot(a, b) + a; });
  const std::vector<float> y = compile(f32_work, host())
                                   .run({ones(f32({8, 8}), host()), ones(f32({8, 8}), host())})[0]
                                   .to_vector<float>();
  EXPECT_FLOAT_EQ(y.front(), 9.0f);
  EXPECT_FALSE(mapped("libopenblas"));
  EXPECT_FALSE(mapped("liblapacke"));

  // A product in double precision goes to OpenBLAS, a Cholesky factor to LAPACKE.
  Function f64_work = trace({f64({3, 3})}, [](Expr a) { return cholesky(dot(a, transpose(a, {1, 0}))); });
  const Tensor a = tensor(std::vector<double>{2, 0, 0, 1, 3, 0, 4, 5, 6}, Shape{3, 3});
  const std::vector<double> l = compile(f64_work, host()).run({a})[0].to_vector<double>();
  // a a^T's lower Cholesky factor is a itself (lower triangular, positive diagonal).
  const std::vector<double> want{2, 0, 0, 1, 3, 0, 4, 5, 6};
  ASSERT_EQ(l.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(l[i], want[i], 1e-12) << "element " << i;
  EXPECT_TRUE(mapped("libopenblas"));
  EXPECT_TRUE(mapped("liblapacke"));
}

}  // namespace
}  // namespace sluice
