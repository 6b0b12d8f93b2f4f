#include <sluice/pipeline/zmq_nodes.h>

#include <tbb/task_group.h>

#include <iterator>
#include <sstream>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

// A sink's body runs in the pipeline graph's oneTBB task group, which
// Pipeline::cancel (and an error under ErrorPolicy::Stop) cancels: a body
// waiting on the network looks here to let go.
bool pipeline_cancelled() { return tbb::is_current_task_group_canceling(); }

// The pattern of a source's socket, which must receive (a sink's must send).
Pattern receiving(Pattern p, const std::string& endpoint) {
  if (p == Pattern::Push || p == Pattern::Pub)
    throw PipelineError(
        error_message("sources::zmq " + endpoint, "pattern", "pull, sub or pair", "a sending socket"));
  return p;
}
Pattern sending(Pattern p, const std::string& endpoint) {
  if (p == Pattern::Pull || p == Pattern::Sub)
    throw PipelineError(
        error_message("sinks::zmq " + endpoint, "pattern", "push, pub or pair", "a receiving socket"));
  return p;
}

}  // namespace

ZmqSource::ZmqSource(const std::string& endpoint, std::vector<Spec> spec, ZmqSourceOptions options)
    : PushSource(std::move(spec)),
      options_(std::move(options)),
      channel_(receiving(options_.pattern, endpoint), endpoint,
               [&] {
                 ChannelOptions o = options_.channel;
                 // When the pipeline is done with a message; set again
                 // when it starts (receive()), to Checkpoint if it stores checkpoints.
                 o.acknowledge = Acknowledge::Manual;
                 return o;
               }()),
      bound_endpoint_(channel_.bound_endpoint()) {
  if (this->spec().empty())
    throw PipelineError(error_message("sources::zmq " + endpoint, "", "the spec of its messages", "none"));
  if (options_.expected_peers < 0)
    throw PipelineError(error_message("sources::zmq " + endpoint, "expected_peers", "0 (forever) or more",
                                      options_.expected_peers));
  thread_ = std::thread([this] { receive(); });
}

ZmqSource::~ZmqSource() {
  stop();
  // A push waiting for a pipeline that will never start gives up.
  unwire();
  thread_.join();
}

void ZmqSource::stop() {
  stopped_.store(true);
  std::lock_guard lock(mutex_);
  start_.notify_all();
}

void ZmqSource::checkpointing(bool stored) {
  stored_.store(stored);
  std::lock_guard lock(mutex_);
  started_ = true;
  start_.notify_all();
}

std::string ZmqSource::last_rejection() const {
  std::lock_guard lock(mutex_);
  return last_rejection_;
}

void ZmqSource::reject(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    last_rejection_ = why;
  }
  rejected_.fetch_add(1);
}

void ZmqSource::advance(const wire::Message& m) {
  next_[m.header.stream_id] = m.header.seq + 1;
  handed_[m.peer] = m.header.seq;
}

std::string ZmqSource::positions() const {
  std::string text;
  for (const auto& [stream, next] : next_) fmt::format_to(std::back_inserter(text), "{}:{} ", stream, next);
  return text;
}

bool ZmqSource::hand_on(const wire::Message& m) {
  auto ack = channel_.acknowledger();
  auto in_pipeline = in_pipeline_;
  in_pipeline->fetch_add(1);
  // Done with: acknowledged to the sender, or (checkpoints stored) its
  // credit freed until a checkpoint after it commits it.
  OnDone done = [ack, in_pipeline, peer = m.peer, seq = m.header.seq](bool finished) {
    if (finished) ack(peer, seq);
    in_pipeline->fetch_sub(1);
  };
  // Wait for the pipeline's room in steps, sending acknowledgements and
  // heartbeats between them, so that the sender neither stalls for want of
  // acks nor takes this receiver for dead while the pipeline is full.
  const Chunk chunk{m.tensors, m.tags};
  while (!push_for(chunk, options_.poll_interval, done)) {
    if (stopped_.load()) {
      in_pipeline->fetch_sub(1);
      return false;
    }
    channel_.keep_alive();
  }
  std::lock_guard lock(mutex_);
  advance(m);
  return true;
}

