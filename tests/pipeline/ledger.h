#pragma once
// A sink with two-phase commit, as an external system would be: what it
// consumed is pending until its checkpoint is stored, and a restored run
// throws away what was never committed. It outlives the pipelines that
// feed it, as a database outlives the processes writing to it. What it
// keeps of each message is what Read::read(tensors, tags) returns.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sluice/pipeline/pipeline.h>

namespace sluice::testing {

template <typename Read>
class Ledger : public Sink {
 public:
  using Entry = decltype(Read::read(std::declval<const Tensors&>(), std::declval<const Tags&>()));

  void consume(uint64_t seq, const Tensors& t) override { consume_tagged(seq, t, {}); }
  void consume_tagged(uint64_t seq, const Tensors& t, const Tags& tags) override {
    std::function<void()> fire;
    {
      std::lock_guard lock(mutex_);
      pending_.emplace_back(seq, Read::read(t, tags));
      if (cancel_at_ && seq >= *cancel_at_) fire = std::exchange(on_reach_, nullptr);
    }
    if (fire) fire();
  }
  std::string prepare(int64_t number) override {
    std::lock_guard lock(mutex_);
    prepared_[number] = std::exchange(pending_, {});
    return "ledger at " + std::to_string(number);
  }
  void commit(int64_t number) override {
    std::lock_guard lock(mutex_);
    for (auto it = prepared_.begin(); it != prepared_.end() && it->first <= number; it = prepared_.erase(it))
      for (auto& entry : it->second) committed_.push_back(std::move(entry));
  }
  void resume(int64_t number, const std::string& state) override {
    std::lock_guard lock(mutex_);
    EXPECT_EQ(state, number == 0 ? "" : "ledger at " + std::to_string(number));
    pending_.clear();
    prepared_.clear();
  }
  // Calls `fn` once a message numbered `seq` or above is consumed.
  void when_reaching(uint64_t seq, std::function<void()> fn) {
    std::lock_guard lock(mutex_);
    cancel_at_ = seq;
    on_reach_ = std::move(fn);
  }
  std::vector<std::pair<uint64_t, Entry>> committed() const {
    std::lock_guard lock(mutex_);
    return committed_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<uint64_t, Entry>> pending_, committed_;
  std::map<int64_t, std::vector<std::pair<uint64_t, Entry>>> prepared_;
  std::optional<uint64_t> cancel_at_;
  std::function<void()> on_reach_;
};

}  // namespace sluice::testing
