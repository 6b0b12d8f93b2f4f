// Tensor::to_pointer / from_pointer in one process, and the shared memory
// behind ipc handles (devices/shared_memory.h). Across processes:
// tests/io/shared_memory_test.cpp; a device's memory (a GPU's) here, opened by
// a child process where there is a device.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/base/error.h>
#include <sluice/ops/ops.h>

#include "tests/devices/run_in_child.h"
#include "tests/devices/tensor_bytes.h"

namespace sluice {
namespace {

TEST(TensorPointer, LocalIsTheTensorsOwnMemory) {
  for (const Spec& spec : test::round_trip_specs()) {
    SCOPED_TRACE(spec.str());
    Tensor t = test::random_tensor(spec, 7);
    TensorPointer p = t.to_pointer();
    EXPECT_EQ(p.mode, PointerMode::Local);
    EXPECT_EQ(p.address, t.host_data());
    EXPECT_EQ(p.bytes, static_cast<size_t>(spec.bytes()));
    Tensor back = from_pointer(p, spec);
    EXPECT_EQ(back.host_data(), t.host_data()) << "from_pointer copied";
    EXPECT_TRUE(test::identical(back, t));
  }
}

TEST(TensorPointer, IpcRoundTripsEveryDtypeAndRank) {
  for (const Spec& spec : test::round_trip_specs()) {
    SCOPED_TRACE(spec.str());
    Tensor t = test::random_tensor(spec, 11);
    TensorPointer p = t.to_pointer({.mode = PointerMode::Ipc});
    EXPECT_EQ(p.mode, PointerMode::Ipc);
    EXPECT_TRUE(p.handle.starts_with("sluice-shm:1:pid=")) << p.handle;
    Tensor back = from_pointer(p, spec);
    EXPECT_TRUE(test::identical(back, t));
  }
}

TEST(TensorPointer, IpcSharesATensorInSharedMemoryWithoutCopying) {
  const Spec spec{DType::F32, Shape{1024}};
  Tensor shared = test::random_tensor(spec, 3).to_shared();
  EXPECT_EQ(shared.to_shared().host_data(), shared.host_data()) << "to_shared of a shared tensor copied it";
  TensorPointer p = shared.to_pointer({.mode = PointerMode::Ipc, .require_shared = true});
  Tensor view = from_pointer(p, spec);
  // A second mapping of the same memory, read-only: a write to the original
  // shows through it.
  EXPECT_TRUE(view.buffer()->read_only);
  const_cast<float*>(shared.data<float>().data())[17] = 42.5f;
  EXPECT_EQ(view.data<float>()[17], 42.5f);
  EXPECT_THROW(test::random_tensor(spec, 3).to_pointer({.mode = PointerMode::Ipc, .require_shared = true}), DeviceError);
}

// A tensor mapped read-only from shared memory is never donated: the run
// computes into memory of its own, and the argument stays valid and whole
// (reusing it would write into what other processes read, or fault).
TEST(TensorPointer, AReadOnlyTensorAskedToBeDonatedIsLeftAsItIs) {
  const Spec spec{DType::F32, Shape{256}};
  std::vector<float> values(256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i);
  Tensor shared = tensor(values, Shape{256}).to_shared();
  Tensor view = from_pointer(shared.to_pointer({.mode = PointerMode::Ipc, .require_shared = true}), spec);
  ASSERT_TRUE(view.buffer()->read_only);
  Executable twice = compile(trace({spec}, [](Expr x) { return x * 2.0f; }), host());
  std::vector<Tensor> out = twice.run({view}, {.donate = {0}});
  EXPECT_NE(out[0].host_data(), view.host_data());
  EXPECT_EQ(view.buffer()->state.load(), Buffer::State::Live);
  EXPECT_EQ(view.to_vector<float>(), values) << "the argument was written";
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(out[0].data<float>()[i], 2.0f * values[i]) << i;
  EXPECT_THROW(twice.run({view}, {.donate = {0, 0}}), ValueError) << "listed twice is still an error";
}

TEST(TensorPointer, OutputsOfARunInSharedMemory) {
  Function f = trace({Spec{DType::F32, Shape{256}}}, [](Expr x) { return x * 2.0; });
  Executable exe = compile(f);
  Tensor in = test::random_tensor({DType::F32, Shape{256}}, 5);
  Tensor shared = exe.run({in}, {.output_memory = OutputMemory::Shared})[0];
  Tensor plain = exe.run({in})[0];
  EXPECT_TRUE(find_shared(shared.host_data(), 1024).has_value());
  EXPECT_FALSE(find_shared(plain.host_data(), 1024).has_value());
  EXPECT_TRUE(test::identical(shared, plain));
  EXPECT_NO_THROW(shared.to_pointer({.mode = PointerMode::Ipc, .require_shared = true}));
}

TEST(TensorPointer, HandleTextRoundTripsAndMalformedOnesAreRefused) {
  SharedHandle h{4242, 17, 0x9f3c00aa11223344ull, 4096, 65536, 3};
  EXPECT_EQ(h.str(), "sluice-shm:1:pid=4242:fd=17:segment=9f3c00aa11223344:offset=4096:bytes=65536:generation=3");
  EXPECT_EQ(SharedHandle::parse(h.str()), h);
  for (const char* bad : {"", "sluice-shm:2:pid=1:fd=2:segment=3:offset=4:bytes=5:generation=6",
                          "sluice-shm:1:pid=1:fd=2:segment=3:offset=4:bytes=5",
                          "sluice-shm:1:pid=1:fd=2:segment=3:offset=4:bytes=5:generation=6:",
                          "sluice-shm:1:pid=x:fd=2:segment=3:offset=4:bytes=5:generation=6",
                          "sluice-shm:1:fd=2:pid=1:segment=3:offset=4:bytes=5:generation=6",
                          "sluice-shm:1:pid=99999999999:fd=2:segment=3:offset=4:bytes=5:generation=6"})
    EXPECT_THROW(SharedHandle::parse(bad), ValueError) << bad;
  EXPECT_THROW(from_pointer({.mode = PointerMode::Ipc, .handle = "not a handle"}, Spec{DType::F32, Shape{1}}),
               ValueError);
}

TEST(TensorPointer, StaleAndWrongHandlesAreRefused) {
  std::shared_ptr<void> block = shared_allocate(4096);
  SharedHandle h = *find_shared(block.get(), 4096);
  EXPECT_NO_THROW(map_shared(h));
  SharedHandle other_segment = h;
  other_segment.segment ^= 1;
  EXPECT_THROW(map_shared(other_segment), DeviceError);
  SharedHandle too_long = h;
  too_long.bytes = 1 << 20;
  EXPECT_THROW(map_shared(too_long), DeviceError);
  SharedHandle no_process = h;
  no_process.fd = 999999;
  EXPECT_THROW(map_shared(no_process), DeviceError);
  // The slot goes back to the pool and out again: the old handle is stale.
  void* const address = block.get();
  block.reset();
  EXPECT_FALSE(find_shared(address, 1).has_value()) << "a slot back in the pool still has a handle";
  std::shared_ptr<void> again = shared_allocate(4096);
  ASSERT_EQ(again.get(), address) << "the pool did not hand the same slot out again";
  try {
    map_shared(h);
    FAIL() << "a stale handle was mapped";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("stale"), std::string::npos) << e.what();
  }
}

// A process of this user may open a segment (that is how it maps it), so
// it could cut it short under a reader, which would die of SIGBUS: segments
// are sealed at their size, and a handle to an unsealed file is refused.
TEST(TensorPointer, SegmentsCannotBeResizedAndUnsealedOnesAreRefused) {
  std::shared_ptr<void> block = shared_allocate(4096);
  SharedHandle h = *find_shared(block.get(), 4096);
  const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_NE(::ftruncate(fd, 0), 0) << "a segment was shrunk to nothing";
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(fd, st.st_size * 2), 0) << "a segment grew";
  EXPECT_NE(::fcntl(fd, F_ADD_SEALS, 0), 0) << "seals can be changed still (F_SEAL_SEAL missing)";

