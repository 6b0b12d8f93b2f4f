// CurveZMQ on a channel's socket: the server side (a receiving channel),
// with a ZAP handler (ZeroMQ RFC 27) that lets in the public keys of an
// allow-list and a socket monitor that counts every peer refused at the
// handshake; and the client side (a sending channel).

#include <zmq.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <sluice/devices/log.h>
#include <sluice/io/channel_impl.h>
#include <sluice/io/curve.h>
#include <sluice/ops/error_format.h>

namespace sluice::channel_detail {
namespace {

std::string binary_key(const std::string& z85, const std::string& where) {
  std::string out(32, '\0');
  if (z85.size() != 40 || !zmq_z85_decode(reinterpret_cast<uint8_t*>(out.data()), z85.c_str()))
    throw WireError(where + ": expected a 40-character Z85 key");
  return out;
}

// The process's one ZAP handler: every CurveZMQ server socket of the
// context asks it, under the domain its channel registered, whether a
// client key may in. Made after the context, so destroyed before it.
class ZapHandler {
 public:
  explicit ZapHandler(void* context) : socket_(zmq_socket(context, ZMQ_REP)) {
    if (zmq_bind(socket_, "inproc://zeromq.zap.01") != 0)
      throw WireError(std::string("curve: ZAP handler: bind failed: ") + zmq_strerror(zmq_errno()));
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

}  // namespace

CurveServer::CurveServer(zmq::socket_t& socket, const CurveOptions& o, const std::string& where) {
  if (o.allow.empty())
    throw WireError(where + ": curve: a receiving channel with a secret key needs an allow directory of client keys");
  curve::KeyPair own = curve::load(o.secret);
  if (own.secret_key.empty()) throw WireError(where + ": curve: " + o.secret + ": expected a secret certificate");
  std::set<std::string> allowed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(o.allow, ec)) {
    if (!entry.is_regular_file()) continue;
    allowed.insert(binary_key(curve::load(entry.path().string()).public_key, entry.path().string()));
  }
  if (ec) throw WireError(where + ": curve: allow directory " + o.allow + ": " + ec.message());
  static std::atomic<uint64_t> domains{0};
  domain_ = fmt::format("sluice-{}", domains.fetch_add(1));
  zap_handler().allow(domain_, std::move(allowed));
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
  socket.set(zmq::sockopt::zap_domain, domain_);
  // Every refused peer shows as a failed handshake: an unknown key (ZAP
  // said no), a plaintext peer, a wrong server key.
  const std::string monitor = "inproc://" + domain_ + "-monitor";
  if (zmq_socket_monitor(socket.handle(), monitor.c_str(),
                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
    throw WireError(where + ": curve: socket monitor failed: " + zmq_strerror(zmq_errno()));
  monitor_ = zmq::socket_t(channel_context(), zmq::socket_type::pair);
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(monitor);
}

CurveServer::~CurveServer() { zap_handler().forget(domain_); }

uint64_t CurveServer::refused(const std::string& where) {
  zmq::message_t event, address;
  while (monitor_.recv(event, zmq::recv_flags::dontwait)) {
    (void)monitor_.recv(address, zmq::recv_flags::none);  // an event is two frames
    ++refused_;
    logger().warn("{}: curve: a peer was refused at the handshake (an unknown key, no CurveZMQ, or a wrong server key)",
                  where);
  }
  return refused_;
}

void configure_curve_client(zmq::socket_t& socket, const CurveOptions& o, const std::string& where) {
  if (o.server.empty())
    throw WireError(where + ": curve: a sending channel with a secret key needs the receiver's public certificate");
  curve::KeyPair own = curve::load(o.secret);
  if (own.secret_key.empty()) throw WireError(where + ": curve: " + o.secret + ": expected a secret certificate");
  socket.set(zmq::sockopt::curve_serverkey, curve::load(o.server).public_key);
  socket.set(zmq::sockopt::curve_publickey, own.public_key);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
}

}  // namespace sluice::channel_detail
