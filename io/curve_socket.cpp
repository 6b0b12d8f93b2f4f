// CurveZMQ on a ZeroMQ socket (curve_socket.h): the process's ZAP handler,
// the server and client ends, and the monitor that watches handshakes.

#include <sluice/io/detail/curve_socket.h>

#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <sluice/base/detail/error_format.h>
#include <sluice/base/detail/log.h>
#include <sluice/io/curve.h>

namespace sluice {
namespace {

std::string binary_key(const std::string& z85, const std::string& where) {
  std::string out(32, '\0');
  if (z85.size() != 40 || !zmq_z85_decode(reinterpret_cast<uint8_t*>(out.data()), z85.c_str()))
    throw WireError(error_message(where, "", "a 40-character Z85 key", ""));
  return out;
}

// The process's one ZAP handler: every CurveZMQ server socket of the
// context asks it, under the domain its channel registered, whether a
// client key may in. Made after the context, so destroyed before it.
class ZapHandler {
 public:
  explicit ZapHandler(void* context) : socket_(zmq_socket(context, ZMQ_REP)) {
    if (zmq_bind(socket_, "inproc://zeromq.zap.01") != 0)
      throw WireError(error_message(
          "curve", fmt::format("ZAP handler: bind failed: {}", zmq_strerror(zmq_errno())), "", ""));
    thread_ = std::thread([this] { serve(); });
  }
  ~ZapHandler() {
    stop_.store(true);
    thread_.join();
    zmq_close(socket_);
  }

  void allow(const std::string& domain, std::set<std::string> keys) {
    std::lock_guard lock(mutex_);
    domains_[domain] = std::move(keys);
  }
  void forget(const std::string& domain) {
    std::lock_guard lock(mutex_);
    domains_.erase(domain);
  }

 private:
  void serve() {
    while (!stop_.load()) {
      zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 100) <= 0) continue;
      std::vector<std::string> request;
      int more = 1;
      while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, socket_, 0) < 0) {
          zmq_msg_close(&part);
          break;
        }
        request.emplace_back(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
        more = zmq_msg_more(&part);
        zmq_msg_close(&part);
      }
      // version, request id, domain, address, identity, mechanism, credentials...
      bool allowed = false;
      if (request.size() >= 7 && request[0] == "1.0" && request[5] == "CURVE") {
        std::lock_guard lock(mutex_);
        auto it = domains_.find(request[2]);
        allowed = it != domains_.end() && it->second.count(request[6]) > 0;
      }
      const std::string id = request.size() > 1 ? request[1] : std::string();
      const char* status = allowed ? "200" : "400";
      const char* text = allowed ? "OK" : "key not allowed";
      const std::string reply[] = {"1.0", id, status, text, "", ""};
      for (size_t i = 0; i < 6; ++i)
        zmq_send(socket_, reply[i].data(), reply[i].size(), i + 1 < 6 ? ZMQ_SNDMORE : 0);
    }
  }

  void* socket_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<std::string, std::set<std::string>> domains_;
  std::thread thread_;
};

ZapHandler& zap_handler() {
  static ZapHandler handler(Channel::zmq_context());
  return handler;
}

// Why a handshake failed, from its monitor event.
std::string reason_of(uint16_t event, uint32_t value) {
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return "refused: unknown key (a public key the server's allow-list does not have)";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        return "refused: plaintext peer (one end speaks CurveZMQ, the other not)";
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
        return "refused: the keys do not agree (a wrong server key?)";
      return fmt::format("refused: a ZMTP protocol error ({:#x})", value);
    default: return "cut off in the handshake (no reason given: a connection dropped?)";
  }
}

void set_option(void* socket, int option, const std::string& value, const std::string& where) {
  if (zmq_setsockopt(socket, option, value.data(), value.size()) != 0)
    throw WireError(error_message(
        where, fmt::format("curve: setting a socket option failed: {}", zmq_strerror(zmq_errno())), "", ""));
}

}  // namespace

// Every watch's monitor socket, read as events come by one thread of the
// process. A socket monitor that is not read blocks ZeroMQ's I/O thread,
// and with it every socket of the context, once a thousand events wait
// (libzmq sends them to its PAIR without ZMQ_DONTWAIT): a peer refused over
// and over must not stop the process.
class HandshakeReader {
 public:
  static HandshakeReader& instance() {
    channel_context();  // made first, so destroyed after the reader
    static HandshakeReader reader;
    return reader;
  }
  void add(HandshakeWatch* w) {
    std::lock_guard lock(mutex_);
    watches_.push_back(w);
  }
  // Once this returns, the reader no longer touches `w`; it closes w's
  // monitor socket itself, which a poll of its may be using now.
  void remove(HandshakeWatch* w) {
    std::lock_guard lock(mutex_);
    watches_.erase(std::remove(watches_.begin(), watches_.end(), w), watches_.end());
    to_close_.push_back(w->monitor_);
  }

