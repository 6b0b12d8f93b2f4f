// The stream contract of DESIGN.md, clause by clause, through the public API.

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include <sluice/stream/stream.h>

namespace sluice {
namespace {

// EXLA's documented example: defn sum(tensor, acc), do: {acc, tensor + acc}.
auto running_sum = [](Expr x, Expr acc) { return tuple(acc, x + acc); };

int64_t value_of(const Tensors& t) { return t.at(0).to_vector<int64_t>().at(0); }

TEST(StreamContract, ExlaRunningSumOverFiveChunks) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  std::vector<int64_t> outputs;
  for (int64_t i = 1; i <= 5; ++i) {
    s.send(scalar<int64_t>(i));
    outputs.push_back(value_of(s.recv()));
  }
  // Each output is the accumulator before the chunk: 0, 0+1, 1+2, 3+3, 6+4.
  EXPECT_EQ(outputs, (std::vector<int64_t>{0, 1, 3, 6, 10}));
  EXPECT_EQ(value_of(s.done()), 15);
}

TEST(StreamContract, ExlaDocumentedPrintout) {
  // The EXLA docs print chunks 0..4 and result 5: what sending 1 five times gives.
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  for (int i = 0; i < 5; ++i) s.send(scalar<int64_t>(1));
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(value_of(s.recv()), i);
  EXPECT_EQ(value_of(s.done()), 5);
}

TEST(StreamContract, StreamCachedAnswersForFunctionAndSpecs) {
  auto f = [](Expr x, Expr acc) { return tuple(acc, x + acc); };
  Tensors acc = {tensor<uint16_t>({1, 2, 3})};
  stream(f, {u8()}, acc).done();
  EXPECT_TRUE(stream_cached(f, {u8()}, acc));
  EXPECT_FALSE(stream_cached(f, {u8()}, {tensor<uint16_t>({1, 2, 3, 4})}));
}

TEST(StreamContract, TupleInputsOutputsAndAccumulators) {
  // Two inputs, two outputs, a two-tensor accumulator (count and sum).
  auto f = [](Expr a, Expr b, Expr count, Expr total) {
    Expr s = sum(a * b);
    return tuple(s, a - b, count + 1, total + s);
  };
  Stream s = stream(f, {f32({2}), f32({2})}, {scalar<int32_t>(0), scalar(0.0f)});
  s.send({tensor<float>({1, 2}), tensor<float>({3, 4})});
  s.send({tensor<float>({0.5, 1}), tensor<float>({2, 2})});
  Tensors first = s.recv();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].to_vector<float>()[0], 11.0f);
  EXPECT_EQ(first[1].to_vector<float>(), (std::vector<float>{-2, -2}));
  EXPECT_EQ(s.recv()[0].to_vector<float>()[0], 3.0f);
  Tensors acc = s.done();
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].to_vector<int32_t>()[0], 2);
  EXPECT_EQ(acc[1].to_vector<float>()[0], 14.0f);
}

TEST(StreamContract, WrongChunkIsRejectedAndTheStreamStaysUsable) {
  Stream s = stream(running_sum, {s64({2})}, {tensor<int64_t>({0, 0})});
  EXPECT_THROW(s.send(tensor<int64_t>({1, 2, 3})), ShapeError) << "wrong shape";
  EXPECT_THROW(s.send(tensor<int32_t>({1, 2})), TypeError) << "wrong dtype";
  EXPECT_THROW(s.send(Tensors{tensor<int64_t>({1, 2}), tensor<int64_t>({1, 2})}), ShapeError) << "wrong arity";
  try {
    s.send(tensor<float>({1, 2}));
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("expected s64[2], found f32[2]"), std::string::npos) << e.what();
  }
  s.send(tensor<int64_t>({5, 6}));
  EXPECT_EQ(s.recv()[0].to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s.done()[0].to_vector<int64_t>(), (std::vector<int64_t>{5, 6}));
}