void ZmqSource::let_go(const wire::Message& m) {
  channel_.ack(m);
  std::lock_guard lock(mutex_);
  advance(m);
}

void ZmqSource::forward_barrier(const std::vector<wire::Message>& barriers) {
  // The checkpoint's number: the senders' highest (independent pipelines
  // number theirs apart), and past the last one forwarded.
  int64_t number = forwarded_ + 1;
  for (const wire::Message& m : barriers) number = std::max(number, static_cast<int64_t>(m.checkpoint));
  forwarded_ = number;
  std::string state;
  {
    std::lock_guard lock(mutex_);
    for (const wire::Message& m : barriers) advance(m);
    if (stored_.load()) barriers_[number] = handed_;  // committed once stored
    state = positions();
  }
  push_barrier(number, std::move(state));
  for (const wire::Message& m : barriers) channel_.ack(m);
}

std::string ZmqSource::checkpoint_state(int64_t number) {
  std::lock_guard lock(mutex_);
  if (stored_.load()) barriers_[number] = handed_;  // committed once stored
  return positions();
}

void ZmqSource::resume(uint64_t, const std::string& state) {
  std::lock_guard lock(mutex_);
  std::istringstream in(state);
  std::string entry;
  while (in >> entry) {
    const size_t colon = entry.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument(entry);
      next_[std::stoull(entry.substr(0, colon))] = std::stoull(entry.substr(colon + 1));
    } catch (const std::logic_error&) {
      throw CheckpointError(error_message("sources::zmq " + channel_.endpoint(), "resume",
                                          "'stream:seq' entries", "'" + entry + "'"));
    }
  }
  resumed_ = true;
}

void ZmqSource::forget_before(int64_t number) {
  std::map<uint64_t, uint64_t> upto;
  {
    std::lock_guard lock(mutex_);
    // Its barrier, or the last one before it: a checkpoint of an earlier
    // run has none here, and this run's barriers after it are kept.
    auto it = barriers_.upper_bound(number);
    if (it == barriers_.begin()) return;
    --it;
    upto = std::move(it->second);
    barriers_.erase(barriers_.begin(), std::next(it));
    for (const auto& [peer, seq] : upto) committed_[peer] = std::max(committed_[peer], seq + 1);
  }
  for (const auto& [peer, seq] : upto) channel_.commit(peer, seq);
}

ChannelCounters ZmqSource::channel_counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

std::map<std::string, double> ZmqSource::figures() const {
  if (options_.channel.delivery != Delivery::Reliable) return {};
  const ChannelCounters c = channel_counters();
  return {{"channel_peers_lost", static_cast<double>(c.peers_lost)},
          {"channel_duplicates", static_cast<double>(c.duplicates)},
          {"channel_rejected", static_cast<double>(c.rejected)},
          {"channel_shared", static_cast<double>(c.shared)},
          {"channel_refused", static_cast<double>(c.refused)},
          {"channel_in_pipeline", static_cast<double>(in_pipeline_->load())}};
}

void ZmqSource::mirror_counters(bool now) {
  const auto t = std::chrono::steady_clock::now();
  if (!now && t - mirrored_ < std::chrono::milliseconds(50)) return;
  mirrored_ = t;
  const ChannelCounters c = channel_.counters();
  std::lock_guard lock(mutex_);
  counters_ = c;
}

bool ZmqSource::all_acknowledged() const {
  std::lock_guard lock(mutex_);
  for (const auto& [peer, seq] : handed_) {
    auto c = committed_.find(peer);
    if (c == committed_.end() || c->second <= seq) return false;
  }
  return true;
}

