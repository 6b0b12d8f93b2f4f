// .npy files: save and load through the wire's header code, and numpy's own
// files both ways.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <sluice/io/npy.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Npy, SaveThenLoadKeepsEveryDtypeAndShape) {
  test::TempDir dir;
  uint32_t seed = 0;
  for (const Spec& spec : test::round_trip_specs()) {
    Tensor t = test::random_tensor(spec, ++seed);
    std::string path = dir.path() + "/t.npy";
    npy::save(path, t);
    EXPECT_TRUE(test::identical(npy::load(path), t)) << spec.str();
  }
}

TEST(Npy, NumpyReadsOurFilesAndWeReadNumpys) {
  std::string python = test::python_with_numpy_and_zmq();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  test::TempDir dir;
  npy::save(dir.path() + "/ours.npy", tensor<float>({1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f}, Shape{2, 3}));
  // numpy checks our file, and writes one for us: big enough for a version
  // 2.0 header (more than 64 KiB of dict), and a plain one.
  std::string script = R"(
import sys, numpy as np
d = sys.argv[1]
a = np.load(d + "/ours.npy")
assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)
assert (a == np.array([[1.5, -2, 3.25], [4, 5, 6]], np.float32)).all(), a
np.save(d + "/theirs.npy", np.arange(12, dtype=np.int64).reshape(3, 4) * 7)
np.save(d + "/bools.npy", np.array([True, False, True]))
)";
  write_file(dir.path() + "/check.py", script);
  ASSERT_EQ(std::system((python + " " + dir.path() + "/check.py " + dir.path()).c_str()), 0)
      << "numpy rejected our .npy file (see its output above)";
  Tensor theirs = npy::load(dir.path() + "/theirs.npy");
  ASSERT_EQ(theirs.spec(), s64({3, 4}));
  std::vector<int64_t> values = theirs.to_vector<int64_t>();
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(values[static_cast<size_t>(i)], i * 7) << "element " << i;
  Tensor bools = npy::load(dir.path() + "/bools.npy");
  ASSERT_EQ(bools.spec(), pred({3}));
  const auto* b = static_cast<const uint8_t*>(bools.host_data());
  EXPECT_EQ(std::vector<uint8_t>(b, b + 3), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Npy, ReadsVersion2Headers) {
  test::TempDir dir;
  // A version 2.0 header: 4-byte length, otherwise the same dict.
  std::string dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
  dict.append(64 - (12 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string file = std::string("\x93NUMPY\x02\x00", 8) + static_cast<char>(dict.size()) + std::string(3, '\0') + dict +
                     std::string("\x01\x00\xff\xff", 4);
  write_file(dir.path() + "/v2.npy", file);
  Tensor t = npy::load(dir.path() + "/v2.npy");
  EXPECT_EQ(t.to_vector<int16_t>(), (std::vector<int16_t>{1, -1}));
}

TEST(Npy, RejectsBadFilesWithAWireErrorNamingThem) {
  test::TempDir dir;
  std::string path = dir.path() + "/t.npy";
  npy::save(path, test::random_tensor(f32({8}), 1));
  std::string good = read_file(path);
  auto rejects = [&](const std::string& bytes, const std::string& reason, int64_t max_bytes = int64_t{1} << 34) {
    write_file(path, bytes);
    try {
      npy::load(path, max_bytes);
      ADD_FAILURE() << reason << ": accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << "names the file: " << e.what();
    }
  };
  rejects(good.substr(0, good.size() - 1), "data: expected 32 bytes for f32[8], found 31");
  rejects(good + "x", "data: expected 32 bytes for f32[8], found 33");
  rejects(good.substr(0, 20), "header claims");
  rejects("not a numpy file", "magic");
  rejects(good, "above the limit", 16);
  EXPECT_THROW(npy::load(dir.path() + "/missing.npy"), WireError);
  EXPECT_THROW(npy::save(dir.path() + "/no/such/dir/t.npy", test::random_tensor(f32({1}), 1)), WireError);
}

}  // namespace
}  // namespace sluice