// A chunk whose data failed upstream (a computation that produced it threw).
Tensor failed_chunk(const Spec& spec, const std::string& why) {
  Tensor ok = zeros(spec);
  auto buffer = std::make_shared<Buffer>();
  buffer->device = ok.buffer()->device;
  buffer->data = ok.buffer()->data;
  buffer->bytes = ok.buffer()->bytes;
  buffer->memory = ok.buffer()->memory;
  buffer->ready = std::make_shared<Event>();
  buffer->ready->set_error(std::make_exception_ptr(Error(why)));
  return Tensor(spec, buffer);
}

TEST(StreamContract, AFailedChunkSurfacesFromItsRecvAndLaterChunksRun) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  s.send(scalar<int64_t>(1));
  s.send(failed_chunk(s64(), "sensor unplugged"));
  s.send(scalar<int64_t>(2));
  EXPECT_EQ(value_of(s.recv()), 0);
  try {
    s.recv();
    FAIL() << "chunk 1 failed: its recv must throw";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sensor unplugged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(value_of(s.recv()), 1) << "the failed chunk left the accumulator untouched";
  EXPECT_EQ(value_of(s.done()), 3);
}

TEST(StreamContract, AChunkStillComputingUpstreamIsWaitedForInOrder) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  Tensor late = zeros(s64());
  // A pending tensor: its event is set by "upstream" after later chunks were sent.
  auto pending = std::make_shared<Buffer>();
  pending->device = late.buffer()->device;
  pending->data = late.buffer()->data;
  pending->bytes = late.buffer()->bytes;
  pending->memory = late.buffer()->memory;
  pending->ready = std::make_shared<Event>();
  *static_cast<int64_t*>(pending->data) = 7;
  s.send(Tensor(s64(), pending));
  s.send(scalar<int64_t>(1));
  std::thread upstream([&] { pending->ready->set_ready(); });
  EXPECT_EQ(value_of(s.recv()), 0);
  EXPECT_EQ(value_of(s.recv()), 7) << "chunk 1 ran after chunk 0, whose data came late";
  upstream.join();
  EXPECT_EQ(value_of(s.done()), 8);
}

TEST(StreamContract, DoneWithUnreceivedOutputsLosesNothing) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  s.send(scalar<int64_t>(1));
  s.send(scalar<int64_t>(2));
  try {
    s.done();
    FAIL() << "done with 2 unreceived outputs must throw";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("2 outputs were not received"), std::string::npos) << e.what();
  }
  EXPECT_EQ(value_of(s.recv()), 0) << "the stream stays open after that error";
  EXPECT_EQ(value_of(s.recv()), 1);
  EXPECT_EQ(value_of(s.done()), 3);
  EXPECT_THROW(s.send(scalar<int64_t>(1)), StreamError) << "closed after done";
  EXPECT_THROW(s.recv(), StreamError);
  EXPECT_THROW(s.done(), StreamError);
}

TEST(StreamContract, DiscardOutputsKeepsOnlyTheAccumulator) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)}, host(),
                    {.max_pending = 4, .discard_outputs = true});
  for (int64_t i = 1; i <= 100; ++i) s.send(scalar<int64_t>(i));
  EXPECT_THROW(s.recv(), StreamError);
  EXPECT_EQ(value_of(s.done()), 5050);
}

TEST(StreamContract, OwnerSendingPastMaxPendingGetsAnErrorNotADeadlock) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)}, host(), {.max_pending = 3});
  for (int i = 0; i < 3; ++i) s.send(scalar<int64_t>(1));
  try {
    s.send(scalar<int64_t>(1));
    FAIL() << "the owner would wait on itself";
  } catch (const StreamError& e) {
    EXPECT_NE(std::string(e.what()).find("max_pending"), std::string::npos) << e.what();
  }
  s.recv();
  s.send(scalar<int64_t>(1));  // room again
  for (int i = 0; i < 3; ++i) s.recv();
  EXPECT_EQ(value_of(s.done()), 4);
}

