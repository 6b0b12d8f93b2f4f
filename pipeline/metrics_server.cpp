#include <sluice/pipeline/metrics_server.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <httplib.h>

#include <sluice/devices/log.h>
#include <sluice/ops/error.h>
#include <sluice/ops/error_format.h>

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNice = 10;  // how much nicer the serving threads are than the rest
// A client has this long, from its connection, to send its request and take
// the answer: a scrape takes milliseconds, and a client that trickles its
// bytes (slowloris) holds a thread no longer than this.
constexpr auto kConnectionDeadline = std::chrono::seconds(2);
// Connections answered at once, and accepted ones waiting for a thread;
// beyond those a connection is answered 503 at once and closed.
constexpr size_t kAnswering = 4, kWaiting = 16;

// One client's socket read and written against its connection's deadline.
// cpp-httplib's own stream times each read alone, so a byte every second
// kept a connection for ever.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, Clock::time_point deadline) : sock_(sock), deadline_(deadline) {}
  bool is_readable() const override { return wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }
  ssize_t read(char* ptr, size_t size) override {
    if (!wait(POLLIN)) return -1;
    return ::recv(sock_, ptr, size, MSG_DONTWAIT);
  }
  ssize_t write(const char* ptr, size_t size) override {
    size_t sent = 0;
    while (sent < size) {
      if (!wait(POLLOUT)) return -1;
      const ssize_t n = ::send(sock_, ptr + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return -1;
      if (n > 0) sent += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  // Whether the socket is ready for `events` before the deadline.
  bool wait(short events) const {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{sock_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left));
      if (n < 0 && errno == EINTR) continue;
      return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
    }
  }
  template <typename Get>
  void address(Get get, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear();
    port = 0;
    if (get(sock_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      port = ntohs(in->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
      ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
      port = ntohs(in->sin6_port);
    }
    ip = text;
  }

  socket_t sock_;
  Clock::time_point deadline_;
};

// A thread on which a task runs as it is enqueued finds this set: the
// queue was full, and the connection is to be turned away.
thread_local bool turn_away = false;

// kAnswering threads and at most kWaiting connections waiting for one.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool() {
    for (size_t i = 0; i < kAnswering; ++i)
      threads_.emplace_back([this] {
        // Below the stages: a scrape waking on a busy machine should not
        // preempt a worker in the middle of a serial stage, which stalls
        // every message behind it.
        const auto self = static_cast<id_t>(gettid());
        setpriority(PRIO_PROCESS, self, std::min(19, getpriority(PRIO_PROCESS, self) + kNice));
        work();
      });
  }
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lock(mutex_);
      if (jobs_.size() < kWaiting) {
        jobs_.push_back(std::move(fn));
        ready_.notify_one();
        return;
      }
    }
    turn_away = true;  // on the accepting thread: the task only answers 503 and closes
    fn();
    turn_away = false;
  }
  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// cpp-httplib's server answering one request per connection, each against
// its deadline, and letting go of every client at once when it closes.
class DeadlineServer : public httplib::Server {
 public:
  // Shuts down every connection being answered: no client holds close().
  void drop_clients() {
    std::lock_guard lock(mutex_);
    closing_ = true;
    for (socket_t s : open_) ::shutdown(s, SHUT_RDWR);
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    bool answered = false;
    if (turn_away) {
      static constexpr char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::send(sock, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (enter(sock)) {
      DeadlineStream stream(sock, Clock::now() + kConnectionDeadline);
      bool closed = false;
      answered = process_request(stream, /*close_connection=*/true, closed, nullptr);
      leave(sock);
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return answered;
  }
  bool enter(socket_t sock) {
    std::lock_guard lock(mutex_);
    if (closing_) return false;
    open_.insert(sock);
    return true;
  }
  void leave(socket_t sock) {
    std::lock_guard lock(mutex_);
    open_.erase(sock);
  }

  std::mutex mutex_;
  std::set<socket_t> open_;
  bool closing_ = false;
};

}  // namespace

struct MetricsServer::Impl {
  DeadlineServer server;
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
  DeadlineServer& s = m.server;
  s.new_task_queue = [] { return new BoundedPool; };
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
  m.server.drop_clients();
}

void MetricsServer::stop() {
  close();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int MetricsServer::port() const { return impl_->port; }

}  // namespace sluice