bool ZmqSource::take(const wire::Message& m) {
  const wire::Header& h = m.header;
  const auto wanted = static_cast<uint64_t>(options_.expected_peers);
  // A sender whose barrier came waits, its messages held, until every
  // other's has come too (aligned checkpoints, as Flink's).
  if (arrived_.contains(h.stream_id)) {
    held_.push_back(m);
    return true;
  }
  switch (h.kind) {
    case wire::Kind::Data: {
      std::vector<Spec> got;
      for (const Tensor& t : m.tensors) got.push_back(t.spec());
      if (got == spec()) return hand_on(m);
      std::string why = error_message(fmt::format("source zmq {}: seq {}", channel_.endpoint(), h.seq), "",
                                      specs_str(spec()), specs_str(got));
      logger().warn("{} (message skipped)", why);
      reject(why);
      let_go(m);
      return true;
    }
    case wire::Kind::Barrier:
      // The upstream pipelines' checkpoint: this pipeline's too, on its
      // next message, once every sender's barrier is here.
      if (wanted == 1) {
        forward_barrier({m});
      } else if (wanted == 0) {
        if (!warned_barriers_)
          logger().warn(
              "source zmq {}: checkpoint barriers of senders not counted (expected_peers 0) cannot be "
              "aligned and are not taken (give the pipeline a checkpoint interval of its own)",
              channel_.endpoint());
        warned_barriers_ = true;
        let_go(m);
      } else {
        arrived_.emplace(h.stream_id, m);
        align();
      }
      return true;
    case wire::Kind::Update:
      // `sluice update`: new weights for a stage of this pipeline, or
      // a refusal saying why not, sent back before the acknowledgement.
      try {
        request_update(m.target, m.tensors);
        logger().info("source zmq {}: update of stage '{}' taken", channel_.endpoint(), m.target);
      } catch (const PipelineError& e) {
        logger().warn("source zmq {}: {}", channel_.endpoint(), e.what());
        channel_.refuse(m, e.what());
      }
      let_go(m);
      return true;
    case wire::Kind::EndOfStream:
      ends_.fetch_add(1);
      ended_.insert(h.stream_id);
      logger().debug("source zmq {}: end of stream {} of {} (stream id {}, seq {})", channel_.endpoint(),
                     ends_.load(), wanted, h.stream_id, h.seq);
      // Acknowledged in order: only once every message before it is.
      let_go(m);
      align();  // an ended sender has no barrier to wait for
      return true;
    default:
      peer_errors_.fetch_add(1);
      logger().warn("source zmq {}: a peer sent an error at seq {} (stream id {}): {}", channel_.endpoint(), h.seq,
                    h.stream_id, m.error);
      let_go(m);
      return true;
  }
}

void ZmqSource::align() {
  // Every sender still sending: those expected, less those that ended.
  size_t live = static_cast<size_t>(options_.expected_peers);
  for (uint64_t stream : ended_)
    if (!arrived_.contains(stream) && live > 0) --live;
  if (arrived_.empty() || arrived_.size() < live) return;
  std::vector<wire::Message> barriers;
  for (auto& [stream, barrier] : arrived_) barriers.push_back(std::move(barrier));
  arrived_.clear();
  forward_barrier(barriers);
  for (wire::Message& m : held_) ready_.push_back(std::move(m));
  held_.clear();
}

