// Python at both ends: a Python producer (pyzmq + numpy + python/sluice/wire.py)
// sends arrays into a C++ pipeline that doubles them and sends them on to a
// Python consumer, which checks every value.

#include <gtest/gtest.h>

#include <filesystem>

#include <sluice/io/channel.h>
#include <sluice/io/curve.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

const std::string kScript = SLUICE_SOURCE_DIR "/tests/io/interop.py";
const std::string kPythonPath = "PYTHONPATH=" SLUICE_SOURCE_DIR "/python";

std::string python_or_skip_reason() { return test::python_with_numpy_and_zmq(); }

// Runs `p`, fed by `source` from the Python `producer`, until its end of
// stream (within 60 s); then both Python processes must have succeeded.
void run_between(Pipeline& p, const std::shared_ptr<ZmqSource>& source, test::Child& producer, test::Child& consumer,
                 int count) {
  {
    test::Watchdog watchdog(source, milliseconds(60000));
    PipelineResult r = p.run();
    EXPECT_FALSE(watchdog.fired()) << "no end of stream from the Python producer within 60 s";
    EXPECT_EQ(r.metrics_of("twice").messages_out, static_cast<uint64_t>(count));
  }
  EXPECT_EQ(producer.wait(milliseconds(30000)), 0) << "the Python producer failed (its stderr is above)";
  EXPECT_EQ(consumer.wait(milliseconds(30000)), 0) << "the Python consumer failed (its stderr is above)";
}

TEST(PythonInterop, SluiceWireSelfTest) {
  std::string python = python_or_skip_reason();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  test::Child selftest({python, kScript, "selftest"}, {kPythonPath});
  EXPECT_EQ(selftest.wait(milliseconds(60000)), 0) << "sluice.wire's self test failed (its stderr is above)";
}

TEST(PythonInterop, PythonToCppPipelineToPython) {
  std::string python = python_or_skip_reason();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr int kCount = 200;
  test::TempDir dir;
  auto source = sources::zmq("@" + dir.ipc("in"), {f32({4, 3}), s64({5})});
  Pipeline p;
  auto twice = p.stage("twice", [](Expr a, Expr b) { return tuple(a * 2, b * 2); });
  p.connect(p.source("from python", source), twice);
  p.connect(twice, p.sink("to python", sinks::zmq(">" + dir.ipc("out"))));

  test::Child consumer({python, kScript, "consume", dir.ipc("out"), std::to_string(kCount)}, {kPythonPath});
  test::Child producer({python, kScript, "produce", dir.ipc("in"), std::to_string(kCount)}, {kPythonPath});
  run_between(p, source, producer, consumer, kCount);
  EXPECT_EQ(source->peer_errors(), 1u) << "the producer's error message was counted, not taken for data";
  EXPECT_EQ(source->rejected(), 0u) << source->last_rejection();
}

// A burst of small messages from a C++ channel to sluice.wire's
// ReliableReceiver, which says it takes batches: they go coalesced, and the
// Python side splits them and takes each once, in order.
TEST(PythonInterop, APythonReceiverTakesBatches) {
  std::string python = python_or_skip_reason();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr int kCount = 5000;
  test::TempDir dir;
  test::Child consumer({python, kScript, "consume-burst", dir.ipc("burst"), std::to_string(kCount)},
                       {kPythonPath});
  Channel out(Pattern::Push, ">" + dir.ipc("burst"), {.peer_timeout = milliseconds(30000)});
  for (int i = 0; i < kCount; ++i) out.send({scalar(static_cast<int64_t>(i))}, static_cast<uint64_t>(i));
  out.send_end_of_stream(kCount);
  out.flush(milliseconds(30000));
  EXPECT_EQ(consumer.wait(milliseconds(30000)), 0) << "the Python consumer failed (its stderr is above)";
  EXPECT_GT(out.counters().coalesced, static_cast<uint64_t>(kCount / 2))
      << "of " << kCount << " sent in a burst";
}

