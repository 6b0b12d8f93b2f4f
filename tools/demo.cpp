// `sluice demo`: the smallest whole use of sluice. Traces a function of a
// symbolic tensor, compiles it for the default device, runs it on a small
// tensor and prints the input and the result.

#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "devices/backend.h"
#include "ops/ops.h"
#include "tools/commands.h"

namespace sluice::tools {
namespace {

struct DemoOptions {
  int64_t size = 8;
};

void run_demo(const DemoOptions& options) {
  const int64_t n = options.size;
  Function f = trace({f32({n})}, [](Expr x) { return tanh(x * 2 + 1) * x - exp(-x); });
  Device device = default_device();
  Executable exe = compile(f, device);

  // Evenly spaced points from -1 to 1.
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] = n == 1 ? 0.0f : -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n - 1);
  Tensor x = tensor(values, Shape{n}, device);
  Tensor y = exe.run({x})[0];

  std::cout << "f(x) = tanh(x * 2 + 1) * x - exp(-x), compiled for " << device.str() << "\n\n"
            << "x = " << x << "\n\n"
            << "f(x) = " << y << "\n";
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "trace, compile and run f(x) = tanh(x * 2 + 1) * x - exp(-x)");
  demo->add_option("-n,--size", options->size, "number of elements of x")->check(CLI::Range(1, 1 << 20));
  demo->callback([options] { run_demo(*options); });
}

}  // namespace sluice::tools
