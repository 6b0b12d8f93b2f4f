// Tensors through the public API: creation, reading, printing, transfers,
// deallocation. Expected values are written out by hand.

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

TEST(Tensor, FromVectorKeepsSpecAndValues) {
  Tensor t = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.spec(), f32({2, 3}));
  EXPECT_EQ(t.device(), host());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto span = t.data<float>();
  ASSERT_EQ(span.size(), 6u);
  EXPECT_EQ(span[5], 6.0f);
}

TEST(Tensor, InitializerListIsRankOne) {
  Tensor t = tensor<int32_t>({7, 8, 9});
  EXPECT_EQ(t.spec(), s32({3}));
  EXPECT_EQ(scalar(2.5).spec(), f64());
}

TEST(Tensor, WrongValueCountIsShapeError) {
  try {
    tensor<float>({1, 2, 3}, {2, 2});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 4 values"), std::string::npos) << e.what();
  }
}

TEST(Tensor, ReadingWithTheWrongTypeIsTypeError) {
  Tensor t = tensor<float>({1, 2});
  EXPECT_THROW(t.data<double>(), TypeError);
  EXPECT_THROW(t.to_vector<int32_t>(), TypeError);
}

TEST(Tensor, BoolValuesArePred) {
  Tensor t = tensor<bool>({true, false, true});
  EXPECT_EQ(t.spec(), pred({3}));
  EXPECT_EQ(t.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(scalar(true).to_vector<uint8_t>(), (std::vector<uint8_t>{1}));
}

TEST(Tensor, IotaOfASpecAloneIsTheTracedOp) {
  // Both headers included (as here): iota(spec) is the op, iota(spec, device) a tensor.
  EXPECT_EQ(iota(s32({3})).node()->op, Op::Iota);
  EXPECT_EQ(iota(s32({3}), host()).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2}));
}

TEST(Tensor, ZerosOnesIota) {
  EXPECT_EQ(zeros(s64({3})).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(ones(f64({2})).to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_EQ(iota(u8({2, 2}), host()).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 2, 3}));
  Tensor h = ones(f16({2}));
  auto bits = h.to_vector<half>();
  EXPECT_EQ(bits[0].bits, 0x3c00) << "1.0 in f16 is 0x3c00";
  EXPECT_THROW(iota(pred({2}), host()), TypeError);
}

TEST(Tensor, WrapHostSharesMemoryWithoutCopying) {
  std::vector<float> mine = {1, 2, 3};
  bool released = false;
  {
    std::shared_ptr<void> owner(nullptr, [&](void*) { released = true; });
    Tensor t = wrap_host(f32({3}), mine.data(), owner);
    EXPECT_EQ(t.data<float>().data(), mine.data()) << "wrap_host must not copy";
    mine[1] = 20;
    EXPECT_EQ(t.to_vector<float>()[1], 20.0f);
    owner.reset();
    EXPECT_FALSE(released) << "the tensor keeps its owner alive";
  }
  EXPECT_TRUE(released) << "the owner is released with the last tensor";
}

TEST(Tensor, ToCopiesAndTransferMoves) {
  Tensor a = tensor<double>({1.5, 2.5});
  Tensor b = a.to(host());
  EXPECT_NE(a.data<double>().data(), b.data<double>().data()) << "to() copies";
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  Tensor alias = a;
  Tensor c = a.transfer(host());
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  EXPECT_FALSE(a) << "a transferred tensor is left empty";
  EXPECT_EQ(alias.to_vector<double>()[0], 1.5) << "a transfer to the same device moves the buffer, it does not free it";
}

