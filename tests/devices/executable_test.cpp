// Executable::run's argument checks, donation and the compile cache, through
// the public API.

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

Function add_fn() {
  return trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return a + b; });
}

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

TEST(Executable, RunsAndReportsSpecs) {
  Executable e = compile(add_fn());
  EXPECT_EQ(e.inputs(), (std::vector<Spec>{f32({4}), f32({4})}));
  EXPECT_EQ(e.outputs(), (std::vector<Spec>{f32({4})}));
  auto out = e.run({tensor<float>({1, 2, 3, 4}), tensor<float>({10, 20, 30, 40})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{11, 22, 33, 44}));
}

TEST(Executable, ChecksArgumentsAndNamesThem) {
  Executable e = compile(add_fn());
  auto a = tensor<float>({1, 2, 3, 4});
  EXPECT_NE(message_of<Error>([&] { e.run({a}); }).find("expected 2 arguments"), std::string::npos);
  std::string m = message_of<TypeError>([&] { e.run({a, tensor<double>({1, 2, 3, 4})}); });
  EXPECT_NE(m.find("argument 1"), std::string::npos) << m;
  EXPECT_NE(m.find("f64[4]"), std::string::npos) << m;
  m = message_of<ShapeError>([&] { e.run({tensor<float>({1, 2}), a}); });
  EXPECT_NE(m.find("argument 0: expected f32[4], found f32[2]"), std::string::npos) << m;
  EXPECT_THROW(e.run({a, Tensor()}), DeviceError);
  EXPECT_THROW(e.run({a, a}, {.donate = {2}}), Error);
}

TEST(Executable, DonatedArgumentIsUnusableAfterwards) {
  Executable e = compile(add_fn());
  auto a = tensor<float>({1, 2, 3, 4});
  auto b = tensor<float>({1, 1, 1, 1});
  auto out = e.run({a, b}, {.donate = {0}});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  std::string m = message_of<DeviceError>([&] { a.to_vector<float>(); });
  EXPECT_NE(m.find("donated"), std::string::npos) << m;
  m = message_of<DeviceError>([&] { e.run({a, b}); });
  EXPECT_NE(m.find("argument 0"), std::string::npos) << m;
  EXPECT_NE(m.find("donated"), std::string::npos) << m;
  EXPECT_EQ(b.to_vector<float>()[0], 1.0f) << "arguments not donated stay valid";
}

TEST(Executable, ABufferPassedTwiceCannotBeDonated) {
  Executable e = compile(add_fn());
  auto a = tensor<float>({1, 2, 3, 4});
  EXPECT_THROW(e.run({a, a}, {.donate = {0}}), Error);
  EXPECT_EQ(e.run({a, a})[0].to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
}

// A run's per-argument lists stay off the heap for up to eight arguments:
// one with more (here ten, the last two donated) takes the same path.
TEST(Executable, ARunOfManyArgumentsDonatesThoseListed) {
  std::vector<Spec> specs(10, f32({4}));
  Executable e = compile(trace(specs, [](const std::vector<Expr>& x) {
    Expr sum = x[0];
    for (size_t i = 1; i < x.size(); ++i) sum = sum + x[i];
    return std::vector<Expr>{sum, x[9] * 2.0};
  }));
  std::vector<Tensor> args;
  for (int i = 0; i < 10; ++i) args.push_back(tensor<float>({1, 2, 3, static_cast<float>(i)}));
  const std::vector<Tensor> out = e.run(args, {.donate = {8, 9}});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{10, 20, 30, 45}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 4, 6, 18}));
  for (int i = 0; i < 10; ++i) {
    const bool donated = i >= 8;
    EXPECT_EQ(args[static_cast<size_t>(i)].buffer()->state.load(),
              donated ? Buffer::State::Donated : Buffer::State::Live)
        << "argument " << i;
  }
  for (size_t i = 8; i < 10; ++i) args[i] = tensor<float>({1, 2, 3, static_cast<float>(i)});
  const std::string m = message_of<ValueError>([&] { e.run(args, {.donate = {9, 9}}); });
  EXPECT_NE(m.find("argument 9 listed twice"), std::string::npos) << m;
}

TEST(CompileCache, EqualFunctionsShareOneExecutable) {
  auto make = [](float k) {
    return trace({f32({3})}, [k](Expr x) { return sluice::exp(x) * k + 1.0; });
  };
  Function f1 = make(3.0f);
  EXPECT_FALSE(jit_cached(f1));
  compile(f1);
  EXPECT_TRUE(jit_cached(f1));
  EXPECT_TRUE(jit_cached(make(3.0f))) << "a second trace of the same computation hits the cache";
  EXPECT_FALSE(jit_cached(make(4.0f))) << "a different constant is a different function";
  EXPECT_FALSE(jit_cached(trace({f32({4})}, [](Expr x) { return sluice::exp(x) * 3.0 + 1.0; })))
      << "a different input spec is a different function";
}

}  // namespace
}  // namespace sluice
