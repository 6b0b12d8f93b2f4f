#pragma once
// Runs a traced Function on a device (the host unless told) with f64
// arguments and f64 results: what the gradient tests compare.

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::testing {

using Values = std::vector<double>;

// A Function compiled once for `device`, run on f64 values.
class HostFunction {
 public:
  explicit HostFunction(Function f, Device device = host())
      : f_(std::move(f)), device_(device), exe_(compile(f_, device)) {}

  // f's outputs for `args` (one per input of f, all f64), each as f64 values.
  std::vector<Values> operator()(const std::vector<Values>& args) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < args.size(); ++i)
      inputs.push_back(tensor_from_bytes(f_.inputs()[i], args[i].data()).to(device_));
    std::vector<Values> outs;
    for (const Tensor& t : exe_.run(inputs)) {
      Values v(static_cast<size_t>(t.size()));
      t.copy_to_host(v.data());
      outs.push_back(std::move(v));
    }
    return outs;
  }

 private:
  Function f_;
  Device device_;
  Executable exe_;
};

// Element by element: |found - expected| <= tol * (1 + |expected|), and
// infinities exactly.
inline void expect_values(const Values& found, const Values& expected, double tol, const std::string& what) {
  ASSERT_EQ(found.size(), expected.size()) << what;
  for (size_t i = 0; i < found.size(); ++i) {
    if (std::isinf(expected[i])) {
      EXPECT_EQ(found[i], expected[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(found[i], expected[i], tol * (1 + std::abs(expected[i]))) << what << " [" << i << "]";
    }
  }
}

}  // namespace sluice::testing
