#include <sluice/pipeline/meeting.h>

#include <atomic>
#include <future>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include <sluice/base/log.h>
#include <sluice/io/curve_socket.h>
#include <sluice/base/error.h>
#include <sluice/ops/error_format.h>

namespace sluice {
namespace {

// The endpoint without its '@' or '>' (placement.h gives both forms).
std::string bare(const std::string& endpoint) { return endpoint.substr(1); }

std::string seconds(std::chrono::milliseconds t) {
  std::ostringstream s;
  s << static_cast<double>(t.count()) / 1000.0 << " s";
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "" when `theirs` is `ours`, else where they first differ.
std::string difference(const std::string& process, const std::string& theirs, const std::string& host,
                       const std::string& ours) {
  if (theirs == ours) return {};
  std::vector<std::string> a = lines(theirs), b = lines(ours);
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  auto at = [&](const std::vector<std::string>& v) { return k < v.size() ? "'" + v[k] + "'" : "nothing"; };
  return fmt::format(
      "process '{}' runs another pipeline than process '{}': node {} is {} there, {} in process '{}'",
      process, host, k, at(a), at(b), host);
}

}  // namespace

struct Meeting::Host {
  // In the channels' context, where the ZAP handler of CurveZMQ answers.
  zmq::socket_t socket{channel_context(), zmq::socket_type::router};
  // With the placement's keys: the edges' peers only. Declared after the
  // socket: it stops watching it before the socket closes.
  std::unique_ptr<CurveServer> curve;
  std::atomic<bool> stop{false};
  std::thread latecomers;
};

Meeting::Meeting(const Placement& placement, const std::string& me, std::string description,
                 std::chrono::milliseconds timeout) {
  const std::string& host = placement.processes.at(0).name;
  if (me != host) {
    // A guest: one question, one answer. With the placement's keys, over
    // CurveZMQ as the edges are: the meeting says what every process runs.
    const std::string endpoint = bare(placement.connect_endpoint(host, 0, "meet"));
    const std::string where = "process '" + me + "': the meeting at " + endpoint;
    zmq::socket_t socket(channel_context(), zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    if (placement.curve())
      configure_curve_client(socket.handle(),
                             {.secret = placement.at(me).curve_secret, .server = placement.at(host).curve_public},
                             where);
    HandshakeWatch handshakes(socket.handle(), where);  // ends before the socket closes
    socket.connect(endpoint);
    socket.send(zmq::buffer(me), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(description));
    // Longer than the host waits, so that its verdict on who is missing
    // comes first; a refusal at the handshake ends it at once.
    const auto deadline = std::chrono::steady_clock::now() + timeout + std::chrono::seconds(5);
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    while (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0) {
      if (handshakes.failed() > 0)
        throw PipelineError(where + ": process '" + host + "' " + handshakes.last_reason() + " at the handshake");
      if (std::chrono::steady_clock::now() >= deadline)
        throw PipelineError("process '" + me + "': no answer from process '" + host + "' at " + endpoint +
                            " within " + seconds(timeout + std::chrono::seconds(5)) + " (is it running?)");
    }
    zmq::message_t verdict;
    (void)socket.recv(verdict);
    if (verdict.size() > 0) throw PipelineError(verdict.to_string());
    logger().info("process '{}': met process '{}' at {}, same pipeline", me, host, endpoint);
    return;
  }

  host_ = std::make_unique<Host>();
  zmq::socket_t& socket = host_->socket;
  const std::string endpoint = bare(placement.bind_endpoint(host, 0, "meet"));
  socket.set(zmq::sockopt::linger, 2000);  // the verdicts go out before it closes
  if (placement.curve()) {
    std::vector<std::string> guests;
    for (const ProcessPlace& p : placement.processes)
      if (p.name != host) guests.push_back(p.curve_public);
    host_->curve = std::make_unique<CurveServer>(socket.handle(), placement.at(host).curve_secret, guests,
                                                 "the meeting at " + endpoint);
  }
  socket.bind(endpoint);
  struct Guest {
    zmq::message_t id;
    std::string description;
  };
  // One question: [id][process][description].
  auto ask = [&socket](std::chrono::milliseconds wait) -> std::optional<std::pair<std::string, Guest>> {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, wait) == 0) return std::nullopt;
    std::vector<zmq::message_t> parts;
    do {
      parts.emplace_back();
      (void)socket.recv(parts.back());
    } while (parts.back().more());
    std::pair<std::string, Guest> q;
    q.second.id = std::move(parts[0]);
    if (parts.size() == 3) {
      q.first = parts[1].to_string();
      q.second.description = parts[2].to_string();
    }
    return q;
  };
  auto answer = [&socket](const zmq::message_t& id, const std::string& verdict) {
    socket.send(zmq::buffer(id.data(), id.size()), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(verdict));
  };

  std::map<std::string, Guest> came;
  std::string verdict;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (came.size() + 1 < placement.processes.size()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto question = ask(left);
    if (!question) break;
    auto& [process, guest] = *question;
    if (!placement.has(process) || process == host) {
      answer(guest.id, "the meeting at " + endpoint + " of the placement from " + placement.source +
                           ": expected one of its processes, found '" + process + "'");
      continue;
    }
    if (came.contains(process)) {
      verdict += (verdict.empty() ? "" : "; ") + std::string("process '") + process +
                 "' came twice (two ranks given one role?)";
      answer(guest.id, verdict);
      continue;
    }
    came.emplace(process, std::move(guest));
  }
  std::string missing;
  for (const ProcessPlace& p : placement.processes)
    if (p.name != host && !came.contains(p.name)) missing += (missing.empty() ? "'" : ", '") + p.name + "'";
  if (!missing.empty())
    verdict += (verdict.empty() ? "" : "; ") + std::string("process(es) ") + missing +
               " did not come to the meeting at " + endpoint + " within " + seconds(timeout);
  for (const auto& [process, guest] : came) {
    std::string d = difference(process, guest.description, host, description);
    if (!d.empty()) verdict += (verdict.empty() ? "" : "; ") + d;
  }
  for (const auto& [process, guest] : came) answer(guest.id, verdict);
  if (!verdict.empty()) throw PipelineError(verdict);
  logger().info("process '{}': all {} processes met at {}, same pipeline", host, placement.processes.size(),
                endpoint);
  // Latecomers (a process restarted from a checkpoint) are answered as they come.
  host_->latecomers = std::thread([this, ask, answer, host, description] {
    while (!host_->stop.load()) {
      auto question = ask(std::chrono::milliseconds(100));
      if (question)
        answer(question->second.id,
               difference(question->first, question->second.description, host, description));
    }
  });
}

Meeting::~Meeting() {
  if (!host_) return;
  host_->stop.store(true);
  if (host_->latecomers.joinable()) host_->latecomers.join();
}

}  // namespace sluice
