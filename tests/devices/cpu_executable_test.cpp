// The host backend's runtime: functions lowered to plans and run end to end,
// aliasing of outputs, donation, the asynchronous path, concurrency and the
// reuse of memory across runs. Values are checked against hand-computed
// references.

#include <gtest/gtest.h>
#include <tbb/task_group.h>

#include <atomic>
#include <cmath>
#include <thread>

#include <sluice/devices/backend.h>
#include <sluice/devices/detail/host_memory.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

// Above the size that runs inline on the caller: these runs go to the arena.
constexpr int64_t kLarge = 1 << 16;

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  ADD_FAILURE() << "expected an exception";
  return "";
}

std::vector<float> iota_values(int64_t n, float start = 0, float step = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// A tensor holding `values` whose buffer reports ready only once `event` is
// set: what a computation still in flight hands out.
Tensor pending_tensor(const std::vector<float>& values, EventPtr event) {
  Tensor t = tensor(values, Shape{static_cast<int64_t>(values.size())});
  auto b = std::make_shared<Buffer>();
  b->device = t.buffer()->device;
  b->data = t.buffer()->data;
  b->bytes = t.buffer()->bytes;
  b->memory = t.buffer()->memory;
  b->ready = std::move(event);
  return Tensor(t.spec(), b);
}

// reduce_max of a complex tensor: built below the builders (which reject it
// at trace time) so that it fails where only the kernel can notice, at run time.
Function complex_reduce_max(int64_t n) {
  Expr x = parameter(0, c64({n}));
  Attrs attrs;
  attrs.axes = {0};
  Expr m(Node::make(Op::ReduceMax, c64({}), {x.node()}, attrs));
  return Function({c64({n})}, {m});
}

TEST(CpuExecutable, AddsTwoTensors) {
  Executable e = compile(trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return a + b; }));
  auto out = e.run({tensor<float>({1, 2, 3, 4}), tensor<float>({0.5f, -2, 30, 4e6f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1.5f, 0, 33, 4000004}));
}

TEST(CpuExecutable, EmptyTensorsGiveEmptyOutputs) {
  Executable e =
      compile(trace({f32({0}), f32({0})}, [](Expr a, Expr b) { return tuple(a * b + 1.0, sum(a)); }));
  auto out = e.run({tensor(std::vector<float>{}, Shape{0}), tensor(std::vector<float>{}, Shape{0})});
  EXPECT_EQ(out[0].shape(), Shape({0}));
  EXPECT_TRUE(out[0].to_vector<float>().empty());
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{0})) << "the sum of nothing is 0";
}

TEST(CpuExecutable, RunsAChainOfElementwiseOps) {
  Executable e = compile(
      trace({f32({5}), f32({5})}, [](Expr x, Expr y) { return sluice::exp(x) * 2.0 - y / 4.0 + 1.0; }));
  std::vector<float> x{-1, 0, 0.5f, 1, 2}, y{4, 8, -4, 0, 1};
  auto got = e.run({tensor(x, Shape{5}), tensor(y, Shape{5})})[0].to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    double want = std::exp(double{x[i]}) * 2 - y[i] / 4.0 + 1;
    EXPECT_NEAR(got[i], want, 1e-5 * std::abs(want)) << "element " << i;
  }
}

TEST(CpuExecutable, ReducesAfterAnElementwiseChain) {
  // sum over axis 1 of (x * 2 + 1), x = [[0, 1, 2], [3, 4, 5]]: [1+3+5, 7+9+11].
  Executable e = compile(trace({f32({2, 3})}, [](Expr x) { return sum(x * 2.0 + 1.0, {.axes = {1}}); }));
  auto out = e.run({tensor(iota_values(6), Shape{2, 3})});
  EXPECT_EQ(out[0].shape(), Shape({2}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{9, 27}));
}