TEST(Tensor, DeallocateMakesEveryCopyUnusable) {
  Tensor a = tensor<float>({1, 2});
  Tensor copy = a;
  a.deallocate();
  try {
    copy.to_vector<float>();
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("deallocated"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.deallocate(), DeviceError);
}

TEST(Tensor, PrintsLikeNx) {
  EXPECT_EQ(tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}).str(), "f32[2][3]\n[\n  [1.0, 2.0, 3.0],\n  [4.0, 5.0, 6.0]\n]");
  EXPECT_EQ(scalar<int64_t>(-3).str(), "s64\n-3");
  EXPECT_EQ(tensor<double>({0.5, -0.25}).str(), "f64[2]\n[0.5, -0.25]");
  EXPECT_EQ(tensor<float>({0.1f}).str(), "f32[1]\n[0.1]") << "shortest form that reads back as the f32";
  EXPECT_EQ(tensor<float>({std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()})
                .str(),
            "f32[3]\n[NaN, Inf, -Inf]");
  EXPECT_EQ(tensor<complex64>({{1, 2}, {0, -1}}).str(), "c64[2]\n[1.0+2.0i, 0.0-1.0i]");
  EXPECT_EQ(tensor<uint8_t>({1, 0}).str(), "u8[2]\n[1, 0]");
}

TEST(Tensor, PrintingElidesLargeTensors) {
  std::string s = zeros(f32({1000, 1000})).str();
  EXPECT_LT(s.size(), 600u) << "a million elements print in a few lines";
  EXPECT_NE(s.find("..."), std::string::npos);
  EXPECT_EQ(s.rfind("f32[1000][1000]\n[", 0), 0u);
}

TEST(Device, RegistryAndDefaults) {
  EXPECT_EQ(host().str(), "host:0");
  EXPECT_EQ(default_device({"host"}), host());
  auto ps = platforms();
  EXPECT_NE(std::find(ps.begin(), ps.end(), "host"), ps.end());
  EXPECT_THROW(client("tpu"), DeviceError);
  EXPECT_THROW(client("host").device(7), DeviceError);
  EXPECT_TRUE(client("host").capabilities().supports(Op::Add));
}

// A preference resolves to its first platform available here; one this
// build has no backend for is passed over, and none available is an error
// naming what was asked and what there is.
TEST(DevicePreference, ResolvesToTheFirstAvailablePlatform) {
  EXPECT_EQ(DevicePreference({"no-such-platform", "host"}).resolve(), host());
  EXPECT_EQ(DevicePreference(host()).resolve(), host());
  EXPECT_EQ(DevicePreference({"no-such-platform", "host"}).str(), "no-such-platform, else host");
  try {
    (void)DevicePreference({"no-such-platform"}).resolve();
    FAIL() << "resolved a platform that does not exist";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[no-such-platform]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("available here: host"), std::string::npos) << e.what();
  }
}

// Every other platform of the build first, the host last: an accelerator
// where the machine has one, else the host.
TEST(DevicePreference, AcceleratorOrHostEndsWithTheHost) {
  std::vector<std::string> known = known_platforms();
  ASSERT_FALSE(known.empty());
  EXPECT_EQ(known.front(), "host") << "the host is registered first (devices/cpu)";
  DevicePreference p = DevicePreference::accelerator_or_host();
  std::string expected;
  for (size_t i = 1; i < known.size(); ++i) expected += known[i] + ", else ";
  EXPECT_EQ(p.str(), expected + "host");
  Device d = p.resolve();
  auto here = platforms();
  EXPECT_EQ(d.platform(), here.size() > 1 ? here[1] : "host");
}

// A backend says what it runs without its device: `sluice devices` lists
// what each one compiled in lacks, on a machine without its GPU too.
TEST(PlatformCapabilities, EveryKnownPlatformTellsWhatItRunsWithoutItsDevice) {
  for (const std::string& platform : known_platforms()) {
    const Capabilities caps = platform_capabilities(platform);
    EXPECT_TRUE(caps.supports(Op::Add, DType::F32)) << platform;
    EXPECT_TRUE(caps.supports(Op::Gather)) << platform;
  }
  EXPECT_EQ(platform_capabilities("host").ops.size(), static_cast<size_t>(kOpCount));
  EXPECT_EQ(platform_capabilities("host").ops.size(), client("host").capabilities().ops.size());
  try {
    platform_capabilities("no-such-platform");
    FAIL() << "told the capabilities of a platform that does not exist";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown platform 'no-such-platform'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice
