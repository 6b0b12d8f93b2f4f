// The checkpoint store (pipeline/checkpoint_store.h): bit-identical round
// trips, retention, torn and corrupted checkpoints passed over with a reason,
// a writer killed with SIGKILL mid-write, and a full disk.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <sluice/base/error.h>
#include <sluice/pipeline/checkpoint_store.h>
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> out(static_cast<size_t>(t.spec().bytes()));
  t.copy_to_host(out.data());
  return out;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.spec() == b.spec() && bytes_of(a) == bytes_of(b);
}

int64_t first_s64(const Tensor& t) { return t.to_vector<int64_t>().at(0); }

// Checkpoint n: a 1-element and a large accumulator holding n, a position of 100 n.
Checkpoint numbered(int64_t n, int64_t floats = 1024) {
  return {
      .number = n,
      .positions = {{"samples", 100 * n}},
      .accumulators = {
          {"count", {scalar(n)}},
          {"model",
           {tensor(std::vector<float>(static_cast<size_t>(floats), static_cast<float>(n)), Shape{floats})}}}};
}

std::string dir_of(const CheckpointStore& store, int64_t n) {
  char name[32];
  std::snprintf(name, sizeof name, "chk-%08lld", static_cast<long long>(n));
  return (fs::path(store.directory()) / name).string();
}

TEST(CheckpointStore, RoundTripIsBitIdenticalForEveryKindOfTensor) {
  TempDir dir;
  CheckpointStore store(dir.path());
  Checkpoint c{
      .number = 7, .positions = {{"a", 12}, {"b", 0}}, .accumulators = {}, .states = {{"out", "7:12"}}};
  c.accumulators["stats"] = {tensor<float>({1.5f, -0.0f, NAN}), scalar(int64_t{-3}),
                             tensor<std::complex<double>>({{1, 2}, {3, -4}}), tensor<bool>({true, false})};
  const uint16_t bf16_bits[] = {0x3f80, 0x7fc1};  // 1.0 and a NaN with a payload
  c.accumulators["empty and bf16"] = {tensor_from_bytes(f32({0, 3}), nullptr),
                                      tensor_from_bytes(Spec{DType::BF16, Shape{2}}, bf16_bits)};
  c.accumulators["no accumulator tensors"] = {};
  const int64_t bytes = store.write(c);
  EXPECT_GT(bytes, 0);
  const CheckpointLookup found = store.latest();
  ASSERT_TRUE(found.checkpoint.has_value());
  EXPECT_TRUE(found.skipped.empty());
  EXPECT_EQ(found.checkpoint->number, 7);
  EXPECT_EQ(found.checkpoint->positions, c.positions);
  EXPECT_EQ(found.checkpoint->states, c.states);
  ASSERT_EQ(found.checkpoint->accumulators.size(), c.accumulators.size());
  for (const auto& [name, tensors] : c.accumulators) {
    const Tensors& back = found.checkpoint->accumulators.at(name);
    ASSERT_EQ(back.size(), tensors.size()) << name;
    for (size_t i = 0; i < tensors.size(); ++i)
      EXPECT_TRUE(same_bytes(back[i], tensors[i])) << name << " " << i;
  }
}

