// CurveZMQ: certificate files as ZeroMQ's tools write them, and channels
// that take only the senders they allow: an unknown key or a plaintext peer
// gets nothing through and is counted.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>

#include <sluice/io/channel.h>
#include <sluice/base/detail/log.h>
#include <sluice/io/curve.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(Curve, CertificatesRoundTripWithTheSecretFileKeptPrivate) {
  test::TempDir dir;
  curve::KeyPair keys = curve::generate();
  EXPECT_EQ(keys.public_key.size(), 40u);
  EXPECT_EQ(keys.secret_key.size(), 40u);
  curve::save(dir.path() + "/peer", keys);
  curve::KeyPair pub = curve::load(dir.path() + "/peer");
  EXPECT_EQ(pub.public_key, keys.public_key);
  EXPECT_TRUE(pub.secret_key.empty()) << "the public certificate holds no secret";
  curve::KeyPair both = curve::load(dir.path() + "/peer_secret");
  EXPECT_EQ(both.secret_key, keys.secret_key);
  struct stat st {};
  ASSERT_EQ(stat((dir.path() + "/peer_secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the secret certificate is readable by its owner alone";
}

// A secret certificate others can read is used, as ssh would not, but with
// a warning that names the file and its mode.
TEST(Curve, ASecretKeyOthersCanReadIsWarnedAbout) {
  test::TempDir dir;
  curve::save(dir.path() + "/peer", curve::generate());
  const std::string secret = dir.path() + "/peer_secret";
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  logger().sinks().push_back(sink);
  curve::load(secret);
  EXPECT_EQ(log.str().find("other users can read"), std::string::npos) << "mode 0600 warned about: " << log.str();
  ASSERT_EQ(chmod(secret.c_str(), 0644), 0);
  curve::load(secret);
  logger().sinks().pop_back();
  EXPECT_NE(log.str().find("other users can read"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find(secret), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("0644"), std::string::npos) << log.str();
}

TEST(Curve, MalformedCertificatesAreWireErrorsNamingTheFile) {
  test::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() + "/" + name) << text;
    return dir.path() + "/" + name;
  };
  const std::string no_curve = write("no_curve", "metadata\n");
  const std::string short_key = write("short_key", "curve\n    public-key = \"abc\"\n");
  const std::string bad_z85 = write("bad_z85", "curve\n    public-key = \"" + std::string(40, '~') + "\"\n");
  for (const std::string& path : {no_curve, short_key, bad_z85, dir.path() + "/missing"}) {
    try {
      curve::load(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

class CurveChannels : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directory(dir_.path() + "/allow");
    curve::save(dir_.path() + "/server", curve::generate());
    curve::save(dir_.path() + "/allow/client", curve::generate());
    curve::save(dir_.path() + "/stranger", curve::generate());
  }
  std::string path(const std::string& name) const { return dir_.path() + "/" + name; }
  ChannelOptions server() const {
    return {.curve = {.secret = path("server_secret"), .allow = path("allow")}};
  }
  // A sender of 1,000 messages that is never let in: its flush fails at
  // once, saying `why`.
  void expect_refused(const ChannelOptions& client_options, const std::string& why) {
    Channel in(Pattern::Pull, "@tcp://127.0.0.1:*", server());
    Channel out(Pattern::Push, ">" + in.bound_endpoint(), client_options);
    for (uint64_t i = 0; i < 1000; ++i) out.send({scalar(static_cast<int64_t>(i))}, i);
    uint64_t delivered = 0;
    auto until = std::chrono::steady_clock::now() + milliseconds(1500);
    while (std::chrono::steady_clock::now() < until)
      if (in.recv(milliseconds(50))) ++delivered;
    EXPECT_EQ(delivered, 0u) << "nothing from a refused peer is delivered";
    EXPECT_GE(in.counters().refused, 1u) << "the refused peer is counted";
    // It once waited its whole peer_timeout and then said "no receiver answered".
    const auto start = std::chrono::steady_clock::now();
    try {
      out.flush(milliseconds(30000));
      ADD_FAILURE() << "the sender's flush passed with nothing taken";
    } catch (const WireError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("1000 message(s) not delivered"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000)) << "the refusal was waited out";
    EXPECT_GE(out.counters().refused, 1u) << "the sender counts the refusal too";
  }
  test::TempDir dir_;
};

TEST_F(CurveChannels, AnAllowedSenderGetsEverythingThrough) {
  Channel in(Pattern::Pull, "@tcp://127.0.0.1:*", server());
  Channel out(Pattern::Push, ">" + in.bound_endpoint(),
              {.curve = {.secret = path("allow/client_secret"), .server = path("server")}});
  std::thread sender([&out] {
    for (uint64_t i = 0; i < 1000; ++i) out.send({scalar(static_cast<int64_t>(i))}, i);
    out.send_end_of_stream(1000);
    out.flush(milliseconds(20000));
  });
  for (int64_t i = 0; i < 1000; ++i) {
    std::optional<wire::Message> m = in.recv(milliseconds(10000));
    ASSERT_TRUE(m) << "message " << i;
    ASSERT_EQ(m->tensors.at(0).to_vector<int64_t>()[0], i);
  }
  std::optional<wire::Message> end = in.recv(milliseconds(10000));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
  in.recv(milliseconds(100));  // acknowledges the end of stream
  sender.join();
  EXPECT_EQ(in.counters().refused, 0u);
}

TEST_F(CurveChannels, ASenderWithAnUnknownKeyIsRefusedAndCounted) {
  expect_refused({.curve = {.secret = path("stranger_secret"), .server = path("server")}}, "refused: unknown key");
}

TEST_F(CurveChannels, APlaintextSenderIsRefusedAndCounted) { expect_refused({}, "refused: plaintext peer"); }

// An allow-list without this side's secret once made a plaintext receiver
// that took every sender; a server key without one, a plaintext sender.
TEST_F(CurveChannels, CurveOptionsWithoutASecretAreConfigErrors) {
  for (auto [pattern, options] : {std::pair{Pattern::Pull, CurveOptions{.allow = path("allow")}},
                                  std::pair{Pattern::Push, CurveOptions{.server = path("server")}}}) {
    try {
      Channel c(pattern, pattern == Pattern::Pull ? "@tcp://127.0.0.1:*" : ">tcp://127.0.0.1:1", {.curve = options});
      ADD_FAILURE() << "a channel with curve options and no secret was made";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("no secret"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace sluice
