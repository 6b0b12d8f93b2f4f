// A same-host channel between two processes on one GPU passes the GPU's
// tensors as device references (WIRE_FORMAT.md, "Device memory"): the
// receiving process's tensors are on its GPU, over the sender's memory, not
// copied through the host. Skipped where there is no GPU (scripts/gpu-check
// runs it where one is); the wire's part is in wire_test.cpp.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <sluice/io/channel.h>
#include "tests/devices/run_in_child.h"
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

constexpr const char* kEndpointVariable = "SLUICE_TEST_DEVICE_CHANNEL";
constexpr const char* kReportVariable = "SLUICE_TEST_DEVICE_CHANNEL_REPORT";
constexpr int kMessages = 40;
constexpr int64_t kFloats = 1 << 16;  // 256 KiB a message: never packed

// Message i's tensor, on the host: i + 0.5 at even places, -i at odd ones.
Tensor values(int i) {
  std::vector<float> v(static_cast<size_t>(kFloats));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = k % 2 == 0 ? static_cast<float>(i) + 0.5f : -static_cast<float>(i);
  return tensor(v, Shape{kFloats});
}

// The child: takes kMessages messages and writes a line per message
// (its platform, whether its tensor came as a reference and is read-only,
// and whether it holds message i's values), then "end".
TEST(DeviceChannelChild, Receives) {
  const char* endpoint = std::getenv(kEndpointVariable);
  const char* report = std::getenv(kReportVariable);
  if (!endpoint || !report) GTEST_SKIP() << "run by DeviceChannel.AGpusTensorsCrossAsDeviceReferences";
  const std::string platform = std::getenv("SLUICE_TEST_DEVICE_PLATFORM");
  // Its client made first, so that the channel names its GPU to the
  // sender; without preallocate: the parent holds most of the GPU.
  client(platform, {.preallocate = false});
  Channel in(Pattern::Pull, std::string("@") + endpoint);
  std::ofstream out(report);
  for (int i = 0; i < kMessages; ++i) {
    wire::Message m = test::next_message(in, "message " + std::to_string(i));
    ASSERT_EQ(m.tensors.size(), 1u);
    const Tensor& t = m.tensors[0];
    out << i << " " << t.device().platform() << " " << m.shared << " " << t.buffer()->read_only << " "
        << test::identical(t.to_host(), values(i)) << "\n";
  }
  EXPECT_EQ(test::next_message(in, "end").header.kind, wire::Kind::EndOfStream);
  out << "end " << in.counters().shared << "\n";
}

TEST(DeviceChannel, AGpusTensorsCrossAsDeviceReferences) {
  std::string platform;
  for (const std::string& p : platforms())
    if (p != "host") platform = p;
  if (platform.empty())
    GTEST_SKIP() << "no device but the host here (scripts/gpu-check runs this where a GPU is)";
  const Device gpu = client(platform).default_device();
  test::TempDir dir;
  const std::string endpoint = dir.path() + "/edge", report = dir.path() + "/report",
                    log = dir.path() + "/log";
  int status = -1;
  std::thread child([&] {
    status = testing::run_in_child(
        "DeviceChannelChild.Receives",
        {std::string(kEndpointVariable) + "=ipc://" + endpoint, std::string(kReportVariable) + "=" + report,
         "SLUICE_TEST_DEVICE_PLATFORM=" + platform},
        log);
  });
  {
    Channel out(Pattern::Push, ">ipc://" + endpoint);
    std::vector<Tensor> sent;  // kept, as a stage's outputs may be, while the child reads them
    for (int i = 0; i < kMessages; ++i) {
      sent.push_back(values(i).to(gpu));
      out.send({sent.back()}, static_cast<uint64_t>(i));
    }
    out.send_end_of_stream(kMessages);
    out.flush(milliseconds(60000));
    EXPECT_EQ(out.counters().shared, static_cast<uint64_t>(kMessages)) << "sent as references";
  }
  child.join();
  std::ifstream in(report);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (status != 0) {
    std::ifstream l(log);
    FAIL() << "the child ended with " << status << ":\n"
           << std::string(std::istreambuf_iterator<char>(l), {});
  }
  std::string expected;
  for (int i = 0; i < kMessages; ++i) expected += std::to_string(i) + " " + platform + " 1 1 1\n";
  EXPECT_EQ(text, expected + "end " + std::to_string(kMessages) + "\n")
      << "each line: message, its tensor's platform, came shared, read-only, the values sent";
}

}  // namespace
}  // namespace sluice
