// The other process of the two-process tests:
//   wire_peer produce ENDPOINT COUNT
// runs a pipeline of COUNT messages (test::peer_message) into a ZeroMQ sink
// connected to ENDPOINT, then exits 0 (1 on any error, with the reason on stderr).

#include <cstdio>
#include <exception>
#include <string>

#include "pipeline/pipeline.h"
#include "pipeline/zmq_nodes.h"
#include "tests/io/wire_test_util.h"

int main(int argc, char** argv) {
  using namespace sluice;
  if (argc != 4 || std::string(argv[1]) != "produce") {
    std::fprintf(stderr, "usage: wire_peer produce ENDPOINT COUNT\n");
    return 2;
  }
  try {
    const uint64_t count = std::stoull(argv[3]);
    uint64_t next = 0;
    Pipeline p;
    auto messages = p.source("messages", sources::generator(test::peer_message_spec(), [&]() -> std::optional<Tensors> {
      if (next == count) return std::nullopt;
      return test::peer_message(next++);
    }));
    p.connect(messages, p.sink("send", sinks::zmq(std::string(">") + argv[2])));
    p.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wire_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
