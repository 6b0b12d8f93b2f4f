#include <sluice/pipeline/detail/metrics_server.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
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
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <httplib.h>

#include <sluice/base/detail/log.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNice = 10;  // how much nicer the serving threads are than the rest
// A client has this long, from its connection, to send its request and take
// the answer: a scrape takes milliseconds.
constexpr auto kConnectionDeadline = std::chrono::seconds(2);
// Requests are read by one thread that polls every client at once, so a
// client that trickles its bytes (slowloris) costs a poll entry, never a
// thread; at most kReading are read at once. Whole requests wait, at most
// kWaiting of them, for one of kAnswering threads. Beyond either bound a
// connection is answered 503 at once and closed.
constexpr size_t kReading = 256, kWaiting = 32, kAnswering = 2;
// The most bytes of a request's line and headers (a scrape sends about 200).
constexpr size_t kMaxRequestHead = 16 * 1024;

// One client's socket read and written against its connection's deadline,
// the bytes read ahead first. cpp-httplib's own stream times each read
// alone, so a byte every second kept a connection for ever.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, Clock::time_point deadline, std::string ahead)
      : sock_(sock), deadline_(deadline), ahead_(std::move(ahead)) {}
  bool is_readable() const override { return at_ < ahead_.size() || wait(POLLIN); }
  bool is_writable() const override { return wait(POLLOUT); }
  ssize_t read(char* ptr, size_t size) override {
    if (at_ < ahead_.size()) {
      const size_t n = std::min(size, ahead_.size() - at_);
      std::memcpy(ptr, ahead_.data() + at_, n);
      at_ += n;
      return static_cast<ssize_t>(n);
    }
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
  std::string ahead_;
  size_t at_ = 0;
};

void close_client(socket_t sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

void turn_away(socket_t sock) {
  static constexpr char kBusy[] =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)!::send(sock, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  close_client(sock);
}

// cpp-httplib's accepting thread hands each connection to the server at
// once (DeadlineServer::take never blocks).
struct HandOver : httplib::TaskQueue {
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// cpp-httplib's server, its connections read by one polling thread and
// answered by a few others, each against its deadline, one request per
// connection; close_clients() lets go of every client at once.
class DeadlineServer : public httplib::Server {
 public:
  DeadlineServer() : wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_ < 0)
      throw PipelineError(error_message("metrics", fmt::format("eventfd: {}", std::strerror(errno)), "", ""));
    new_task_queue = [] { return new HandOver; };
    threads_.emplace_back([this] { read_requests(); });
    for (size_t i = 0; i < kAnswering; ++i) threads_.emplace_back([this] { answer(); });
  }
  ~DeadlineServer() override {
    close_clients();
    join();
    ::close(wake_);
  }
  DeadlineServer(const DeadlineServer&) = delete;
  DeadlineServer& operator=(const DeadlineServer&) = delete;

  // Takes nothing more and closes every client, read or being answered.
  void close_clients() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      for (auto& [sock, request] : reading_) close_client(sock);
      reading_.clear();
      for (auto& [sock, request] : complete_) close_client(sock);
      complete_.clear();
      for (socket_t sock : answering_) ::shutdown(sock, SHUT_RDWR);  // its thread closes it
    }
    ready_.notify_all();
    wake();
  }
  void join() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  struct Request {
    Clock::time_point deadline;
    std::string head;  // what was read of it
  };

  // On cpp-httplib's accepting thread.
  bool process_and_close_socket(socket_t sock) override {
    {
      std::lock_guard lock(mutex_);
      if (!closing_ && reading_.size() < kReading) {
        reading_.emplace(sock, Request{Clock::now() + kConnectionDeadline, {}});
        wake();
        return true;
      }
    }
    turn_away(sock);
    return false;
  }

  void wake() {
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
  }

  // The polling thread: reads every client's request until it is whole,
  // then hands it to the answering threads.
  void read_requests() {
    std::vector<pollfd> polled;
    for (;;) {
      int timeout = -1;
      polled.assign(1, pollfd{wake_, POLLIN, 0});
      {
        std::lock_guard lock(mutex_);
        if (closing_) return;
        const Clock::time_point now = Clock::now();
        for (const auto& [sock, request] : reading_) {
          polled.push_back({sock, POLLIN, 0});
          const auto left = std::chrono::ceil<std::chrono::milliseconds>(request.deadline - now).count();
          timeout = timeout < 0 ? static_cast<int>(std::max<int64_t>(left, 0))
                                : std::min(timeout, static_cast<int>(std::max<int64_t>(left, 0)));
        }
      }
      if (::poll(polled.data(), polled.size(), timeout) < 0 && errno != EINTR) return;
      if (polled[0].revents & POLLIN) {
        uint64_t drained;
        (void)!::read(wake_, &drained, sizeof drained);
      }
      std::lock_guard lock(mutex_);
      if (closing_) return;
      for (size_t i = 1; i < polled.size(); ++i)
        if (polled[i].revents != 0) read_some(polled[i].fd);
      // Past their deadline, whatever they sent: cut off.
      const Clock::time_point now = Clock::now();
      for (auto it = reading_.begin(); it != reading_.end();) {
        if (now < it->second.deadline) {
          ++it;
          continue;
        }
        close_client(it->first);
        it = reading_.erase(it);
      }
    }
  }

  // With mutex_ held: what client `sock` sent; a whole request goes to be answered.
  void read_some(socket_t sock) {
    auto it = reading_.find(sock);
    if (it == reading_.end()) return;
    char buffer[4096];
    const ssize_t n = ::recv(sock, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    std::string& head = it->second.head;
    if (n > 0) head.append(buffer, static_cast<size_t>(n));
    if (n <= 0 || head.size() > kMaxRequestHead) {  // gone, or no request a scrape sends
      close_client(sock);
      reading_.erase(it);
      return;
    }
    if (head.find("\r\n\r\n") == std::string::npos) return;
    Request request = std::move(it->second);
    reading_.erase(it);
    if (complete_.size() >= kWaiting) return turn_away(sock);
    complete_.emplace_back(sock, std::move(request));
    ready_.notify_one();
  }

  // An answering thread.
  void answer() {
    // Below the stages: a scrape waking on a busy machine should not
    // preempt a worker in the middle of a serial stage, which stalls every
    // message behind it.
    const auto self = static_cast<id_t>(gettid());
    setpriority(PRIO_PROCESS, self, std::min(19, getpriority(PRIO_PROCESS, self) + kNice));
    for (;;) {
      std::pair<socket_t, Request> next;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return closing_ || !complete_.empty(); });
        if (closing_) return;
        next = std::move(complete_.front());
        complete_.pop_front();
        answering_.insert(next.first);
      }
      DeadlineStream stream(next.first, next.second.deadline, std::move(next.second.head));
      bool closed = false;
      process_request(stream, /*close_connection=*/true, closed, nullptr);
      {
        std::lock_guard lock(mutex_);
        answering_.erase(next.first);
      }
      close_client(next.first);
    }
  }

  const int wake_;  // an eventfd: new connections, or closing
  std::mutex mutex_;
  std::condition_variable ready_;
  bool closing_ = false;
  std::map<socket_t, Request> reading_;
  std::deque<std::pair<socket_t, Request>> complete_;
  std::set<socket_t> answering_;
  std::vector<std::thread> threads_;
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
  m.server.close_clients();
}

void MetricsServer::stop() {
  close();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->server.join();
}

int MetricsServer::port() const { return impl_->port; }

}  // namespace sluice
