#pragma once
// The checkpoint coordinator of a running pipeline (Flink's asynchronous
// barrier snapshots, aligned): it numbers each source's messages and says
// which one a barrier goes before, gathers what every stage with an
// accumulator and every sink hands in when the barrier reaches it, and
// stores a checkpoint on a thread of its own once all have. Internal:
// pipeline*.cpp only.
//
// Barriers ride on messages: barrier n on message p means "the checkpoint
// holds the state after messages 0 .. p-1". Sources that are joined
// downstream number their messages alike, so they place barrier n on the
// same p, and a node whose inputs are joined by sequence number has the
// barrier on every input at once: the join holds back the inputs that are
// ahead, which is aligned mode's alignment.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/node.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {

class CheckpointCoordinator {
 public:
  // One node of the pipeline, as the coordinator sees it: sources
  // (places_barriers) and participants (takes_part) count, every node is
  // told of commits.
  struct Member {
    sluice::PipelineNode* node = nullptr;
    int component = 0;   // connected part of the graph
    uint64_t start = 0;  // position its numbering starts at (a restored run's)
  };

  // `restored`: the checkpoint the run resumes from (0: none); numbering goes on after it.
  CheckpointCoordinator(const PipelineOptions& options, std::vector<Member> nodes, int64_t restored);
  ~CheckpointCoordinator();  // finish()

  // The run ended with every source done: one last checkpoint of the final
  // accumulators (host copies, by stage name), taken without a barrier
  // since nothing moves any more, stored and committed before this returns.
  void final_checkpoint(std::map<std::string, Tensors> accumulators);

  // Stores what is complete, then stops the store thread; checkpoints
  // still waiting for a participant are dropped. Idempotent.
  void finish();

  // Whether sources place barriers at all, and whether checkpoints are stored.
  bool barriers() const { return barriers_; }
  bool storing() const { return store_ != nullptr; }

  struct Emitted {
    uint64_t seq = 0;     // the message's number in this run (from 0)
    int64_t barrier = 0;  // the barrier before it, 0: none
  };
  // Numbers source `node`'s next message and says whether a barrier goes
  // before it (its own interval, or `forwarded` from upstream). Called on
  // the source's thread, one message at a time per source.
  Emitted emit(size_t node, std::optional<PushSource::ForwardedBarrier> forwarded = std::nullopt);

  // Source `node` ended without a message numbered `seq`.
  void ended(size_t node, uint64_t seq) { next_seq_[node].store(seq); }

  // Participant `node` reached barrier `number`: an accumulator as it stood
  // (host copies; empty when not storing), a state resume needs (a sink's).
  void reached(int64_t number, size_t node, Tensors snapshot, std::string state);

  // Called where barrier `number` is placed in `component`, with the first
  // message it is on: the live updates waiting for it take effect there.
  std::function<void(int component, uint64_t seq)> on_barrier;

  CheckpointMetrics metrics() const;

 private:
  struct Pending {
    std::chrono::steady_clock::time_point first_placed, last_reached;
    Checkpoint checkpoint;
    size_t sources_placed = 0, participants_reached = 0;
  };
  struct Timed {  // a time interval's barrier, per component
    std::chrono::steady_clock::time_point due;
    std::optional<uint64_t> at;  // the seq every source of the component places it on
    int64_t number = 0;
    size_t placed = 0;
  };
  void complete_if_done(int64_t number);
  void store_loop();
  // Writes one checkpoint, commits it (`final`: the run's last, after which
  // nothing is replayed), counts it. Without the mutex.
  void store(Pending p, bool final);

  const PipelineOptions options_;
  std::vector<Member> nodes_;
  bool barriers_ = false;
  size_t sources_ = 0, participants_ = 0;
  std::unique_ptr<CheckpointStore> store_;

  // Per node (sources): the next message's number. Atomic for push sources
  // fed from several threads while there are no barriers (no lock then).
  std::vector<std::atomic<uint64_t>> next_seq_;
  mutable std::mutex mutex_;     // guards what follows
  std::vector<int64_t> placed_;  // per node: barriers a source placed this run
  std::map<int, Timed> timed_;   // per component
  int64_t restored_ = 0;
  int64_t highest_ = 0;  // the highest barrier number placed
  std::map<int64_t, Pending> pending_;
  std::deque<std::pair<Pending, int64_t>> to_store_;
  bool stopping_ = false;
  std::condition_variable wake_;
  CheckpointMetrics metrics_;
  std::chrono::steady_clock::time_point last_completed_{};
  std::thread storer_;
};

}  // namespace sluice
