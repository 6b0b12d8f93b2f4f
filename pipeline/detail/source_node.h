#pragma once
// What the two source node kinds share (pull_source_node.cpp calls next_chunk(),
// push_source_node.cpp takes pushes): the Source's specs and its part in
// checkpoints. Internal: those two files only.

#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/node.h>
#include <sluice/pipeline/sources.h>

namespace sluice {

class SourceNode : public PipelineNode {
 public:
  SourceNode(std::string name, std::shared_ptr<Source> source)
      : PipelineNode(std::move(name)), source_(std::move(source)) {}
  const char* kind() const override { return "source"; }
  size_t max_inputs() const override { return 0; }
  std::optional<std::vector<Spec>> output_spec() const override { return source_->spec(); }

  bool places_barriers() const override { return true; }
  bool replays() const override { return source_->replayable(); }
  void checkpointing(bool stored) override { source_->checkpointing(stored); }
  std::string checkpoint_state(int64_t number) override { return source_->checkpoint_state(number); }
  void replay_from(int64_t number) override { source_->forget_before(number); }
  void check(const Checkpoint& c, const std::string& at) const override {
    if (!c.positions.contains(name()))
      throw CheckpointError(
          error_message(at + "source '" + name() + "'", "", "its position", "none (not this pipeline's?)"));
  }
  std::optional<int64_t> position(const Checkpoint& c) const override { return c.positions.at(name()); }
  void restore(const Checkpoint& c) override {
    if (c.number == 0 || !source_->replayable()) return;
    auto state = c.states.find(name());
    source_->resume(static_cast<uint64_t>(c.positions.at(name())),
                    state == c.states.end() ? std::string() : state->second);
  }
  void add_metrics(NodeMetrics& m) const override { m.figures.merge(source_->figures()); }

 protected:
  std::shared_ptr<Source> source_;
};

}  // namespace sluice
