// Tensor::to_pointer / from_pointer in one process, and the shared memory
// behind ipc handles (devices/shared_memory.h). Across processes:
// tests/io/shared_memory_test.cpp.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/base/error.h>
#include <sluice/ops/ops.h>

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

TEST(TensorPointer, DeviceTensorsHaveNoIpcHandle) {
  for (const std::string& platform : platforms()) {
    if (platform == "host") continue;
    Tensor t = test::random_tensor({DType::F32, Shape{4}}, 1).to(client(platform).default_device());
    EXPECT_THROW(t.to_pointer({.mode = PointerMode::Ipc}), DeviceError);
    EXPECT_NE(t.to_pointer().address, nullptr);
  }
}

}  // namespace
}  // namespace sluice