  // The same first page in a memfd left unsealed: a forgery by a process
  // that could shrink it later.
  const int forged = ::memfd_create("forged", MFD_CLOEXEC);
  ASSERT_GE(forged, 0);
  ASSERT_EQ(::ftruncate(forged, st.st_size), 0);
  std::vector<char> page(4096);
  ASSERT_EQ(::pread(fd, page.data(), page.size(), 0), static_cast<ssize_t>(page.size()));
  ASSERT_EQ(::pwrite(forged, page.data(), page.size(), 0), static_cast<ssize_t>(page.size()));
  SharedHandle unsealed = h;
  unsealed.fd = static_cast<uint32_t>(forged);
  try {
    map_shared(unsealed);
    ADD_FAILURE() << "an unsealed segment was mapped";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("seals"), std::string::npos) << e.what();
  }
  ::close(forged);
  ::close(fd);
  EXPECT_NO_THROW(map_shared(h)) << "the real segment stays usable";
}

// ---- a device's memory opened by another process (on a GPU: CUDA IPC)

constexpr const char* kHandleVariable = "SLUICE_TEST_IPC_HANDLE";
constexpr const char* kBytesVariable = "SLUICE_TEST_IPC_BYTES";  // where the child writes what it read

// Run by the test below in a process of its own: opens the handle and
// writes the bytes it reads to a file.
TEST(TensorPointerChild, OpensADeviceHandle) {
  const char* handle = std::getenv(kHandleVariable);
  const char* out = std::getenv(kBytesVariable);
  if (!handle || !out) GTEST_SKIP() << "run by TensorPointer.DeviceTensorsOpenInAnotherProcessWithoutACopy";
  // The device is shared with the parent, which reserved most of its
  // memory: this process takes what it needs as it goes.
  const std::string_view text = handle, prefix = "sluice-";
  client(std::string(text.substr(prefix.size(), text.find("-ipc:") - prefix.size())), {.preallocate = false});
  const Spec spec{DType::F32, Shape{1000}};
  Tensor t = from_pointer({.mode = PointerMode::Ipc, .handle = handle}, spec);
  EXPECT_FALSE(t.device().host_memory()) << "opened on " << t.device().str();
  EXPECT_TRUE(t.buffer()->read_only);
  std::vector<uint8_t> bytes(static_cast<size_t>(spec.bytes()));
  t.copy_to_host(bytes.data());
  std::ofstream(out, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Runs this program's TensorPointerChild.OpensADeviceHandle with `handle`;
// returns the bytes it read, empty when it failed (its output in the failure).
std::vector<uint8_t> open_in_child(const std::string& handle) {
  const std::string bytes_file = ::testing::TempDir() + "ipc_child_" + std::to_string(::getpid()) + ".bytes";
  const std::string log = bytes_file + ".log";
  const int status = testing::run_in_child(
      "TensorPointerChild.OpensADeviceHandle",
      {std::string(kHandleVariable) + "=" + handle, std::string(kBytesVariable) + "=" + bytes_file}, log);
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  };
  if (status != 0) {
    const std::vector<uint8_t> text = read(log);
    ADD_FAILURE() << "the child ended with " << status << "; its output:\n"
                  << std::string(text.begin(), text.end());
    return {};
  }
  return read(bytes_file);
}

TEST(TensorPointer, DeviceTensorsOpenInAnotherProcessWithoutACopy) {
  std::vector<std::string> devices;
  for (const std::string& platform : platforms())
    if (platform != "host") devices.push_back(platform);
  if (devices.empty())
    GTEST_SKIP() << "no device but the host here (scripts/gpu-check runs this where a GPU is)";
  const Spec spec{DType::F32, Shape{1000}};
  for (const std::string& platform : devices) {
    SCOPED_TRACE(platform);
    const Tensor host_values = test::random_tensor(spec, 5);
    std::vector<uint8_t> want(static_cast<size_t>(spec.bytes()));
    host_values.copy_to_host(want.data());
    Tensor t = host_values.to(client(platform).default_device());
    TensorPointer p = t.to_pointer({.mode = PointerMode::Ipc});
    EXPECT_EQ(p.mode, PointerMode::Ipc);
    EXPECT_EQ(p.device, t.device());
    EXPECT_TRUE(p.handle.starts_with("sluice-" + platform + "-ipc:1:")) << p.handle;

    // Another process on the same device reads the same bytes.
    EXPECT_EQ(open_in_child(p.handle), want);
    // This process too, on the device and without a copy.
    Tensor here = from_pointer(p, spec);
    EXPECT_EQ(here.device(), t.device());
    EXPECT_EQ(here.buffer()->data, t.buffer()->data) << "from_pointer copied";
    EXPECT_TRUE(test::identical(here, t));

    // Bounds: more than the handle holds.
    EXPECT_THROW(from_pointer(p, Spec{DType::F32, Shape{1001}}), ValueError);
    // A handle its ticket does not vouch for: another offset in the same region.
    const std::string offset_field = ":offset=";
    std::string moved = p.handle;
    const size_t at = moved.find(offset_field) + offset_field.size();
    moved.insert(at, "1");
    EXPECT_ANY_THROW(from_pointer({.mode = PointerMode::Ipc, .handle = moved}, spec)) << moved;

    // The owner lets go and its ticket is handed out again: the handle is stale.
    const std::string handle = p.handle;
    here = Tensor();
    p = TensorPointer();
    t = Tensor();
    std::vector<std::shared_ptr<void>> reuse;
    for (int i = 0; i < 64; ++i) reuse.push_back(shared_allocate(112));
    try {
      from_pointer({.mode = PointerMode::Ipc, .handle = handle}, spec);
      ADD_FAILURE() << "a stale handle was opened";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("stale"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace sluice
