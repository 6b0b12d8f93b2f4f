// The CUDA backend's parts that need no GPU: the caching allocator's policy
// on a fake device memory, launch geometry, the capability table and what
// compile refuses through it, the text of IPC handles.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_capabilities.h>
#include <sluice/devices/cuda/cuda_ipc.h>
#include <sluice/devices/cuda/device_allocator.h>
#include <sluice/devices/cuda/launch_geometry.h>
#include <sluice/ops/ops.h>

namespace sluice::cuda {
namespace {

// Device memory of `total` bytes that hands out fake addresses and records
// what is reserved; it refuses what would pass `capacity` (what the device
// really has free, below the total when another process holds some).
class FakeMemory final : public DeviceMemory {
 public:
  explicit FakeMemory(size_t total, size_t capacity = ~size_t{0}) : total_(total), capacity_(capacity) {}
  void* reserve(size_t bytes) override {
    if (held_ + bytes > std::min(total_, capacity_)) return nullptr;
    void* p = reinterpret_cast<void*>(next_);
    next_ += (bytes + 0xfffff) / 0x100000 * 0x100000 + 0x100000;  // regions never touch
    regions_[p] = bytes;
    held_ += bytes;
    ++reserves_;
    return p;
  }
  void release(void* region) override {
    held_ -= regions_.at(region);
    regions_.erase(region);
    ++releases_;
  }
  size_t total() const override { return total_; }

  size_t held_ = 0;
  int reserves_ = 0, releases_ = 0;
  std::map<void*, size_t> regions_;

