#include <sluice/pipeline/detail/checkpoints.h>

#include <algorithm>

#include <sluice/base/detail/log.h>

namespace sluice {

using Clock = std::chrono::steady_clock;

namespace {
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

CheckpointCoordinator::CheckpointCoordinator(const PipelineOptions& options, std::vector<Member> nodes,
                                             int64_t restored)
    : options_(options),
      nodes_(std::move(nodes)),
      next_seq_(nodes_.size()),
      placed_(nodes_.size(), 0),
      restored_(restored) {
  for (const Member& n : nodes_) {
    sources_ += n.node->places_barriers();
    participants_ += n.node->takes_part();
  }
  // Barriers come from the interval, or (without one) from upstream when checkpoints are stored.
  barriers_ = options_.checkpoint_interval.set() || !options_.checkpoint_dir.empty();
  if (!options_.checkpoint_dir.empty()) {
    store_ = std::make_unique<CheckpointStore>(options_.checkpoint_dir,
                                               CheckpointStoreOptions{.retain = options_.checkpoint_retain});
    storer_ = std::thread([this] { store_loop(); });
  }
  const Clock::time_point now = Clock::now();
  for (const Member& n : nodes_)
    if (n.node->places_barriers()) timed_[n.component].due = now + options_.checkpoint_interval.time;
}

CheckpointCoordinator::~CheckpointCoordinator() { finish(); }

void CheckpointCoordinator::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (storer_.joinable()) storer_.join();
}

CheckpointCoordinator::Emitted CheckpointCoordinator::emit(
    size_t node, std::optional<PushSource::ForwardedBarrier> forwarded) {
  if (!barriers_) return {next_seq_[node].fetch_add(1, std::memory_order_relaxed), 0};
  std::unique_lock lock(mutex_);
  const uint64_t seq = next_seq_[node].load();
  const CheckpointInterval& every = options_.checkpoint_interval;
  int64_t number = 0;
  if (every.messages > 0) {
    if (seq > 0 && seq % every.messages == 0) number = restored_ + ++placed_[node];
  } else if (every.time.count() > 0) {
    Timed& t = timed_[nodes_[node].component];
    const Clock::time_point now = Clock::now();
    if (!t.at && now >= t.due) {
      // Where every source of the component places it: past all they have numbered.
      uint64_t at = 0;
      for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].node->places_barriers() && nodes_[i].component == nodes_[node].component)
          at = std::max(at, next_seq_[i].load());
      t.at = at;
      t.number = restored_ + ++placed_[node];
    }
    if (t.at && *t.at == seq) {
      number = t.number;
      size_t in_component = 0;
      for (const Member& n : nodes_)
        in_component += n.node->places_barriers() && n.component == nodes_[node].component;
      if (++t.placed == in_component) {
        t = Timed{.due = now + every.time, .at = std::nullopt, .number = 0, .placed = 0};
      }
    }
  } else if (forwarded) {
    number = forwarded->number;
  }
  next_seq_[node].store(seq + 1);
  if (number == 0) return {seq, 0};
  highest_ = std::max(highest_, number);
  Pending& p = pending_[number];
  if (p.checkpoint.number == 0) {
    p.checkpoint.number = number;
    p.first_placed = Clock::now();
  }
  p.checkpoint.positions[nodes_[node].node->name()] = static_cast<int64_t>(nodes_[node].start + seq);
  std::string state = forwarded ? std::move(forwarded->state) : nodes_[node].node->checkpoint_state(number);
  if (!state.empty()) p.checkpoint.states[nodes_[node].node->name()] = std::move(state);
  ++p.sources_placed;
  if (on_barrier) on_barrier(nodes_[node].component, seq);
  complete_if_done(number);
  return {seq, number};
}

void CheckpointCoordinator::reached(int64_t number, size_t node, Tensors snapshot, std::string state) {
  std::lock_guard lock(mutex_);
  Pending& p = pending_[number];
  p.checkpoint.number = number;
  const std::string& name = nodes_[node].node->name();
  if (!state.empty()) p.checkpoint.states[name] = std::move(state);
  if (!snapshot.empty()) p.checkpoint.accumulators[name] = std::move(snapshot);
  ++p.participants_reached;
  p.last_reached = Clock::now();
  complete_if_done(number);
}