// CurveZMQ both ways over tcp: a Python sender allowed by the C++ source,
// and a C++ sink allowed by the Python receiver; the same keys on each side.
// Tagged messages from a C++ channel to sluice.wire's ReliableReceiver:
// small ones packed (and coalesced into batches), every fifth large, in
// frames; the Python side checks every tag's value and type (interop.py's
// expected_tags).
TEST(PythonInterop, TagsCrossFromCppToPython) {
  std::string python = python_or_skip_reason();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr int kCount = 200;
  test::TempDir dir;
  test::Child consumer({python, kScript, "consume-tags", dir.ipc("tags"), std::to_string(kCount)},
                       {kPythonPath});
  Channel out(Pattern::Push, ">" + dir.ipc("tags"), {.peer_timeout = milliseconds(30000)});
  for (int i = 0; i < kCount; ++i) {
    wire::Message m;
    m.header.kind = wire::Kind::Data;
    m.header.seq = static_cast<uint64_t>(i);
    m.tensors = {zeros(f32({i % 5 == 0 ? 2000 : 4}))};
    m.tags.set_time(1'000'000 + 250 * int64_t{i}, "monotonic");
    m.tags.set_sample_rate(4000);
    m.tags.set("source", std::string("capteur \xc3\xa9"));
    m.tags.set("window", tensor<int16_t>({0, static_cast<int16_t>(i), static_cast<int16_t>(2 * i)}));
    m.tags.set("event", int64_t{i}, i % 4);
    out.send(m);
  }
  out.send_end_of_stream(kCount);
  out.flush(milliseconds(30000));
  EXPECT_EQ(consumer.wait(milliseconds(30000)), 0) << "the Python consumer failed (its stderr is above)";
}

TEST(PythonInterop, PythonAndCppSpeakCurveZmq) {
  std::string python = python_or_skip_reason();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr int kCount = 50;
  test::TempDir dir;
  const std::string keys = dir.path() + "/";
  std::filesystem::create_directory(keys + "allow_python");
  std::filesystem::create_directory(keys + "allow_cpp");
  curve::save(keys + "cpp", curve::generate());
  curve::save(keys + "python", curve::generate());
  std::filesystem::copy_file(keys + "python", keys + "allow_python/python");
  std::filesystem::copy_file(keys + "cpp", keys + "allow_cpp/cpp");

  auto source = sources::zmq("@tcp://127.0.0.1:*", {f32({4, 3}), s64({5})},
                             {.channel = {.curve = {.secret = keys + "cpp_secret", .allow = keys + "allow_python"}}});
  const std::string python_in = "tcp://127.0.0.1:" + std::to_string(test::free_tcp_port());
  Pipeline p;
  auto twice = p.stage("twice", [](Expr a, Expr b) { return tuple(a * 2, b * 2); });
  p.connect(p.source("from python", source), twice);
  p.connect(twice, p.sink("to python", sinks::zmq(">" + python_in, {.channel = {.curve = {.secret = keys + "cpp_secret",
                                                                                          .server = keys + "python"}}})));

  test::Child consumer({python, kScript, "consume", python_in, std::to_string(kCount), keys + "python_secret",
                        keys + "allow_cpp"},
                       {kPythonPath});
  test::Child producer({python, kScript, "produce", source->bound_endpoint(), std::to_string(kCount),
                        keys + "python_secret", keys + "cpp"},
                       {kPythonPath});
  run_between(p, source, producer, consumer, kCount);
}

// Checkpoint barriers both ways on reliable channels: a Python sender's
// reach a C++ receiver in order, with their numbers, and a C++ sender's
// reach a Python receiver the same way.
TEST(PythonInterop, BarriersCrossBetweenPythonAndCpp) {
  std::string python = python_or_skip_reason();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr uint64_t kRounds = 3;  // interop.py's BARRIER_ROUNDS
  test::TempDir dir;
  {
    Channel in(Pattern::Pull, "@" + dir.ipc("from_python"));
    test::Child producer({python, kScript, "produce-barriers", dir.ipc("from_python")}, {kPythonPath});
    for (uint64_t k = 0; k < kRounds; ++k) {
      std::optional<wire::Message> m = in.recv(milliseconds(60000));
      ASSERT_TRUE(m) << "round " << k << ": no data from Python";
      EXPECT_EQ(m->header.kind, wire::Kind::Data);
      EXPECT_EQ(m->tensors.at(0).to_vector<int64_t>(), std::vector<int64_t>{static_cast<int64_t>(k)});
      m = in.recv(milliseconds(60000));
      ASSERT_TRUE(m) << "round " << k << ": no barrier from Python";
      EXPECT_EQ(m->header.kind, wire::Kind::Barrier);
      EXPECT_EQ(m->header.seq, 2 * k + 1);
      EXPECT_EQ(m->header.stream_id, 5u);
      EXPECT_EQ(m->checkpoint, k + 1);
    }
    std::optional<wire::Message> end = in.recv(milliseconds(60000));
    ASSERT_TRUE(end);
    EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
    EXPECT_FALSE(in.recv(milliseconds(100))) << "acknowledges the end of stream";
    EXPECT_EQ(producer.wait(milliseconds(30000)), 0) << "the Python producer failed (its stderr is above)";
  }
  test::Child consumer({python, kScript, "consume-barriers", dir.ipc("to_python")}, {kPythonPath});
  Channel out(Pattern::Push, ">" + dir.ipc("to_python"), {.peer_timeout = milliseconds(60000)});
  for (uint64_t k = 0; k < kRounds; ++k) {
    out.send({tensor<int64_t>({static_cast<int64_t>(k)})}, 2 * k, 5);
    out.send_barrier(k + 1, 2 * k + 1, 5);
  }
  out.send_end_of_stream(2 * kRounds, 5);
  out.flush(milliseconds(60000));
  EXPECT_EQ(consumer.wait(milliseconds(30000)), 0) << "the Python consumer failed (its stderr is above)";
}

