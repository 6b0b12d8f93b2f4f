#include <sluice/pipeline/detail/meeting.h>

#include <atomic>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <sluice/base/detail/log.h>
#include <sluice/io/detail/request_reply.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

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
  std::unique_ptr<ReplySocket> socket;  // the latecomers' thread uses it last, and closes it
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
    CurveOptions curve;
    if (placement.curve()) curve = {.secret = placement.at(me).curve_secret, .server = placement.at(host).curve_public};
    RequestSocket socket(endpoint, false, {.where = where}, curve);
    // Longer than the host waits, so that its verdict on who is missing
    // comes first; a refusal at the handshake ends it at once (a handshake
    // merely cut off is tried again, as ZeroMQ reconnects).
    const auto deadline = std::chrono::steady_clock::now() + timeout + std::chrono::seconds(5);
    auto refused = [&] {
      if (socket.handshakes().refused() > 0)
        throw PipelineError(error_message(
            where, "", fmt::format("to be let in by process '{}'", host),
            fmt::format("process '{}' {} at the handshake", host, socket.handshakes().last_reason())));
    };
    auto late = [&] {
      return PipelineError(error_message(fmt::format("process '{}'", me), "",
                                         fmt::format("an answer from process '{}' at {} within {}", host,
                                                     endpoint, seconds(timeout + std::chrono::seconds(5))),
                                         "none (is it running?)"));
    };
    // A socket the host refused at the handshake never has room: bounded.
    for (;;) {
      const RequestSocket::Sent sent =
          socket.send({text_frame(me), text_frame(description)}, std::chrono::milliseconds(100));
      if (sent == RequestSocket::Sent::Yes) break;
      if (sent == RequestSocket::Sent::Failed)
        throw PipelineError(error_message(where, "send failed: " + socket.last_error(), "", ""));
      refused();
      if (std::chrono::steady_clock::now() >= deadline) throw late();
    }
    std::optional<std::vector<wire::ReceivedFrame>> verdict;
    while (!(verdict = socket.receive(std::chrono::milliseconds(100)))) {
      refused();
      if (std::chrono::steady_clock::now() >= deadline) throw late();
    }
    if (!verdict->empty() && !verdict->front().bytes.empty()) throw PipelineError(text_of(verdict->front()));
    logger().info("process '{}': met process '{}' at {}, same pipeline", me, host, endpoint);
    return;
  }

  host_ = std::make_unique<Host>();
  const std::string endpoint = bare(placement.bind_endpoint(host, 0, "meet"));
  // With the placement's keys: the edges' peers only.
  std::vector<std::string> guests;
  if (placement.curve())
    for (const ProcessPlace& p : placement.processes)
      if (p.name != host) guests.push_back(p.curve_public);
  // Linger: the verdicts go out before it closes.
  host_->socket = std::make_unique<ReplySocket>(
      endpoint, true,
      RequestReplyOptions{.linger = std::chrono::seconds(2), .where = "the meeting at " + endpoint},
      placement.curve() ? placement.at(host).curve_secret : std::string(), guests);
  ReplySocket& socket = *host_->socket;
  struct Guest {
    std::string id;
    std::string description;
  };
  // One question: [process][description].
  auto ask = [&socket](std::chrono::milliseconds wait) -> std::optional<std::pair<std::string, Guest>> {
    socket.wait(wait);
    std::optional<ReplySocket::Request> r = socket.take();
    if (!r) return std::nullopt;
    std::pair<std::string, Guest> q;
    q.second.id = std::move(r->asker);
    if (r->frames.size() == 2) {
      q.first = text_of(r->frames[0]);
      q.second.description = text_of(r->frames[1]);
    }
    return q;
  };
  auto answer = [&socket](const std::string& id, const std::string& verdict) {
    socket.answer(id, false, {text_frame(verdict)});
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
    host_->socket->close();  // on the thread that used it last (HandshakeWatch)
  });
}

Meeting::~Meeting() {
  if (!host_) return;
  host_->stop.store(true);
  if (host_->latecomers.joinable()) host_->latecomers.join();
}

}  // namespace sluice
