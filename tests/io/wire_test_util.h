#pragma once
// What the io tests share: tensors of every dtype and rank (from
// tests/devices/tensor_bytes.h), frames as strings, the catalogue of
// malformed messages, temporary directories and child processes that never
// outlive a failing test.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/io/channel.h>
#include <sluice/io/wire.h>
#include <sluice/pipeline/zmq_nodes.h>

#include "tests/devices/tensor_bytes.h"

namespace sluice::test {

// Message i of the two-process test: f32[16] of arbitrary bit patterns
// (NaN payloads, subnormals, infinities) and i as an s64 scalar.
// `floats` sets the f32 tensor's length (16 MiB messages: 1 << 22).
std::vector<Tensor> peer_message(uint64_t i, int64_t floats = 16);
std::vector<Spec> peer_message_spec(int64_t floats = 16);

// The frames of a message as strings, and back as received frames.
std::vector<std::string> frames_of(const wire::Message& m, wire::EncodeOptions options = {});
std::vector<wire::ReceivedFrame> received(const std::vector<std::string>& frames);
wire::Message data_message(std::vector<Tensor> tensors, uint64_t seq, uint64_t stream_id = 0);

// One malformed message per class a reader must reject, and a word its
// WireError must contain.
struct Malformed {
  std::string name;
  std::vector<std::string> frames;
  std::string reason;
};
std::vector<Malformed> malformed_messages();

// A fresh directory under /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string ipc(const std::string& name) const { return "ipc://" + path_ + "/" + name; }

 private:
  std::string path_;
};

// A child process running `argv`; killed (SIGKILL) on destruction if it is
// still running, so that a failing test leaves nothing behind.
class Child {
 public:
  // `output`: a file that takes its stdout and stderr (empty: this process's).
  explicit Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
                 const std::string& output = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // The exit status (0..255; 128 + signal when killed by one), or -1 when it
  // has not exited within `timeout` (it is then killed).
  int wait(std::chrono::milliseconds timeout);
  // Whether it has exited (the status is kept for wait).
  bool exited();
  // Sends `signal` (SIGKILL, SIGSTOP, SIGCONT...) to it.
  void signal(int signal);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// Stops a ZeroMQ source that is still receiving after `limit`, so that a
// test whose peer failed ends (and fails) instead of hanging.
class Watchdog {
 public:
  Watchdog(std::shared_ptr<ZmqSource> source, std::chrono::milliseconds limit);
  ~Watchdog();  // dismisses it
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  bool fired() const { return fired_; }

 private:
  std::mutex mutex_;
  std::condition_variable dismissed_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

// The next message on `in`, which must come within kReceiveWait;
// std::runtime_error naming `what` otherwise.
inline constexpr std::chrono::milliseconds kReceiveWait{5000};
wire::Message next_message(Channel& in, const std::string& what);
// A subscription takes a moment to reach its publisher: sends probes (s64
// scalars of `stream`) until `sub` receives one; false after kReceiveWait.
// Probes sent just before may still arrive after it returns.
bool await_subscription(Channel& pub, Channel& sub, uint64_t stream);
// The value of a message whose first tensor is an s64 scalar.
int64_t value_of(const wire::Message& m);

// Runs `body` on a thread of its own; join() returns what it threw (empty:
// nothing), and the destructor joins too, so that a failing test never
// leaves the thread behind.
class Worker {
 public:
  explicit Worker(std::function<void()> body)
      : thread_([this, body = std::move(body)] {
          try {
            body();
          } catch (const std::exception& e) { error_ = e.what(); }
        }) {}
  ~Worker() {
    if (thread_.joinable()) thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  std::string join() {
    thread_.join();
    return error_;
  }

 private:
  std::string error_;
  std::thread thread_;
};

// /usr/bin/python3 or the python3 on PATH, whichever imports numpy and zmq;
// empty when neither does.
std::string python_with_numpy_and_zmq();

// A tcp port on 127.0.0.1 that was free a moment ago, for a peer that must
// bind a port named in advance (another process may take it in between).
int free_tcp_port();

// How this process maps `address`: its /proc/self/maps permissions and
// path ("r--s /memfd:sluice-shm (deleted)"); empty when nothing maps it.
std::string mapping_of(const void* address);

}  // namespace sluice::test
