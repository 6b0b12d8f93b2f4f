// The queue behind a channel's kept and received messages
// (base/detail/circular_queue.h): order kept across wrapping and growing,
// what a popped element held let go of at once.

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

#include <sluice/base/detail/circular_queue.h>

namespace sluice {
namespace {

TEST(CircularQueue, KeepsTheOrderOfADequeThroughWrapsAndGrowth) {
  detail::CircularQueue<int> queue;
  std::deque<int> reference;
  std::mt19937 random(7);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    // Pushes outnumber pops early on (growth), then pops catch up (wraps).
    const bool push = reference.empty() || random() % 100 < (step < 10000 ? 60u : 45u);
    if (push) {
      queue.push_back(int{next});
      reference.push_back(next++);
    } else if (random() % 2 == 0) {
      EXPECT_EQ(queue.front(), reference.front());
      queue.pop_front();
      reference.pop_front();
    } else {
      EXPECT_EQ(queue.back(), reference.back());
      queue.pop_back();
      reference.pop_back();
    }
    ASSERT_EQ(queue.size(), reference.size());
    if (!reference.empty()) {
      ASSERT_EQ(queue.front(), reference.front()) << "step " << step;
      ASSERT_EQ(queue[reference.size() / 2], reference[reference.size() / 2]) << "step " << step;
    }
  }
}

TEST(CircularQueue, KeepIfKeepsTheChosenInOrder) {
  detail::CircularQueue<int> queue;
  for (int i = 0; i < 6; ++i) queue.push_back(int{i});
  queue.pop_front();
  queue.pop_front();
  for (int i = 6; i < 12; ++i) queue.push_back(int{i});  // wrapped past the array's end
  queue.keep_if([](int v) { return v % 3 != 0; });
  std::vector<int> kept;
  for (; !queue.empty(); queue.pop_front()) kept.push_back(queue.front());
  EXPECT_EQ(kept, (std::vector<int>{2, 4, 5, 7, 8, 10, 11}));
}

TEST(CircularQueue, APoppedElementLetsGoOfWhatItHeldAtOnce) {
  detail::CircularQueue<std::shared_ptr<int>> queue;
  auto held = std::make_shared<int>(1);
  queue.push_back(std::shared_ptr<int>(held));
  queue.push_back(std::shared_ptr<int>(held));
  queue.push_back(std::shared_ptr<int>(held));
  ASSERT_EQ(held.use_count(), 4);
  queue.pop_front();
  EXPECT_EQ(held.use_count(), 3) << "pop_front";
  queue.pop_back();
  EXPECT_EQ(held.use_count(), 2) << "pop_back";
  queue.keep_if([](const std::shared_ptr<int>&) { return false; });
  EXPECT_EQ(held.use_count(), 1) << "keep_if";
  EXPECT_TRUE(queue.empty());
}

// An element that counts the live ones and has no default: a queue that
// made an empty element per place would not compile, and one that ended an
// element twice or never would miscount.
struct Counted {
  static inline int live = 0;
  explicit Counted(int v) : value(v) { ++live; }
  Counted(Counted&& o) noexcept : value(o.value) { ++live; }
  Counted& operator=(Counted&& o) noexcept {
    value = o.value;
    return *this;
  }
  ~Counted() { --live; }
  int value;
};

TEST(CircularQueue, OnlyTheQueuedElementsExistThroughGrowthWrapsAndMoves) {
  {
    detail::CircularQueue<Counted> queue;
    int next = 0, first = 0;
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < 7; ++i) queue.push_back(Counted(next++));
      for (int i = 0; i < 4; ++i, ++first) {
        ASSERT_EQ(queue.front().value, first);
        queue.pop_front();
      }
      ASSERT_EQ(Counted::live, static_cast<int>(queue.size())) << "round " << round;
    }
    queue.keep_if([](const Counted& c) { return c.value % 2 == 0; });
    EXPECT_EQ(Counted::live, static_cast<int>(queue.size()));
    detail::CircularQueue<Counted> moved(std::move(queue));
    EXPECT_TRUE(queue.empty());
    EXPECT_EQ(Counted::live, static_cast<int>(moved.size()));
    detail::CircularQueue<Counted> other;
    other.push_back(Counted(-1));
    other = std::move(moved);
    EXPECT_EQ(Counted::live, static_cast<int>(other.size())) << "the element assigned over is ended";
    EXPECT_EQ(other.front().value % 2, 0);
  }
  EXPECT_EQ(Counted::live, 0) << "the queue's end ends what it holds";
}

// emplace_back_from makes the element in its place: a kept message is
// hundreds of bytes, and a temporary moved in would cost a move and an end
// per message. Counted after the growth: moves then are growth's own.
struct Moves {
  static inline int moves = 0;
  explicit Moves(int v) : value(v) {}
  Moves(Moves&& o) noexcept : value(o.value) { ++moves; }
  Moves& operator=(Moves&&) = delete;
  int value;
};

TEST(CircularQueue, EmplaceBackFromMakesTheElementInItsPlace) {
  detail::CircularQueue<Moves> queue;
  for (int i = 0; i < 8; ++i) queue.emplace_back_from([i] { return Moves(i); });
  for (int i = 0; i < 6; ++i) queue.pop_front();  // room at the end, wrapping: no growth below
  Moves::moves = 0;
  for (int i = 8; i < 14; ++i) {
    Moves& made = queue.emplace_back_from([i] { return Moves(i); });
    EXPECT_EQ(made.value, i);
    EXPECT_EQ(&made, &queue.back());
  }
  EXPECT_EQ(Moves::moves, 0) << "a made element was moved into the queue";
  ASSERT_EQ(queue.size(), 8u);
  for (int i = 6; i < 14; ++i, queue.pop_front()) EXPECT_EQ(queue.front().value, i);
}

}  // namespace
}  // namespace sluice