TEST(CheckpointStore, KeepsTheNewestRetainAndANewRunReplacesWhatCameAfter) {
  TempDir dir;
  CheckpointStore store(dir.path(), {.retain = 2});
  for (int64_t n = 1; n <= 5; ++n) store.write(numbered(n));
  EXPECT_EQ(store.numbers(), (std::vector<int64_t>{4, 5}));
  // A run restored from 4 writes its next checkpoint as 5: the old 5 goes.
  store.write(numbered(5, 16));
  EXPECT_EQ(store.numbers(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(store.latest().checkpoint->accumulators.at("model")[0].size(), 16);
  store.write(numbered(3));
  EXPECT_EQ(store.numbers(), (std::vector<int64_t>{3})) << "4 and 5 belonged to the abandoned run";
}

TEST(CheckpointStore, ArgumentErrors) {
  TempDir dir;
  EXPECT_THROW(CheckpointStore(dir.path(), {.retain = 0}), Error);
  CheckpointStore store(dir.path());
  EXPECT_THROW(store.write(numbered(0)), Error);
  std::ofstream(dir.path() + "/a-file") << "x";
  EXPECT_THROW(CheckpointStore(dir.path() + "/a-file"), CheckpointError);
  EXPECT_FALSE(CheckpointStore((fs::path(dir.path()) / "fresh").string()).latest().checkpoint.has_value());
}

// Each way a checkpoint can be torn or damaged makes latest() fall back to
// the one before it and say which and why.
TEST(CheckpointStore, TornOrCorruptCheckpointsFallBackToThePreviousOne) {
  struct Damage {
    std::string name, expect;
    std::function<void(const std::string& dir)> apply;
  };
  const std::vector<Damage> damages{
      {"manifest missing", "manifest.json", [](const std::string& d) { fs::remove(d + "/manifest.json"); }},
      {"manifest truncated", "manifest.json",
       [](const std::string& d) {
         fs::resize_file(d + "/manifest.json", fs::file_size(d + "/manifest.json") / 2);
       }},
      {"npy truncated", "bytes", [](const std::string& d) { fs::resize_file(d + "/acc-1.0.npy", 100); }},
      {"npy byte flipped", "hash",
       [](const std::string& d) {
         std::fstream f(d + "/acc-1.0.npy", std::ios::in | std::ios::out | std::ios::binary);
         f.seekp(300);
         f.put('\x55');
       }},
      {"npy missing", "acc-0.0.npy", [](const std::string& d) { fs::remove(d + "/acc-0.0.npy"); }},
  };
  for (const Damage& damage : damages) {
    TempDir dir;
    CheckpointStore store(dir.path());
    for (int64_t n = 1; n <= 3; ++n) store.write(numbered(n));
    damage.apply(dir_of(store, 3));
    const CheckpointLookup found = store.latest();
    ASSERT_TRUE(found.checkpoint.has_value()) << damage.name;
    EXPECT_EQ(found.checkpoint->number, 2) << damage.name;
    EXPECT_EQ(first_s64(found.checkpoint->accumulators.at("count")[0]), 2) << damage.name;
    ASSERT_EQ(found.skipped.size(), 1u) << damage.name;
    EXPECT_NE(found.skipped[0].find("checkpoint 3"), std::string::npos) << found.skipped[0];
    EXPECT_NE(found.skipped[0].find(damage.expect), std::string::npos)
        << damage.name << ": " << found.skipped[0];
  }
}

// A writer killed with SIGKILL at random moments, five times: what is left
// is always a complete checkpoint whose every file agrees with its number,
// and the partial directory it was writing is cleared by the next write.
TEST(CheckpointStore, AWriterKilledMidWriteLeavesTheLastCompleteCheckpoint) {
  TempDir dir;
  std::mt19937 rng(11);
  int64_t next = 1;
  for (int round = 0; round < 5; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // The child only writes (glibc's fork keeps malloc usable) and never returns to the test.
      try {
        CheckpointStore store(dir.path(), {.retain = 2});
        for (int64_t n = next;; ++n) store.write(numbered(n, 1 << 20));
      } catch (...) {}
      _exit(3);
    }
    // Wait for a checkpoint of this round, then kill at a random moment.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<int64_t> present = CheckpointStore(dir.path(), {.retain = 2}).numbers();
      if (!present.empty() && present.back() >= next) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 60)(rng)));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself (status " << status << ")";

    CheckpointStore store(dir.path(), {.retain = 2});
    const CheckpointLookup found = store.latest();
    ASSERT_TRUE(found.checkpoint.has_value()) << "round " << round;
    const Checkpoint& c = *found.checkpoint;
    EXPECT_GE(c.number, next);
    EXPECT_EQ(c.positions.at("samples"), 100 * c.number);
    EXPECT_EQ(first_s64(c.accumulators.at("count")[0]), c.number);
    const std::vector<float> model = c.accumulators.at("model")[0].to_vector<float>();
    EXPECT_EQ(model.size(), size_t{1} << 20);
    EXPECT_TRUE(
        std::all_of(model.begin(), model.end(), [&](float v) { return v == static_cast<float>(c.number); }));
    next = c.number + 1;
  }
  // The next write clears the partial checkpoint the last kill left.
  CheckpointStore(dir.path(), {.retain = 2}).write(numbered(next));
  for (const fs::directory_entry& e : fs::directory_iterator(dir.path()))
    EXPECT_FALSE(e.path().filename().string().ends_with(".partial")) << "left behind: " << e.path();
}

// A full disk: the write fails with a CheckpointError naming the file and the
// reason, the partial checkpoint is removed, and the complete one stays.
// Needs root (a tmpfs of 1 MiB in a mount namespace of the child's own).
TEST(CheckpointStore, AFullDiskFailsTheWriteAndKeepsTheCompleteCheckpoint) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root (CI runs as root)";
  TempDir dir;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
          mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=1m") != 0)
        _exit(10);
      CheckpointStore store(dir.path());
      store.write(numbered(1, 1024));
      try {
        store.write(numbered(2, 1 << 20));  // 4 MiB into 1 MiB
        code = 11;
      } catch (const CheckpointError& e) {
        const std::string what = e.what();
        if (what.find("acc-1.0.npy") == std::string::npos || what.find("No space left") == std::string::npos)
          code = 12;
      }
      const CheckpointLookup found = store.latest();
      if (!found.checkpoint || found.checkpoint->number != 1) code = 13;
      for (const fs::directory_entry& e : fs::directory_iterator(dir.path()))
        if (e.path().filename().string().ends_with(".partial")) code = 14;
    } catch (...) { code = 15; }
    _exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 10) GTEST_SKIP() << "this kernel refused a mount namespace with a tmpfs";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "11: no error; 12: the message lacks the file or the reason; 13: the "
         "complete checkpoint was lost; 14: a partial checkpoint was left; 15: threw";
}

}  // namespace
}  // namespace sluice