// Updates and refusals both ways on reliable channels: a Python sender's
// updates reach a C++ receiver in order, which refuses one, and the Python
// sender has the refusal when its flush returns; a C++ sender's reach a
// Python receiver, which refuses one, and the C++ sender has it when its
// flush returns.
TEST(PythonInterop, UpdatesAndRefusalsCrossBetweenPythonAndCpp) {
  std::string python = python_or_skip_reason();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  const std::string refusal = "no stage named 'missing' (\xc3\xa9)";  // interop.py's REFUSAL
  const std::vector<float> weights = {1.5f, -2.0f, 3.25f};             // its UPDATE_WEIGHTS
  test::TempDir dir;
  {
    Channel in(Pattern::Pull, "@" + dir.ipc("from_python"));
    test::Child producer({python, kScript, "produce-updates", dir.ipc("from_python")}, {kPythonPath});
    for (uint64_t seq = 0; seq < 5; ++seq) {
      std::optional<wire::Message> m = in.recv(milliseconds(60000));
      ASSERT_TRUE(m) << "seq " << seq << ": nothing from Python";
      EXPECT_EQ(m->header.seq, seq);
      EXPECT_EQ(m->header.stream_id, 5u);
      const wire::Kind want = seq == 4 ? wire::Kind::EndOfStream : seq == 1 || seq == 2 ? wire::Kind::Update
                                                                                         : wire::Kind::Data;
      ASSERT_EQ(m->header.kind, want) << "seq " << seq;
      if (want != wire::Kind::Update) continue;
      EXPECT_EQ(m->target, seq == 1 ? "scale" : "missing");
      EXPECT_EQ(m->tensors.at(0).to_vector<float>(), weights);
      if (seq == 2) in.refuse(*m, refusal);
    }
    EXPECT_FALSE(in.recv(milliseconds(100))) << "acknowledges the end of stream";
    EXPECT_EQ(producer.wait(milliseconds(30000)), 0) << "the Python producer failed (its stderr is above)";
  }
  test::Child consumer({python, kScript, "consume-updates", dir.ipc("to_python")}, {kPythonPath});
  Channel out(Pattern::Push, ">" + dir.ipc("to_python"), {.peer_timeout = milliseconds(60000)});
  out.send({tensor<int64_t>({0})}, 0, 5);
  out.send_update("scale", {tensor<float>({1.5f, -2.0f, 3.25f})}, 0, 5);
  out.send_update("missing", {tensor<float>({1.5f, -2.0f, 3.25f})}, 0, 5);
  out.send({tensor<int64_t>({3})}, 0, 5);
  out.send_end_of_stream(0, 5);
  out.flush(milliseconds(60000));
  std::vector<Refusal> refusals = out.refusals();
  ASSERT_EQ(refusals.size(), 1u) << "when flush returned";
  EXPECT_EQ(refusals[0].seq, 2u);
  EXPECT_EQ(refusals[0].why, refusal);
  EXPECT_EQ(consumer.wait(milliseconds(30000)), 0) << "the Python consumer failed (its stderr is above)";
}

}  // namespace
}  // namespace sluice