 private:
  size_t total_, capacity_;
  uintptr_t next_ = 0x7f0000000000;
};

constexpr size_t kMiB = size_t{1} << 20;

TEST(CudaAllocator, PreallocateReservesTheFractionOnceAndCarvesBuffersFromIt) {
  FakeMemory memory(1000 * kMiB);
  DeviceAllocator a(memory, 0.5, /*preallocate=*/true, "cuda:0");
  EXPECT_EQ(memory.reserves_, 1) << "one region, reserved when the allocator starts";
  EXPECT_EQ(memory.held_, 500 * kMiB);
  void* p = a.allocate(100);
  void* q = a.allocate(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % DeviceAllocator::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % DeviceAllocator::kAlignment, 0u);
  EXPECT_EQ(static_cast<char*>(q) - static_cast<char*>(p), 256) << "best fit from the front, 256-byte units";
  EXPECT_EQ(a.stats().in_use, 256u + 1024u);
  a.free(p);
  a.free(q);
  EXPECT_EQ(a.stats().in_use, 0u);
  EXPECT_EQ(a.stats().largest_free, 500 * kMiB) << "freed buffers merge back into one block";
  EXPECT_EQ(memory.reserves_, 1) << "nothing more is taken from the device";
}

TEST(CudaAllocator, APreallocatedLimitIsNeverPassed) {
  FakeMemory memory(100 * kMiB);
  DeviceAllocator a(memory, 0.5, true, "cuda:0");
  void* big = a.allocate(40 * kMiB);
  try {
    a.allocate(20 * kMiB);
    FAIL() << "a request past memory_fraction's limit was granted";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda:0"), std::string::npos) << what;
    EXPECT_NE(what.find("20971520 bytes"), std::string::npos) << "names the request: " << what;
    EXPECT_NE(what.find("50.0 MiB"), std::string::npos) << "names the limit: " << what;
    EXPECT_NE(what.find("40.0 MiB in use"), std::string::npos) << "says what is in use: " << what;
  }
  a.free(big);
  EXPECT_NO_THROW(a.free(a.allocate(20 * kMiB))) << "the memory is there again once freed";
}

TEST(CudaAllocator, PreallocatingMoreThanTheDeviceHasFailsAtOnce) {
  FakeMemory memory(100 * kMiB, /*capacity=*/30 * kMiB);  // another process holds the rest
  try {
    DeviceAllocator a(memory, 0.9, true, "cuda:1");
    FAIL() << "the allocator started without its memory";
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("preallocate"), std::string::npos) << what;
    EXPECT_NE(what.find("memory_fraction"), std::string::npos) << what;
  }
}

TEST(CudaAllocator, OnDemandGrowsInRegionsAndKeepsFreedBuffersForReuse) {
  FakeMemory memory(1000 * kMiB);
  DeviceAllocator a(memory, 0.9, /*preallocate=*/false, "cuda:0");
  EXPECT_EQ(memory.reserves_, 0) << "nothing is reserved before a buffer is asked for";
  std::vector<void*> small;
  for (int i = 0; i < 8; ++i) small.push_back(a.allocate(100 * 1024));
  EXPECT_EQ(memory.reserves_, 1) << "small buffers share one 2 MiB region";
  for (void* p : small) a.free(p);
  void* again = a.allocate(100 * 1024);
  EXPECT_EQ(again, small.front()) << "a freed buffer is handed out again";
  EXPECT_EQ(memory.reserves_, 1);
  void* large = a.allocate(50 * kMiB);
  EXPECT_EQ(memory.reserves_, 2) << "a large buffer gets a region of its own";
  a.free(large);
  a.free(again);
  EXPECT_EQ(memory.releases_, 0) << "freed regions are kept";
  EXPECT_EQ(a.stats().reserved, 52 * kMiB);
}

TEST(CudaAllocator, OnDemandGivesBackUnusedRegionsBeforePassingTheLimit) {
  FakeMemory memory(100 * kMiB);
  DeviceAllocator a(memory, 0.8, false, "cuda:0");  // a limit of 80 MiB
  void* p = a.allocate(50 * kMiB);
  a.free(p);  // kept: 50 MiB reserved, none in use
  void* q = a.allocate(60 * kMiB);  // 50 + 60 would pass 80: the unused region goes back first
  EXPECT_EQ(memory.releases_, 1);
  EXPECT_LE(a.stats().reserved, 80 * kMiB);
  EXPECT_THROW(a.allocate(30 * kMiB), DeviceError) << "60 in use: 30 more passes the limit";
  a.free(q);
  EXPECT_EQ(a.stats().in_use, 0u);
}

TEST(CudaAllocator, FreeingWhatItDidNotHandOutIsAnError) {
  FakeMemory memory(100 * kMiB);
  DeviceAllocator a(memory, 0.5, true, "cuda:0");
  int x = 0;
  EXPECT_THROW(a.free(&x), DeviceError);
  void* p = a.allocate(10);
  a.free(p);
  EXPECT_THROW(a.free(p), DeviceError) << "a double free";
}

TEST(CudaAllocator, ABuffersRegionIsWhatAnotherProcessOpens) {
  FakeMemory memory(size_t{1} << 30);
  DeviceAllocator a(memory, 0.5, false, "cuda:0");
  void* first = a.allocate(1000);
  void* second = a.allocate(5000);
  const DeviceAllocator::Span region = a.region_of(second);
  ASSERT_NE(region.begin, nullptr);
  EXPECT_EQ(region.begin, a.region_of(first).begin) << "two small buffers in one region";
  EXPECT_LE(region.begin, static_cast<char*>(second));
  EXPECT_LE(static_cast<char*>(second) + 5000, region.begin + region.bytes);
  EXPECT_EQ(a.region_of(static_cast<char*>(second) + 256).begin, nullptr) << "inside a buffer is no buffer";
  a.free(second);
  EXPECT_EQ(a.region_of(second).begin, nullptr) << "a freed buffer has no region";
  a.free(first);
}

TEST(CudaIpcHandle, TextRoundTripsAndMalformedOnesAreRefused) {
  CudaIpcHandle h;
  for (size_t i = 0; i < h.device.size(); ++i) h.device[i] = static_cast<uint8_t>(i * 17);
  for (size_t i = 0; i < h.memory.size(); ++i) h.memory[i] = static_cast<uint8_t>(255 - i);
  h.region = 2 << 20;
  h.offset = 4096;
  h.bytes = 65536;
  h.ticket = SharedHandle{4242, 17, 0x9f3c00aa11223344ull, 8192, 112, 3};
  const std::string text = h.str();
  EXPECT_TRUE(text.starts_with("sluice-cuda-ipc:1:device=00112233")) << text;
  EXPECT_TRUE(text.ends_with(":region=2097152:offset=4096:bytes=65536:ticket=" + h.ticket.str())) << text;
  EXPECT_EQ(CudaIpcHandle::parse(text), h);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  for (const std::string& bad :
       {std::string(), text.substr(0, text.size() - 1), with("cuda-ipc:1", "cuda-ipc:2"),
        with("device=00", "device=0"), with("device=00", "device=zz"), with(":offset=4096", ":offset=-1"),
        with(":offset=4096", ""), with(":bytes=65536", ":bytes=2097152"),  // past the region
        with(":offset=4096", ":offset=2097153"), with("ticket=sluice-shm", "ticket=shm"), text + ":"})
    EXPECT_THROW(CudaIpcHandle::parse(bad), ValueError) << bad;
}

TEST(CudaLaunchGeometry, LoopsRunAThreadPerItemUpToTwoWavesOfBlocks) {
  const Launch small = loop_launch(1000, 132);
  EXPECT_EQ(small.block, kBlockThreads);
  EXPECT_EQ(small.grid, 4u) << "a thread per item";
  EXPECT_EQ(loop_launch(0, 132).grid, 1u) << "an empty loop still launches a valid grid";
  EXPECT_EQ(loop_launch(int64_t{1} << 28, 132).grid, 132u * 16u) << "16 blocks per multiprocessor, threads looping";
  EXPECT_EQ(loop_launch(int64_t{1} << 40, 2'000'000'000).grid, 2147483647u) << "CUDA's grid limit";
}

TEST(CudaLaunchGeometry, ReductionsPickABlockOrAThreadPerResult) {
  // Many elements per result, contiguous: a block each.
  EXPECT_TRUE(reduce_launch(16, 1 << 20, true, 132).block_per_output);
  EXPECT_EQ(reduce_launch(16, 1 << 20, true, 132).launch.grid, 16u);
  // Few elements per result: a thread each.
  const ReduceLaunch few = reduce_launch(1 << 20, 8, true, 132);
  EXPECT_FALSE(few.block_per_output);
  EXPECT_EQ(few.launch.grid, 132u * 16u);
  // Strided elements (a reduction over the outer axis) with results enough
  // to keep the GPU busy: a thread each, so neighbouring threads read
  // neighbouring elements.
  EXPECT_FALSE(reduce_launch(1 << 20, 1024, false, 132).block_per_output);
  // ... but too few results: blocks, or most of the GPU would idle.
  EXPECT_TRUE(reduce_launch(4, 1 << 20, false, 132).block_per_output);
}

TEST(CudaLaunchGeometry, BlockLoopsRunABlockPerItemUpToSixteenPerMultiprocessor) {
  EXPECT_EQ(block_loop_launch(100, 132).grid, 100u);
  EXPECT_EQ(block_loop_launch(100, 132).block, kBlockThreads);
  EXPECT_EQ(block_loop_launch(0, 132).grid, 1u);
  EXPECT_EQ(block_loop_launch(1 << 20, 132).grid, 132u * 16u);
}

TEST(CudaLaunchGeometry, WindowsTakeTilesOnlyWhereALinesWindowsShareInputs) {
  // window_sum's bench: 64M windows of 8, stride 1: a full tile.
  EXPECT_EQ(window_tile(int64_t{64} << 20, 8, 1), kWindowTile);
  // A line shorter than a tile: one tile of the whole line.
  EXPECT_EQ(window_tile(300, 8, 1), 300);
  // Fewer windows than a block's threads, windows that do not overlap
  // (stride at least the window), or no stride: a thread per window.
  EXPECT_EQ(window_tile(255, 8, 1), 0);
  EXPECT_EQ(window_tile(4096, 4, 4), 0);
  EXPECT_EQ(window_tile(4096, 4, 8), 0);
  EXPECT_EQ(window_tile(4096, 4, 0), 0);
  // A wide window: the tile shrinks so its span fits, down to a block.
  EXPECT_EQ(window_tile(4096, 1024, 1), kWindowTile);
  EXPECT_EQ(window_tile(4096, 1500, 1), kWindowSpan - 1500 + 1);
  EXPECT_EQ(window_tile(4096, 1792, 1), int64_t{kBlockThreads} + 1);
  EXPECT_EQ(window_tile(4096, 1800, 1), 0);
  EXPECT_EQ(window_tile(4096, kWindowSpan + 1, 1), 0);
  // A stride of 2 spans twice the windows.
  EXPECT_EQ(window_tile(4096, 8, 2), (kWindowSpan - 8) / 2 + 1);
  for (int64_t windows : {256, 1000, 5000})
    for (int64_t window : {2, 8, 100, 1500})
      for (int64_t stride : {1, 2, 3}) {
        const int64_t tile = window_tile(windows, window, stride);
        if (tile == 0) continue;
        EXPECT_LE((tile - 1) * stride + window, kWindowSpan) << windows << " " << window << " " << stride;
        EXPECT_LE(tile, std::min(windows, kWindowTile));
      }
}

TEST(CudaCapabilities, TheWholeCatalogueIsClaimedInEveryDtype) {
  const Capabilities caps = cuda_capabilities();
  for (Op op : {Op::Add, Op::Tanh, Op::AsType, Op::Transpose, Op::Sum, Op::Argmax, Op::Dot, Op::Fft, Op::Iota,
                Op::Gather, Op::IndexedAdd, Op::WindowSum, Op::WindowScatterMax, Op::CumulativeSum, Op::Sort, Op::Argsort,
                Op::ScanLoop, Op::WhileLoop, Op::Result, Op::Conv,
                Op::Cholesky, Op::Qr, Op::Eigh})
    EXPECT_TRUE(caps.supports(op)) << op_name(op);
  EXPECT_EQ(caps.dtypes.size(), static_cast<size_t>(kDTypeCount));
  EXPECT_TRUE(caps.supports(Op::Tanh, DType::C64));
  EXPECT_TRUE(caps.supports(Op::Asinh, DType::C64));
  EXPECT_TRUE(caps.declined.empty()) << "no op is declined for a dtype";
  EXPECT_EQ(caps.ops.size(), static_cast<size_t>(kOpCount));
  EXPECT_TRUE(caps.supports(Op::Asinh, DType::F32));
}

TEST(CudaCapabilities, DotsPastCublassThirtyTwoBitSizesAreDeclined) {
  const Function small = trace({f32({4, 3}), f32({3, 5})}, [](Expr a, Expr b) { return dot(a, b); });
  EXPECT_FALSE(cuda_declines(*small.outputs().front().node()));
  const Function huge =
      trace({f32({int64_t{1} << 32, 1}), f32({1, 1})}, [](Expr a, Expr b) { return dot(a, b); });
  const auto why = cuda_declines(*huge.outputs().front().node());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cuBLAS"), std::string::npos) << *why;
}

}  // namespace
}  // namespace sluice::cuda