void ZmqSource::receive() {
  const auto wanted = static_cast<uint64_t>(options_.expected_peers);
  uint64_t channel_rejected = 0;  // the channel's count already added to rejected_
  try {
    {
      // Nothing is taken before the pipeline starts: a restore first says
      // where each stream resumes, and the channel drops (and commits)
      // what comes again from before there.
      std::unique_lock lock(mutex_);
      start_.wait(lock, [this] { return started_ || stopped_.load(); });
      channel_.set_acknowledge(stored_.load() ? Acknowledge::Checkpoint : Acknowledge::Manual);
      if (resumed_)
        for (const auto& [stream, next] : next_) channel_.resume_stream(stream, next);
    }
    while (!stopped_.load() && (wanted == 0 || ends_.load() < wanted)) {
      std::optional<wire::Message> m = channel_.recv(options_.poll_interval);
      mirror_counters();
      // The channel logged what it skipped; count it here too.
      if (uint64_t skipped = channel_.rejected() - channel_rejected; skipped > 0) {
        channel_rejected = channel_.rejected();
        {
          std::lock_guard lock(mutex_);
          last_rejection_ = channel_.last_rejection();
        }
        rejected_.fetch_add(skipped);
      }
      if (!m) continue;
      if (!take(*m)) return close();
      // Messages held for an alignment that completed go on, in order.
      while (!ready_.empty() && !stopped_.load()) {
        wire::Message next = std::move(ready_.front());
        ready_.pop_front();
        if (!take(next)) return close();
      }
    }
  } catch (const PipelineError&) {
    return;  // the pipeline stopped (cancelled, or an error under ErrorPolicy::Stop): nothing more to deliver
  } catch (const std::exception& e) {
    // What was to come cannot (a stream cut short, messages a sender no
    // longer keeps): the run must not end as if its input had.
    fail(fmt::format("source zmq {}: receiving stopped: {}", channel_.endpoint(), e.what()));
  }
  close();
  // The senders wait for the acknowledgement of what is still in the
  // pipeline, end of stream included: keep sending them until it drains.
  try {
    // With checkpoints stored, the last acknowledgements come with the
    // run's final checkpoint (or never, if it is cancelled).
    auto awaiting = [this] { return in_pipeline_->load() > 0 || (stored_.load() && !all_acknowledged()); };
    while (!stopped_.load() && awaiting()) {
      channel_.keep_alive();
      mirror_counters();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    channel_.keep_alive();
    mirror_counters(/*now=*/true);
    logger().debug("source zmq {}: receiving ended, {} message(s) left in the pipeline", channel_.endpoint(),
                   in_pipeline_->load());
  } catch (const std::exception& e) {
    logger().error("source zmq {}: last acknowledgements not sent: {}", channel_.endpoint(), e.what());
  }
}

ZmqSink::ZmqSink(const std::string& endpoint, ZmqSinkOptions options)
    : endpoint_(endpoint),
      options_(std::move(options)),
      channel_(sending(options_.pattern, endpoint), endpoint, options_.channel) {}

std::map<std::string, double> ZmqSink::figures() const {
  if (options_.channel.delivery != Delivery::Reliable) return {};
  const ChannelCounters c = channel_counters();
  return {{"channel_credit", static_cast<double>(c.credit)},
          {"channel_unacknowledged", static_cast<double>(c.unacknowledged)},
          {"channel_resent", static_cast<double>(c.resent)},
          {"channel_peers_lost", static_cast<double>(c.peers_lost)},
          {"channel_shared", static_cast<double>(c.shared)},
          {"channel_refused", static_cast<double>(c.refused)}};
}

bool ZmqSink::send_or_cancelled(const wire::Message& m) {
  while (!channel_.send(m, std::chrono::milliseconds(20)))
    if (stopping_.load() || pipeline_cancelled()) return false;
  ++sent_;
  return true;
}

wire::Message ZmqSink::data(uint64_t seq, const Tensors& tensors, const Tags& tags) const {
  wire::Message m;
  m.header.kind = wire::Kind::Data;
  m.header.stream_id = options_.stream_id;
  m.header.seq = seq;
  m.tensors = tensors;
  m.tags = tags;
  return m;
}

void ZmqSink::consume(uint64_t seq, const Tensors& tensors) { consume_tagged(seq, tensors, {}); }

void ZmqSink::consume_tagged(uint64_t seq, const Tensors& tensors, const Tags& tags) {
  if (send_or_cancelled(data(seq, tensors, tags))) next_seq_ = seq + 1;
}

bool ZmqSink::try_consume(uint64_t seq, const Tensors& tensors, const Tags& tags) {
  if (!channel_.send(data(seq, tensors, tags), std::chrono::milliseconds(0))) return false;
  ++sent_;
  next_seq_ = seq + 1;
  return true;
}

OutputMemory ZmqSink::input_memory() const {
  const ChannelOptions& c = options_.channel;
  const bool by_reference = c.delivery == Delivery::Reliable && c.shared_memory && !c.crc &&
                            channel_.endpoint().rfind("ipc://", 0) == 0;
  return by_reference ? OutputMemory::Shared : OutputMemory::Default;
}

void ZmqSink::send_barrier(int64_t number) {
  wire::Message m;
  m.header.kind = wire::Kind::Barrier;
  m.header.stream_id = options_.stream_id;
  m.checkpoint = static_cast<uint64_t>(number);
  if (!send_or_cancelled(m))
    throw PipelineError(error_message("sink zmq " + channel_.endpoint(),
                                      fmt::format("cancelled at barrier {}", number), "", ""));
}

std::string ZmqSink::prepare(int64_t number) {
  if (options_.channel.delivery != Delivery::Reliable) {
    if (stored_)
      throw PipelineError(error_message("sink zmq " + channel_.endpoint(),
                                        "checkpoints need a reliable channel", "", "a plain one"));
    return {};  // a plain peer takes no barriers
  }
  send_barrier(number);
  if (!stored_) return {};
  // Everything before the barrier is with the receiver before the
  // checkpoint counts: a restored sender numbers on from here.
  try {
    channel_.flush(options_.finish_timeout);
  } catch (const WireError& e) {
    throw PipelineError(error_message("sink zmq " + channel_.endpoint(),
                                      fmt::format("barrier {}: {}", number, e.what()), "", ""));
  }
  hand_in_acknowledged();  // barriers before it, acknowledged too: their checkpoints first
  return fmt::format("{}", sent_.load());
}

void ZmqSink::hand_in_acknowledged() {
  std::lock_guard handing(handing_mutex_);
  for (;;) {
    Awaited a;
    {
      std::lock_guard lock(awaited_mutex_);
      if (awaited_.empty() || awaited_.front().seq >= acknowledged_below()) return;
      a = std::move(awaited_.front());
      awaited_.pop_front();
    }
    a.done(std::move(a.state), nullptr);
  }
}

void ZmqSink::prepare_then(int64_t number, const Prepared& done) {
  if (options_.channel.delivery != Delivery::Reliable || !stored_) return Sink::prepare_then(number, done);
  try {
    send_barrier(number);
  } catch (...) {
    done({}, std::current_exception());
    return;
  }
  // As prepare, but the acknowledgement is awaited by the watcher while
  // data flows on behind the barrier (the checkpoint's alignment allows it:
  // what follows belongs to the next checkpoint).
  const uint64_t next = sent_.load();
  {
    std::lock_guard lock(awaited_mutex_);
    awaited_.push_back({number, next - 1, fmt::format("{}", next), done,
                        std::chrono::steady_clock::now() + options_.finish_timeout});
    if (!watcher_.joinable()) watcher_ = std::thread([this] { watch_barriers(); });
  }
  awaited_cv_.notify_one();
}

uint64_t ZmqSink::acknowledged_below() const {
  // The channel numbers its messages consecutively and keeps the
  // unacknowledged ones: the oldest kept is the next number less them. Read
  // in this order, a message sent in between only makes it lower (later).
  const uint64_t unacknowledged = channel_.counters().unacknowledged;
  const uint64_t next = sent_.load();
  return next > unacknowledged ? next - unacknowledged : 0;
}

void ZmqSink::watch_barriers() {
  std::unique_lock lock(awaited_mutex_);
  while (!watcher_stopping_) {
    if (awaited_.empty()) {
      awaited_cv_.wait(lock);
      continue;
    }
    if (awaited_.front().seq < acknowledged_below()) {
      lock.unlock();
      hand_in_acknowledged();
      lock.lock();
      continue;
    }
    if (std::chrono::steady_clock::now() >= awaited_.front().deadline) {
      Awaited a = std::move(awaited_.front());
      awaited_.pop_front();
      lock.unlock();
      std::lock_guard handing(handing_mutex_);
      a.done({},
             std::make_exception_ptr(PipelineError(error_message(
                 "sink zmq " + channel_.endpoint(), fmt::format("barrier {}", a.number),
                 fmt::format("acknowledged within {} ms (finish_timeout)", options_.finish_timeout.count()),
                 fmt::format("{} message(s) not acknowledged", channel_.counters().unacknowledged)))));
      lock.lock();
      continue;
    }
    // Acknowledgements come in batches, a few a millisecond at most.
    awaited_cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void ZmqSink::stop_watching() {
  {
    std::lock_guard lock(awaited_mutex_);
    watcher_stopping_ = true;
  }
  awaited_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

ZmqSink::~ZmqSink() { stop_watching(); }

void ZmqSink::resume(int64_t number, const std::string& state) {
  if (number == 0) return;  // a fresh start numbers from 0
  uint64_t next = 0;
  try {
    next = std::stoull(state);
  } catch (const std::logic_error&) {
    throw CheckpointError(
        error_message("sink zmq " + channel_.endpoint(), "resume", "a sequence number", "'" + state + "'"));
  }
  // A channel that numbers on from the checkpoint's, replacing the one made
  // at construction (nothing was sent on it).
  ChannelOptions o = options_.channel;
  o.first_seq = next;
  channel_ = Channel(sending(options_.pattern, endpoint_), endpoint_, o);
  sent_ = next;
}

void ZmqSink::end_stream() {
  if (ended_) {
    // Not sent: finish() says so again rather than wait for what cannot come.
    if (end_failure_) std::rethrow_exception(end_failure_);
    return;
  }
  ended_ = true;
  wire::Message m;
  m.header.kind = wire::Kind::EndOfStream;
  m.header.stream_id = options_.stream_id;
  m.header.seq = next_seq_;
  if (options_.channel.delivery == Delivery::Reliable) {
    try {
      if (!channel_.send(m, options_.finish_timeout))
        throw WireError(
            error_message("end of stream not sent",
                          fmt::format("no credit within {} ms; {} message(s) not acknowledged",
                                      options_.finish_timeout.count(), channel_.counters().unacknowledged),
                          "", ""));
    } catch (const WireError& e) {
      end_failure_ = std::make_exception_ptr(PipelineError(
          error_message("sink zmq " + channel_.endpoint(), fmt::format("finish: {}", e.what()), "", "")));
      std::rethrow_exception(end_failure_);
    }
    return;
  }
  // end_stream runs after the graph, on the thread that waits for the
  // pipeline: a peer that never reads must not hold it longer than the linger time.
  if (!channel_.send(m, options_.channel.linger))
    logger().warn("sink zmq {}: end of stream not sent: no peer took it within {} ms", channel_.endpoint(),
                  options_.channel.linger.count());
}

void ZmqSink::finish() {
  if (finished_) return;
  finished_ = true;
  // Barriers still awaited are done with the end of stream's flush, or
  // never (the run is over either way): none is handed in after this.
  struct Stop {
    ZmqSink& sink;
    ~Stop() { sink.stop_watching(); }
  } stop{*this};
  end_stream();
  if (options_.channel.delivery != Delivery::Reliable) return;
  try {
    channel_.flush(options_.finish_timeout);
  } catch (const WireError& e) {
    throw PipelineError(
        error_message("sink zmq " + channel_.endpoint(), fmt::format("finish: {}", e.what()), "", ""));
  }
}

namespace sources {
std::shared_ptr<ZmqSource> zmq(const std::string& endpoint, std::vector<Spec> spec, ZmqSourceOptions options) {
  return std::make_shared<ZmqSource>(endpoint, std::move(spec), std::move(options));
}
}  // namespace sources

namespace sinks {
std::shared_ptr<ZmqSink> zmq(const std::string& endpoint, ZmqSinkOptions options) {
  return std::make_shared<ZmqSink>(endpoint, std::move(options));
}
}  // namespace sinks

}  // namespace sluice