TEST(StreamContract, OtherThreadsBlockOnBackpressureUntilTheOwnerReceives) {
  Stream s = stream(running_sum, {s64()}, {scalar<int64_t>(0)}, host(), {.max_pending = 2});
  std::atomic<int> sent{0};
  std::thread producer([&] {
    for (int i = 0; i < 5; ++i) {
      s.send(scalar<int64_t>(1));
      ++sent;
    }
  });
  while (sent.load() < 2) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(sent.load(), 2) << "the producer must block with max_pending outputs unreceived";
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(value_of(s.recv()), i);
  producer.join();
  EXPECT_EQ(value_of(s.done()), 5);
}

TEST(StreamContract, FourThreadsTenThousandChunksEachAllAccountedFor) {
  // Each chunk carries a unique id; the output echoes it, the accumulator counts.
  auto f = [](Expr id, Expr count) { return tuple(id, count + 1); };
  Stream s = stream(f, {s64()}, {scalar<int64_t>(0)});
  constexpr int kThreads = 4, kPerThread = 10000;
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t)
    senders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) s.send(scalar<int64_t>(int64_t{t} * kPerThread + i));
    });
  std::set<int64_t> seen;
  std::vector<int64_t> last_of_thread(kThreads, -1);
  for (int i = 0; i < kThreads * kPerThread; ++i) {
    int64_t id = value_of(s.recv());
    EXPECT_TRUE(seen.insert(id).second) << "output " << id << " received twice";
    int t = static_cast<int>(id / kPerThread);
    EXPECT_GT(id, last_of_thread[t]) << "one thread's chunks come back in its send order";
    last_of_thread[t] = id;
  }
  for (auto& t : senders) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(value_of(s.done()), kThreads * kPerThread);
}

TEST(StreamContract, StreamsAndExecutablesShareTheDevice) {
  // No per-stream device lock: two open streams and plain runs interleave
  // from several threads on one device.
  Stream a = stream(running_sum, {s64()}, {scalar<int64_t>(0)});
  Stream b = stream(running_sum, {s64()}, {scalar<int64_t>(100)});
  Executable twice = compile(trace({f32({3})}, [](Expr x) { return x * 2; }));
  std::thread other([&] {
    for (int i = 0; i < 200; ++i) {
      b.send(scalar<int64_t>(1));
      b.recv();
      EXPECT_EQ(twice.run({tensor<float>({1, 2, 3})})[0].to_vector<float>()[2], 6.0f);
    }
  });
  for (int i = 0; i < 200; ++i) {
    a.send(scalar<int64_t>(2));
    EXPECT_EQ(twice.run({tensor<float>({1, 2, 3})})[0].to_vector<float>()[0], 2.0f);
    a.recv();
  }
  other.join();
  EXPECT_EQ(value_of(a.done()), 400);
  EXPECT_EQ(value_of(b.done()), 300);
}

TEST(StreamContract, AccumulatorInitIsNotConsumed) {
  Tensor init = scalar<int64_t>(10);
  Stream s = stream(running_sum, {s64()}, {init});
  s.send(scalar<int64_t>(1));
  s.recv();
  EXPECT_EQ(value_of(s.done()), 11);
  EXPECT_EQ(init.to_vector<int64_t>()[0], 10) << "the caller's acc_init stays valid";
}

TEST(StreamContract, MismatchedFunctionIsRejectedAtOpen) {
  // The new accumulator must have the initial accumulator's spec.
  auto widen = [](Expr x, Expr acc) { return tuple(acc, as_type(x + acc, DType::F64)); };
  EXPECT_THROW(stream(widen, {s64()}, {scalar<int64_t>(0)}), StreamError);
  EXPECT_THROW(stream(running_sum, {}, {scalar<int64_t>(0)}), StreamError);
  EXPECT_THROW(stream(running_sum, {s64()}, {scalar<int64_t>(0)}, host(), {.max_pending = 0}), StreamError);
}

}  // namespace
}  // namespace sluice
