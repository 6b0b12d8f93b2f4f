// The stream contract on every device this machine has (the host always, a
// GPU where there is one): chunks come from host memory, the accumulator
// stays on the stream's device between chunks, outputs come back in order
// from that device, and a function the device lacks fails before anything runs.

#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include <sluice/stream/stream.h>

namespace sluice {
namespace {

std::vector<std::string> devices_here() { return platforms(); }

class StreamOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  Device device() const { return client(GetParam()).default_device(); }
};

// sum(x) + acc, and x * 2 - acc as an output: elementwise, a reduction and
// broadcasting of the accumulator.
auto chunk_fn = [](Expr x, Expr acc) { return tuple(x * 2.0f - acc, acc + sum(x)); };

std::vector<float> chunk_values(int i, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<float>((i + k) % 7) - 3.0f;
  return v;
}

TEST_P(StreamOnDevice, TheAccumulatorStaysOnTheDeviceAndOutputsComeInOrder) {
  constexpr int64_t n = 4096;
  constexpr int chunks = 40;
  Stream s = stream(chunk_fn, {f32({n})}, {scalar(0.0f)}, device());
  for (int i = 0; i < chunks; ++i) s.send(tensor(chunk_values(i, n), Shape{n}));  // host chunks, uploaded
  float acc = 0;
  for (int i = 0; i < chunks; ++i) {
    Tensors out = s.recv();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].device(), device()) << "outputs stay on the stream's device";
    const std::vector<float> x = chunk_values(i, n), y = out[0].to_vector<float>();
    for (size_t k = 0; k < x.size(); k += 511) ASSERT_FLOAT_EQ(y[k], 2 * x[k] - acc) << "chunk " << i << ", element " << k;
    acc += std::accumulate(x.begin(), x.end(), 0.0f);
  }
  Tensors final_acc = s.done();
  EXPECT_EQ(final_acc[0].device(), device()) << "the accumulator never left the device";
  EXPECT_NEAR(final_acc[0].to_vector<float>()[0], acc, 1e-3 * std::max(1.0f, std::abs(acc)));
}

TEST_P(StreamOnDevice, ChunksAlreadyOnTheDeviceAreNotCopied) {
  Stream s = stream(chunk_fn, {f32({3})}, {scalar(1.0f)}, device());
  Tensor on_device = tensor<float>({1, 2, 3}, device());
  s.send(on_device);
  EXPECT_EQ(s.recv()[0].to_vector<float>(), (std::vector<float>{1, 3, 5}));
  EXPECT_FLOAT_EQ(s.done()[0].to_vector<float>()[0], 7.0f);
  EXPECT_EQ(on_device.to_vector<float>(), (std::vector<float>{1, 2, 3})) << "the chunk sent is still valid";
}

TEST_P(StreamOnDevice, OtherComputationsRunOnTheDeviceWhileAStreamIsOpen) {
  Stream s = stream(chunk_fn, {f32({2})}, {scalar(0.0f)}, device());
  s.send(tensor<float>({1, 2}));
  const Function f = trace({f32({2})}, [](Expr x) { return x + 1; });
  EXPECT_EQ(compile(f, device()).run({tensor<float>({5, 6}, device())})[0].to_vector<float>(),
            (std::vector<float>{6, 7}));
  s.recv();
  s.done();
}

TEST_P(StreamOnDevice, AFunctionTheDeviceLacksFailsWhenTheStreamOpens) {
  const Capabilities caps = client(GetParam()).capabilities();
  if (caps.supports(Op::Asin, DType::C64)) GTEST_SKIP() << GetParam() << " runs asin of c64: nothing to refuse";
  try {
    stream([](Expr x, Expr acc) { return tuple(asin(x), acc + 1); }, {c64({4})}, {scalar(0.0f)}, device());
    FAIL() << "a stream opened with an op its device lacks";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("op asin on c64 operands is not implemented on backend " + GetParam()),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, StreamOnDevice, ::testing::ValuesIn(devices_here()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace sluice