TEST(CpuExecutable, ReshapeOfAnArgumentSharesItsBuffer) {
  Executable e = compile(trace({f32({4})}, [](Expr x) {
    return tuple(reshape(x, Shape{2, 2}), squeeze(reshape(x, Shape{1, 4})));
  }));
  Tensor x = tensor<float>({1, 2, 3, 4});
  auto out = e.run({x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), Shape({2, 2}));
  EXPECT_EQ(out[0].buffer()->data, x.buffer()->data) << "a reshape is the operand's memory, not a copy";
  EXPECT_EQ(out[1].buffer()->data, x.buffer()->data) << "a squeeze is the operand's memory, not a copy";
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(CpuExecutable, MovingOnlyAxesOfSizeOneIsNoCopy) {
  Executable e = compile(trace({f32({1, 3})}, [](Expr x) {
    return tuple(transpose(x), broadcast(x, Shape{1, 1, 3}), transpose(reshape(x, Shape{3, 1}) * 2.0));
  }));
  Tensor x = tensor(iota_values(3, 1), Shape{1, 3});
  auto out = e.run({x});
  EXPECT_EQ(out[0].shape(), Shape({3, 1}));
  EXPECT_EQ(out[0].buffer()->data, x.buffer()->data)
      << "transposing [1][3] to [3][1] keeps the bytes in place";
  EXPECT_EQ(out[1].buffer()->data, x.buffer()->data) << "broadcasting to [1][1][3] adds axes of size 1 only";
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out[2].shape(), Shape({1, 3}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(CpuExecutable, ReshapeBetweenStepsReadsTheSameMemory) {
  // exp, then a reshape, then a reduction: the reshape is no step of its own.
  Executable e = compile(trace({f32({6})}, [](Expr x) {
    return tuple(sum(reshape(x * 3.0, Shape{2, 3}), {.axes = {0}}), reshape(x + 1.0, Shape{3, 2}));
  }));
  auto out = e.run({tensor(iota_values(6), Shape{6})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{9, 15, 21})) << "3 * ([0,1,2] + [3,4,5])";
  EXPECT_EQ(out[1].shape(), Shape({3, 2}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(CpuExecutable, AnOutputThatIsAParameterSharesItsBuffer) {
  Executable e = compile(trace({f32({3}), f32({3})}, [](Expr x, Expr y) { return tuple(x, x + y, y); }));
  Tensor x = tensor<float>({1, 2, 3}), y = tensor<float>({10, 20, 30});
  auto out = e.run({x, y});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].buffer()->data, x.buffer()->data) << "tensors are immutable: no copy needed";
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{10, 20, 30}));
}

TEST(CpuExecutable, ADonatedParameterShownAsAnOutputIsCopied) {
  Executable e = compile(trace({f32({3}), f32({3})}, [](Expr x, Expr y) { return tuple(x, x * y); }));
  Tensor x = tensor<float>({1, 2, 3});
  const void* x_data = x.buffer()->data;
  auto out = e.run({x, tensor<float>({2, 2, 2})}, {.donate = {0}});
  EXPECT_NE(out[0].buffer()->data, x_data)
      << "the donated buffer is no longer the caller's: the output is a copy";
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(CpuExecutable, RepeatedOutputsAreIndependentTensors) {
  Executable e = compile(trace({f32({2})}, [](Expr x) { return tuple(x * 2.0, x * 2.0, x * 2.0 + 1.0); }));
  auto out = e.run({tensor<float>({1, 5})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 10}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 10}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{3, 11}));
  // Donating one of two equal outputs must leave the other intact.
  Executable twice = compile(trace({f32({2})}, [](Expr x) { return x * 10.0; }));
  auto r = twice.run({out[0]}, {.donate = {0}});
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{20, 100}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 10}))
      << "the repeated output is a tensor of its own";
}

TEST(CpuExecutable, AConstantOutput) {
  Executable e = compile(trace({f32({2})}, [](Expr x) {
    return tuple(constant(std::vector<int32_t>{7, 8, 9}, Shape{3}), x + 1.0, constant(2.5, DType::F64));
  }));
  for (int run = 0; run < 2; ++run) {
    auto out = e.run({tensor<float>({1, 2})});
    EXPECT_EQ(out[0].to_vector<int32_t>(), (std::vector<int32_t>{7, 8, 9})) << "run " << run;
    EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 3})) << "run " << run;
    EXPECT_EQ(out[2].to_vector<double>(), (std::vector<double>{2.5})) << "run " << run;
  }
}

TEST(CpuExecutable, AConstantSubgraphIsFoldedThroughTheKernels) {
  // No parameter reaches the first output: it is folded at compile time.
  Executable e = compile(trace({f32({2})}, [](Expr x) {
    Expr c = sum(constant(std::vector<float>{1, 2, 3}, Shape{3}) * 2.0);
    return tuple(c, x * c);
  }));
  auto out = e.run({tensor<float>({1, -1})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{12}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{12, -12}));
}