 private:
  HandshakeReader() : thread_([this] { run(); }) {}
  ~HandshakeReader() {
    stop_.store(true);
    thread_.join();
    close_removed();
  }
  // With mutex_ held, and no poll running.
  void close_removed() {
    for (void* monitor : to_close_) zmq_close(monitor);
    to_close_.clear();
  }
  void run() {
    std::vector<zmq_pollitem_t> items;
    while (!stop_.load()) {
      {
        std::lock_guard lock(mutex_);
        close_removed();
        items.clear();
        for (HandshakeWatch* w : watches_) items.push_back({w->monitor_, 0, ZMQ_POLLIN, 0});
      }
      if (items.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      // Watches made meanwhile are polled from the next round on.
      if (zmq_poll(items.data(), static_cast<int>(items.size()), 50) <= 0) continue;
      std::lock_guard lock(mutex_);
      for (HandshakeWatch* w : watches_)
        for (const zmq_pollitem_t& item : items)
          if (item.socket == w->monitor_ && (item.revents & ZMQ_POLLIN)) w->read();
    }
  }

  std::mutex mutex_;  // guards watches_, to_close_ and every use of their monitor sockets
  std::vector<HandshakeWatch*> watches_;
  std::vector<void*> to_close_;  // monitor sockets of watches gone
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

HandshakeWatch::HandshakeWatch(void* socket, std::string where) : where_(std::move(where)), socket_(socket) {
  static std::atomic<uint64_t> watches{0};
  const std::string address = fmt::format("inproc://sluice-handshakes-{}", watches.fetch_add(1));
  if (zmq_socket_monitor(socket, address.c_str(),
                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
    throw WireError(
        error_message(where_, fmt::format("socket monitor failed: {}", zmq_strerror(zmq_errno())), "", ""));
  monitor_ = zmq_socket(Channel::zmq_context(), ZMQ_PAIR);
  const int linger = 0;
  zmq_setsockopt(monitor_, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(monitor_, address.c_str()) != 0) {
    const std::string why = zmq_strerror(zmq_errno());
    zmq_socket_monitor(socket, nullptr, 0);
    zmq_close(monitor_);
    throw WireError(error_message(where_, "socket monitor failed: " + why, "", ""));
  }
  HandshakeReader::instance().add(this);
}

HandshakeWatch::~HandshakeWatch() { stop(); }

void HandshakeWatch::stop() {
  if (!socket_) return;
  // No event is sent once this returns, so the reader may go.
  zmq_socket_monitor(socket_, nullptr, 0);
  socket_ = nullptr;
  HandshakeReader::instance().remove(this);
}

uint64_t HandshakeWatch::failed() const { return failed_.load(); }

uint64_t HandshakeWatch::refused() const { return refused_.load(); }

std::string HandshakeWatch::last_reason() const {
  std::lock_guard lock(mutex_);
  return last_reason_;
}

void HandshakeWatch::read() {
  zmq_msg_t event, address;
  zmq_msg_init(&event);
  zmq_msg_init(&address);
  while (zmq_msg_recv(&event, monitor_, ZMQ_DONTWAIT) >= 0) {
    (void)zmq_msg_recv(&address, monitor_, 0);  // an event is two frames: what, and the peer's address
    uint16_t what = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&event) >= sizeof what + sizeof value) {
      std::memcpy(&what, zmq_msg_data(&event), sizeof what);
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&event)) + sizeof what, sizeof value);
    }
    const std::string reason = reason_of(what, value);
    {
      std::lock_guard lock(mutex_);
      last_reason_ = reason;
    }
    // Counted once the reason is there: who sees the count sees a reason.
    if (what != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) refused_.fetch_add(1);
    const uint64_t count = failed_.fetch_add(1) + 1;
    logger().warn("{}: a peer at {} was {} ({} so far)", where_,
                  std::string(static_cast<const char*>(zmq_msg_data(&address)), zmq_msg_size(&address)), reason,
                  count);
  }
  zmq_msg_close(&event);
  zmq_msg_close(&address);
}

std::vector<std::string> certificates_in(const std::string& directory, const std::string& where) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec))
    if (entry.is_regular_file()) out.push_back(entry.path().string());
  if (ec)
    throw WireError(
        error_message(where, fmt::format("curve: allow directory {}: {}", directory, ec.message()), "", ""));
  return out;
}

CurveServer::CurveServer(void* socket, const std::string& secret, const std::vector<std::string>& allowed,
                         const std::string& where) {
  curve::KeyPair own = curve::load(secret);
  if (own.secret_key.empty())
    throw WireError(error_message(where, "curve: " + secret, "a secret certificate", ""));
  std::set<std::string> keys;
  for (const std::string& certificate : allowed)
    keys.insert(binary_key(curve::load(certificate).public_key, certificate));
  static std::atomic<uint64_t> domains{0};
  domain_ = fmt::format("sluice-{}", domains.fetch_add(1));
  zap_handler().allow(domain_, std::move(keys));
  const int on = 1;
  zmq_setsockopt(socket, ZMQ_CURVE_SERVER, &on, sizeof on);
  set_option(socket, ZMQ_CURVE_SECRETKEY, own.secret_key, where);
  set_option(socket, ZMQ_ZAP_DOMAIN, domain_, where);
  // Every refused peer shows as a failed handshake: an unknown key (ZAP
  // said no), a plaintext peer, a wrong server key.
  watch_ = std::make_unique<HandshakeWatch>(socket, where + ": curve");
}

CurveServer::~CurveServer() { zap_handler().forget(domain_); }

void configure_curve_client(void* socket, const CurveOptions& o, const std::string& where) {
  if (o.server.empty())
    throw WireError(error_message(
        where, "curve: a sending end with a secret key needs the receiver's public certificate", "", ""));
  curve::KeyPair own = curve::load(o.secret);
  if (own.secret_key.empty())
    throw WireError(error_message(where, "curve: " + o.secret, "a secret certificate", ""));
  set_option(socket, ZMQ_CURVE_SERVERKEY, curve::load(o.server).public_key, where);
  set_option(socket, ZMQ_CURVE_PUBLICKEY, own.public_key, where);
  set_option(socket, ZMQ_CURVE_SECRETKEY, own.secret_key, where);
}

}  // namespace sluice
