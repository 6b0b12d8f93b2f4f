// Two pipelines of this process serving their metrics, slow enough to be
// scraped while they run, for metrics_scrape_test.py:
//
//   producer: numbers -> square "x"\y (a stage; its name needs escaping) -> out (ZeroMQ sink)
//   consumer: in (ZeroMQ source) -> batch (a batched stage) -> drop (a sink)
//
// The producer stores checkpoints every 100 ms. Prints
// "producer PORT consumer PORT" once both serve, runs about `seconds`
// (argv[1], default 3) and exits 0 when every message arrived.

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/pipeline/temp_dir.h"

int main(int argc, char** argv) {
  using namespace sluice;
  using std::chrono::milliseconds;
  const double seconds = argc > 1 ? std::stod(argv[1]) : 3.0;
  const int64_t messages = static_cast<int64_t>(seconds * 200);  // one every 5 ms
  TempDir dir;
  const std::string endpoint = "ipc://" + dir.path() + "/edge.ipc";

  Pipeline consumer({.name = "consumer", .metrics_port = -1});
  NodeId in = consumer.source("in", sources::zmq("@" + endpoint, {s64()}));
  NodeId batch =
      consumer.stage("batch", [](Expr x) { return x + 1; },
                     {.input = {s64()}, .batch = {.size = 4, .timeout = std::chrono::microseconds(2000)}});
  NodeId drop = consumer.sink("drop", [](const Tensor&) {});
  consumer.connect(in, batch);
  consumer.connect(batch, drop);

  PipelineOptions o{.name = "producer", .metrics_port = -1};
  o.checkpoint_dir = dir.path() + "/checkpoints";
  o.checkpoint_interval.time = milliseconds(100);
  Pipeline producer(o);
  NodeId numbers =
      producer.source("numbers", sources::indexed({s64()}, [messages](uint64_t k) -> std::optional<Tensors> {
                        if (static_cast<int64_t>(k) >= messages) return std::nullopt;
                        std::this_thread::sleep_for(milliseconds(5));
                        return Tensors{scalar<int64_t>(static_cast<int64_t>(k))};
                      }));
  NodeId square = producer.stage("square \"x\"\\y", [](Expr x) { return x * x; }, {.input = {s64()}});
  NodeId out = producer.sink("out", sinks::zmq(">" + endpoint));
  producer.connect(numbers, square);
  producer.connect(square, out);

  consumer.start();
  producer.start();
  std::cout << "producer " << producer.metrics_port() << " consumer " << consumer.metrics_port() << std::endl;
  producer.wait();
  PipelineResult r = consumer.wait();
  if (r.metrics_of("drop").messages_in != static_cast<uint64_t>(messages)) {
    std::cerr << "metrics_peer: expected " << messages << " messages at the end, found "
              << r.metrics_of("drop").messages_in << "\n";
    return 1;
  }
  return 0;
}