TEST(CpuExecutable, LargeRunsComputeOnTheThreadPool) {
  Executable e = compile(trace({f32({kLarge})}, [](Expr x) { return x * 0.5 + 1.0; }));
  auto out = e.run({tensor(iota_values(kLarge), Shape{kLarge})});
  std::vector<float> got = out[0].to_vector<float>();
  for (int64_t i = 0; i < kLarge; i += 4099)
    EXPECT_EQ(got[static_cast<size_t>(i)], 0.5f * static_cast<float>(i) + 1) << "element " << i;
}

TEST(CpuExecutable, ALargeRunInsideAOneTbbTaskRunsInline) {
  // A pipeline stage that enqueued its run and then waited for it could
  // starve the workers the run needs: inside a task, runs compute at once.
  Executable e = compile(trace({f32({kLarge})}, [](Expr x) { return x + 1.0; }));
  Tensor x = tensor(iota_values(kLarge), Shape{kLarge});
  Tensor out;
  bool ready_on_return = false;
  tbb::task_group group;
  group.run([&] {
    out = e.run({x})[0];
    ready_on_return = out.is_ready();
  });
  group.wait();
  EXPECT_TRUE(ready_on_return) << "computed on the task's thread before run returned";
  EXPECT_EQ(out.to_vector<float>()[kLarge - 1], static_cast<float>(kLarge));
}

TEST(CpuExecutable, APendingOutputChainsIntoTheNextRun) {
  Executable f = compile(trace({f32({kLarge})}, [](Expr x) { return x * 2.0; }));
  Executable g = compile(trace({f32({kLarge}), f32({kLarge})}, [](Expr a, Expr b) { return a + b; }));
  Tensor x = tensor(iota_values(kLarge), Shape{kLarge});
  Tensor y = f.run({x})[0];
  Tensor z = g.run({y, x})[0];  // y may still be in flight: g chains on it
  std::vector<float> got = z.to_vector<float>();
  for (int64_t i = 0; i < kLarge; i += 997)
    EXPECT_EQ(got[static_cast<size_t>(i)], 3.0f * static_cast<float>(i)) << "element " << i;
}

TEST(CpuExecutable, ARunWaitsForAnArgumentWithoutBlocking) {
  Executable e = compile(trace({f32({3})}, [](Expr x) { return x + 1.0; }));
  auto event = std::make_shared<Event>();
  Tensor arg = pending_tensor({1, 2, 3}, event);
  Tensor out = e.run({arg})[0];
  EXPECT_FALSE(out.is_ready()) << "run returns before its argument is computed";
  std::thread setter([&] { event->set_ready(); });
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  setter.join();
}

TEST(CpuExecutable, AFailedArgumentFailsTheOutputs) {
  Executable e = compile(trace({f32({3})}, [](Expr x) { return x + 1.0; }));
  auto event = std::make_shared<Event>();
  Tensor out = e.run({pending_tensor({1, 2, 3}, event)})[0];
  event->set_error(std::make_exception_ptr(DeviceError("upstream stage exploded")));
  std::string m = message_of<DeviceError>([&] { out.wait(); });
  EXPECT_NE(m.find("upstream stage exploded"), std::string::npos) << m;
}

TEST(CpuExecutable, AFailingStepSurfacesFromWaitNamingTheOp) {
  for (int64_t n : {int64_t{4}, kLarge}) {  // inline, then on the thread pool
    Executable e = compile(complex_reduce_max(n));
    std::vector<complex64> values(static_cast<size_t>(n), complex64(1, 2));
    Tensor out;
    ASSERT_NO_THROW(out = e.run({tensor(values, Shape{n})})[0])
        << "run never throws for a computation's failure";
    std::string m = message_of<TypeError>([&] { out.to_vector<complex64>(); });
    EXPECT_NE(m.find("reduce_max"), std::string::npos) << "n = " << n << ": " << m;
    // A failed output passed on fails what is computed from it.
    Executable plus = compile(trace({c64({})}, [](Expr v) { return v + 1.0; }));
    m = message_of<TypeError>([&] { plus.run({out})[0].wait(); });
    EXPECT_NE(m.find("reduce_max"), std::string::npos) << "n = " << n << ": " << m;
  }
}

