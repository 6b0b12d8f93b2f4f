// Op conformance: every op of the catalogue, against numpy-computed
// references (reference_cases.json, from make_reference.py), on every device
// this machine has. As ggml's test-backend-ops and JAX's testOpAgainstNumpy:
// one table of cases, one harness, a stated tolerance per case. Each case
// runs twice per device: inputs as parameters, and as constants the compiler
// may fold.
//
// A platform other than the host may lack an op or a dtype (its
// capabilities() say so); such cases are skipped there and listed. The host
// backend implements the whole catalogue: nothing is skipped on it.

#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/conformance/cases.h"
#include "tests/conformance/compare.h"
#include "tests/conformance/op_table.h"

namespace sluice::conformance {
namespace {

std::vector<Device> all_devices() {
  std::vector<Device> devices;
  for (const std::string& platform : platforms()) {
    Client& c = client(platform);
    for (int id = 0; id < c.device_count(); ++id) devices.push_back(c.device(id));
  }
  return devices;
}

std::string describe(const Case& c) {
  std::string s = "op " + c.op + ", case '" + c.name + "'";
  for (size_t i = 0; i < c.inputs.size(); ++i)
    s += "\n  input " + std::to_string(i) + ": " + tensor_str(c.inputs[i]);
  s += "\n  expected: " + tensor_str(c.expected) + " (tolerance " + c.tolerance.str() + ")";
  return s;
}

// How a case's inputs enter its function: as parameters given at run time,
// or as constants, which the compiler may fold (its evaluator, not the run
// time kernels, then computes the op: both have to conform).
enum class InputMode { Parameters, Constants };

const char* mode_str(InputMode mode) {
  return mode == InputMode::Parameters ? "inputs as parameters" : "inputs as constants (foldable)";
}

// Traces, compiles and runs one case on one device; every failure names the
// op, the case, the device, the inputs and what differed.
void run_case(const Case& c, const Builder& build, const Device& device, InputMode mode,
              std::vector<std::string>& skipped) {
  std::vector<Spec> specs;
  if (mode == InputMode::Parameters)
    for (const CaseTensor& input : c.inputs) specs.push_back(input.spec);
  Function f;
  try {
    f = trace(specs, [&](const std::vector<Expr>& params) {
      if (mode == InputMode::Parameters) return build(c.attrs, params);
      std::vector<Expr> constants;
      for (const CaseTensor& input : c.inputs)
        constants.push_back(constant(Literal{input.spec, input.bytes}));
      return build(c.attrs, constants);
    });
  } catch (const std::exception& e) {
    ADD_FAILURE() << describe(c) << "\n  tracing with " << mode_str(mode) << " threw: " << e.what();
    return;
  }
  std::vector<Spec> traced = f.output_specs();
  if (traced.size() != 1 || traced[0] != c.expected.spec) {
    ADD_FAILURE() << describe(c) << "\n  traced with " << mode_str(mode) << ", output type: expected "
                  << c.expected.spec.str() << ", found "
                  << (traced.empty() ? std::string("no output") : traced[0].str());
    return;
  }
  if (device.platform() != "host") {
    if (auto missing = unsupported(f, device); !missing.empty()) {
      skipped.push_back(c.op + " '" + c.name + "' (" + missing.front() + ")");
      return;
    }
  }
  try {
    Executable exe = compile(f, device);
    std::vector<Tensor> args;
    if (mode == InputMode::Parameters)
      for (const CaseTensor& input : c.inputs)
        args.push_back(tensor_from_bytes(input.spec, input.bytes.data(), device));
    std::vector<Tensor> outs = exe.run(args);
    if (outs.size() != 1 || outs[0].spec() != c.expected.spec) {
      ADD_FAILURE() << describe(c) << "\n  on " << device.str() << ", " << mode_str(mode)
                    << ": expected one output of " << c.expected.spec.str() << ", found " << outs.size()
                    << " outputs" << (outs.empty() ? std::string() : ", the first " + outs[0].spec().str());
      return;
    }
    std::vector<uint8_t> found(static_cast<size_t>(c.expected.spec.bytes()));
    outs[0].copy_to_host(found.data());
    std::vector<std::string> bad = mismatches(c.expected, found, c.tolerance);
    if (!bad.empty()) {
      std::string lines;
      for (const std::string& line : bad) lines += "\n  " + line;
      ADD_FAILURE() << describe(c) << "\n  on " << device.str() << ", " << mode_str(mode) << ":" << lines;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << describe(c) << "\n  on " << device.str() << ", " << mode_str(mode)
                  << " threw: " << e.what();
  }
}

std::vector<std::string> table_names() {
  std::vector<std::string> names;
  for (const auto& [name, build] : op_table()) names.push_back(name);
  return names;
}

std::set<std::string, std::less<>> case_ops() {
  std::set<std::string, std::less<>> ops;
  for (const Case& c : reference_cases()) ops.insert(c.op);
  return ops;
}

TEST(ConformanceCatalogue, EveryOpHasACase) {
  auto ops = case_ops();
  for (int i = 0; i < kOpCount; ++i) {
    auto op = static_cast<Op>(i);
    if (op == Op::Parameter) continue;  // every case's inputs are parameters
    if (op_family(op) == OpFamily::Loop) continue;  // loops have suites of their own (loop_test.cpp)
    if (op == Op::Result) continue;                 // read by every case of qr, lu and eigh
    EXPECT_TRUE(ops.contains(op_name(op)))
        << "op " << op_name(op)
        << " of ops/op_list.def has no conformance case: add cases to its family in"
           " tests/conformance/reference/";
  }
}

TEST(ConformanceCatalogue, EveryOpHasABuilder) {
  for (int i = 0; i < kOpCount; ++i) {
    auto op = static_cast<Op>(i);
    if (op == Op::Parameter || op == Op::Result || op_family(op) == OpFamily::Loop) continue;
    EXPECT_TRUE(op_table().contains(op_name(op)))
        << "op " << op_name(op)
        << " of ops/op_list.def is missing from the conformance op table (op_table.cpp)";
  }
}

TEST(ConformanceCatalogue, EveryCaseHasABuilder) {
  for (const Case& c : reference_cases())
    EXPECT_TRUE(op_table().contains(c.op))
        << "case '" << c.name << "' names op " << c.op << ", which op_table.cpp lacks";
}

TEST(ConformanceCatalogue, HostIsAmongTheDevices) {
  bool host_found = false;
  for (const Device& d : all_devices()) host_found = host_found || d.platform() == "host";
  EXPECT_TRUE(host_found) << "platforms() must always list the host";
}

class OpConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OpConformance, MatchesNumpyOnEveryDevice) {
  const Builder& build = op_table().find(GetParam())->second;
  std::vector<Device> devices = all_devices();
  size_t count = 0;
  for (const Device& device : devices) {
    std::vector<std::string> skipped;
    for (const Case& c : reference_cases()) {
      if (c.op != GetParam()) continue;
      ++count;
      for (InputMode mode : {InputMode::Parameters, InputMode::Constants})
        run_case(c, build, device, mode, skipped);
    }
    for (const std::string& s : skipped)
      std::cout << "[ skipped  ] " << device.str() << " lacks " << s << "\n";
  }
  EXPECT_GT(count, 0u) << "no conformance case exercises " << GetParam()
                       << ": add cases to its family in tests/conformance/reference/";
}

INSTANTIATE_TEST_SUITE_P(Catalogue, OpConformance, ::testing::ValuesIn(table_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace sluice::conformance
