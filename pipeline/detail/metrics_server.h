#pragma once
// Serves a running pipeline's metrics over HTTP (PipelineOptions::metrics_port):
// GET /metrics in Prometheus' text format, GET /metrics.json as JSON.
// No client can hold it: one thread reads every connection's request at
// once, so a client that trickles its bytes costs no thread; each
// connection has 2 s, from its connection, to send its request and take the
// answer; 256 connections are read at once and 32 whole requests wait for
// one of two answering threads, any beyond are answered 503; and close()
// cuts every client off.
// Internal: cpp-httplib stays in metrics_server.cpp.

#include <functional>
#include <memory>
#include <string>

namespace sluice {

class MetricsServer {
 public:
  struct Pages {
    std::function<std::string()> prometheus;  // /metrics
    std::function<std::string()> json;        // /metrics.json
  };
  // Binds `address`:`port` (-1: any free port) at once, so that a port in
  // use fails before the run starts: PipelineError naming it.
  MetricsServer(const std::string& address, int port, Pages pages);
  ~MetricsServer();  // stops
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Serves on a thread of its own until close().
  void start();
  // Closes the port and cuts off every client: nothing more is taken. An
  // answer in progress may still call the pages until stop().
  void close();
  // close(), then waits for the serving threads, which no client holds.
  void stop();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