TEST(CpuExecutable, DonationWritesInPlaceAndInvalidatesTheArgument) {
  Executable e = compile(trace({f32({4}), f32({4})}, [](Expr acc, Expr x) { return acc * 0.5 + x; }));
  Tensor acc = tensor<float>({2, 4, 6, 8});
  const void* acc_data = acc.buffer()->data;
  Tensor out = e.run({acc, tensor<float>({1, 1, 1, 1})}, {.donate = {0}})[0];
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(out.buffer()->data, acc_data)
      << "an elementwise region writes over the donated argument it reads";
  std::string m = message_of<DeviceError>([&] { acc.to_vector<float>(); });
  EXPECT_NE(m.find("donated"), std::string::npos) << m;
}

TEST(CpuExecutable, ADonatedBufferIsNotReusedWhenALaterStepReadsIt) {
  // The reduction reads x after the elementwise step wrote its output:
  // writing that output over x would corrupt the sum.
  Executable e = compile(trace({f32({4})}, [](Expr x) { return tuple(x + 1.0, sum(reverse(x))); }));
  Tensor x = tensor<float>({1, 2, 3, 4});
  auto out = e.run({x}, {.donate = {0}});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{10}));
}

TEST(CpuExecutable, MemoryStaysFlatWhenAnAccumulatorIsDonated) {
  for (int64_t n : {int64_t{8}, kLarge}) {  // inline, then pipelined on the thread pool
    Executable e = compile(trace({f32({n}), f32({n})}, [](Expr acc, Expr x) { return acc + x; }));
    Tensor ones = tensor(std::vector<float>(static_cast<size_t>(n), 1.0f), Shape{n});
    Tensor acc = tensor(std::vector<float>(static_cast<size_t>(n), 0.0f), Shape{n});
    const void* acc_data = acc.buffer()->data;
    for (int i = 0; i < 10; ++i) acc = e.run({acc, ones}, {.donate = {0}})[0];
    acc.wait();
    size_t allocations = host_memory_stats().system_allocations;
    for (int i = 0; i < 1000; ++i) acc = e.run({acc, ones}, {.donate = {0}})[0];
    std::vector<float> got = acc.to_vector<float>();
    EXPECT_EQ(host_memory_stats().system_allocations, allocations)
        << "n = " << n << ": no allocation per run";
    EXPECT_EQ(acc.buffer()->data, acc_data)
        << "n = " << n << ": every run wrote over the donated accumulator";
    EXPECT_EQ(got.front(), 1010.0f) << "n = " << n;
    EXPECT_EQ(got.back(), 1010.0f) << "n = " << n;
  }
}

TEST(CpuExecutable, RunsDoNotAllocateOnceWarm) {
  // The intermediate x * 2 + 1 lives in the run's arena, between the region and the reduction.
  constexpr int64_t n = 1 << 14;
  Executable e = compile(trace({f32({n})}, [](Expr x) { return sum(reverse(x * 2.0 + 1.0)); }));
  Tensor x = tensor(std::vector<float>(n, 1.0f), Shape{n});
  for (int i = 0; i < 10; ++i) e.run({x})[0].wait();
  size_t allocations = host_memory_stats().system_allocations;
  for (int i = 0; i < 200; ++i) EXPECT_EQ(e.run({x})[0].to_vector<float>()[0], 3.0f * n) << "run " << i;
  EXPECT_EQ(host_memory_stats().system_allocations, allocations) << "arenas and outputs come from pools";
}

TEST(CpuExecutable, ManyThreadsRunOneExecutable) {
  for (auto [n, runs] : {std::pair<int64_t, int>{64, 1000}, std::pair<int64_t, int>{kLarge, 50}}) {
    Executable e = compile(trace({f32({n})}, [](Expr x) { return sum(reverse(x * 2.0) + 1.0); }));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        Tensor x = tensor(std::vector<float>(static_cast<size_t>(n), static_cast<float>(t)), Shape{n});
        float want = static_cast<float>((2 * t + 1) * n);
        for (int i = 0; i < runs; ++i)
          if (e.run({x})[0].to_vector<float>()[0] != want) ++wrong;
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0) << "n = " << n << ": runs on different threads must not share scratch memory";
  }
}

}  // namespace
}  // namespace sluice