// With the mutex held.
void CheckpointCoordinator::complete_if_done(int64_t number) {
  auto it = pending_.find(number);
  if (it->second.sources_placed < sources_ || it->second.participants_reached < participants_) return;
  if (store_) {
    to_store_.emplace_back(std::move(it->second), number);
    wake_.notify_all();
  }
  pending_.erase(it);
}

void CheckpointCoordinator::store_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !to_store_.empty(); });
    if (to_store_.empty()) return;  // stopping, nothing left to store
    Pending p = std::move(to_store_.front().first);
    to_store_.pop_front();
    lock.unlock();
    store(std::move(p), /*final=*/false);
    lock.lock();
  }
}

void CheckpointCoordinator::store(Pending p, bool final) {
  int64_t bytes = -1, oldest = 0;
  try {
    // What its results depend on besides accumulators: a restore from it
    // computes with the plans this process used.
    p.checkpoint.plans = plans_in_use();
    bytes = store_->write(p.checkpoint);
    oldest = final ? p.checkpoint.number : store_->numbers().front();
  } catch (const std::exception& e) {
    logger().error("checkpoint {} not stored: {}", p.checkpoint.number, e.what());
    bytes = -1;
  }
  if (bytes >= 0) {
    // Two-phase commit's second phase: sinks publish what came before the
    // barrier. Sources may forget only what came before the oldest
    // checkpoint kept: a restore passes over damaged newer ones to an older
    // one, and must find everything after it still there to replay. The
    // final checkpoint ends the run, and with it every replay.
    for (const Member& n : nodes_) {
      try {
        n.node->commit(p.checkpoint.number);
        n.node->replay_from(oldest);
      } catch (const std::exception& e) {
        logger().error("checkpoint {}: {} '{}' failed to commit: {}", p.checkpoint.number, n.node->kind(),
                       n.node->name(), e.what());
      }
    }
  }
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mutex_);
  if (bytes < 0) {
    ++metrics_.failed;
    return;
  }
  ++metrics_.completed;
  metrics_.last_number = p.checkpoint.number;
  metrics_.last_duration_s = seconds(now - p.first_placed);
  metrics_.last_alignment_s = participants_ ? seconds(p.last_reached - p.first_placed) : 0;
  metrics_.last_bytes = bytes;
  last_completed_ = now;
  logger().debug("checkpoint {} stored: {} bytes in {:.1f} ms", p.checkpoint.number, bytes,
                 metrics_.last_duration_s * 1e3);
}

void CheckpointCoordinator::final_checkpoint(std::map<std::string, Tensors> accumulators) {
  if (!store_) return;
  Pending p;
  p.first_placed = p.last_reached = Clock::now();
  {
    std::lock_guard lock(mutex_);
    p.checkpoint.number = std::max(highest_, restored_) + 1;
  }
  p.checkpoint.accumulators = std::move(accumulators);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Member& n = nodes_[i];
    if (n.node->places_barriers())
      p.checkpoint.positions[n.node->name()] = static_cast<int64_t>(n.start + next_seq_[i].load());
    std::string state = n.node->checkpoint_state(p.checkpoint.number);
    if (!state.empty()) p.checkpoint.states[n.node->name()] = std::move(state);
  }
  // What was complete is stored first, in order: checkpoints whose last
  // parts the nodes handed in just now (a ZeroMQ sink's, acknowledged by
  // the flush its state waits for) among them.
  finish();
  store(std::move(p), /*final=*/true);
}

CheckpointMetrics CheckpointCoordinator::metrics() const {
  std::lock_guard lock(mutex_);
  CheckpointMetrics m = metrics_;
  if (m.completed > 0) m.age_s = seconds(Clock::now() - last_completed_);
  return m;
}

}  // namespace sluice
