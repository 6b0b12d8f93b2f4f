#include <sluice/pipeline/metrics_server.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <httplib.h>

#include <sluice/devices/log.h>
#include <sluice/ops/error.h>
#include <sluice/ops/error_format.h>

namespace sluice {

namespace {
constexpr int kNice = 10;  // how much nicer the serving thread is than the rest
// Answers each connection on the thread that accepted it: scrapes are rare
// and small, and the thread is started and joined with every run.
struct AnswerInline : httplib::TaskQueue {
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};
}  // namespace

struct MetricsServer::Impl {
  httplib::Server server;
  std::string address;
  int port = 0;
  std::thread thread;
  std::atomic<bool> listening_ended{false};
  bool started = false, closed = false;
};

MetricsServer::MetricsServer(const std::string& address, int port, Pages pages)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.address = address;
  httplib::Server& s = m.server;
  s.new_task_queue = [] { return new AnswerInline; };
  // One request per connection and short timeouts: a client holds the one
  // thread while its connection is open, and stop() waits for it.
  s.set_keep_alive_max_count(1);
  s.set_keep_alive_timeout(1);
  s.set_read_timeout(1, 0);
  s.set_write_timeout(1, 0);
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, with which a
  // second server on a port in use binds it too instead of failing.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  auto page = [](std::function<std::string()> make, const char* type) {
    return [make = std::move(make), type](const httplib::Request&, httplib::Response& res) {
      try {
        res.set_content(make(), type);
      } catch (const std::exception& e) {
        res.status = 500;
        res.set_content(std::string("metrics: ") + e.what() + "\n", "text/plain");
      }
    };
  };
  s.Get("/metrics", page(std::move(pages.prometheus), "text/plain; version=0.0.4; charset=utf-8"));
  s.Get("/metrics.json", page(std::move(pages.json), "application/json"));

  errno = 0;
  if (port < 0) {
    m.port = s.bind_to_any_port(address);
  } else if (s.bind_to_port(address, port)) {
    m.port = port;
  }
  if (m.port <= 0) {
    const int error = errno;
    throw PipelineError(
        error_message(fmt::format("metrics_port {} on '{}'", port, address), "", "a port to serve metrics on",
                      error != 0 ? fmt::format("it in use or not bindable ({})", std::strerror(error))
                                 : "it in use or not bindable"));
  }
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::start() {
  Impl& m = *impl_;
  if (m.started) return;
  m.started = true;
  m.thread = std::thread([&m] {
    // Below the stages: a scrape waking on a busy machine should not
    // preempt a worker in the middle of a serial stage, which stalls every
    // message behind it.
    const auto self = static_cast<id_t>(gettid());
    setpriority(PRIO_PROCESS, self, std::min(19, getpriority(PRIO_PROCESS, self) + kNice));
    if (!m.server.listen_after_bind()) logger().warn("metrics on {}:{}: serving stopped", m.address, m.port);
    m.listening_ended.store(true);
  });
  logger().info("metrics served on http://{}:{}/metrics", m.address, m.port);
}

void MetricsServer::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  // A port bound and never served is closed the one way cpp-httplib offers.
  if (!m.started) start();
  m.closed = true;
  // cpp-httplib's stop() closes the port only once the server runs.
  while (!m.server.is_running() && !m.listening_ended.load())
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  m.server.stop();
}

void MetricsServer::stop() {
  close();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int MetricsServer::port() const { return impl_->port; }

}  // namespace sluice
