#include "tests/io/wire_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <stdexcept>
#include <thread>

#include <sluice/io/npy.h>

extern char** environ;

namespace sluice::test {
namespace {

// A version 1.0 .npy header around any dict text, padded as numpy pads.
std::string npy_with_dict(const std::string& dict) {
  std::string d = dict;
  while ((10 + d.size() + 1) % 64 != 0) d += ' ';
  d += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(d.size() & 0xff);
  out += static_cast<char>(d.size() >> 8);
  return out + d;
}

void replace(std::string& s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  if (at == std::string::npos) throw std::logic_error("test helper: '" + from + "' not in '" + s + "'");
  s.replace(at, from.size(), to);
}

}  // namespace

std::vector<Tensor> peer_message(uint64_t i, int64_t floats) {
  std::vector<uint32_t> bits(static_cast<size_t>(floats));
  for (uint64_t k = 0; k < bits.size(); ++k) {
    uint64_t z = (i * bits.size() + k + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    bits[k] = static_cast<uint32_t>(z ^ (z >> 31));
  }
  return {tensor_from_bytes(f32({floats}), bits.data()), scalar(static_cast<int64_t>(i))};
}

std::vector<Spec> peer_message_spec(int64_t floats) { return {f32({floats}), s64({})}; }

std::vector<std::string> frames_of(const wire::Message& m, wire::EncodeOptions options) {
  std::vector<std::string> out;
  for (const wire::Frame& f : wire::encode(m, options)) out.emplace_back(static_cast<const char*>(f.data), f.size);
  return out;
}

std::vector<wire::ReceivedFrame> received(const std::vector<std::string>& frames) {
  std::vector<wire::ReceivedFrame> out;
  for (const std::string& f : frames) {
    // An owned copy, 16-byte aligned as a received ZeroMQ message would be.
    auto copy = std::make_shared<std::string>(f);
    out.push_back({{reinterpret_cast<const uint8_t*>(copy->data()), copy->size()}, copy});
  }
  return out;
}

wire::Message data_message(std::vector<Tensor> tensors, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header.kind = wire::Kind::Data;
  m.header.seq = seq;
  m.header.stream_id = stream_id;
  m.tensors = std::move(tensors);
  return m;
}

std::vector<Malformed> malformed_messages() {
  const std::vector<std::string> good = frames_of(data_message({random_tensor(f32({2, 3}), 1)}, 5));
  std::vector<Malformed> out;
  auto add = [&](std::string name, std::string reason, auto change) {
    std::vector<std::string> frames = good;
    change(frames);
    out.push_back({std::move(name), std::move(frames), std::move(reason)});
  };
  add("bad magic", "magic", [](auto& f) { f[0][0] = 'X'; });
  add("bad version", "version", [](auto& f) { f[0][4] = 2; });
  add("unknown kind", "expected kind 0 to 8", [](auto& f) { f[0][5] = 9; });
  add("a batch", "a batch is split into its messages", [](auto& f) { f[0][5] = 8; });
  add("update kind in a data message's frames", "expected 4 frames, found 3", [](auto& f) { f[0][5] = 7; });
  add("barrier kind in a data frame", "expected 40 bytes for kind checkpoint barrier",
      [](auto& f) { f[0][5] = 5; });
  add("control kind in a data frame", "expected 80 bytes for kind credit", [](auto& f) { f[0][5] = 3; });
  add("big-endian dtype", "descr", [](auto& f) { replace(f[1], "'<f4'", "'>f4'"); });
  add("unknown dtype", "descr", [](auto& f) { replace(f[1], "'<f4'", "'|O8'"); });
  add("rank 17", "rank", [](auto& f) {
    f[1] = npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,6), }");
  });
  add("negative dim", "dimension",
      [](auto& f) { f[1] = npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }"); });
  add("fortran order", "fortran_order", [](auto& f) { replace(f[1], "False", "True "); });
  add("npy version 2.0 on the wire", "version 1.0", [](auto& f) { f[1][6] = 2; });
  add("garbage after the dict", "padding", [](auto& f) { replace(f[1], "}   ", "} x "); });
  add("data frame too short", "data frame", [](auto& f) { f[2].pop_back(); });
  add("data frame too long", "data frame", [](auto& f) { f[2] += "1234"; });
  add("truncated header frame", "header frame", [](auto& f) { f[0].resize(20); });
  add("truncated npy header", "header claims", [](auto& f) { f[1].resize(40); });
  add("missing data frame", "frames", [](auto& f) { f.pop_back(); });
  add("missing tensor frames", "frames", [](auto& f) { f.resize(1); });
  add("extra frame", "frames", [](auto& f) { f.push_back("more"); });
  add("count above the frames", "frames", [](auto& f) { f[0][24] = 2; });
  add("oversized claim", "data frame", [](auto& f) { f[1] = npy::header(f32({int64_t{1} << 40})); });
  add("overflowing claim", "overflows", [](auto& f) {
    f[1] = npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }");
  });
  std::vector<std::string> corrupted = frames_of(data_message({random_tensor(f32({2, 3}), 1)}, 5), {.crc = true});
  corrupted[2][3] ^= 0x10;
  out.push_back({"crc mismatch", corrupted, "CRC-32C"});
  add("crc without its flag", "crc", [](auto& f) { f[0][28] = 7; });
  add("end of stream with tensors", "tensor count", [](auto& f) { f[0][5] = 1; });
  add("error message not UTF-8", "UTF-8", [](auto& f) {
    f[0][5] = 2;
    f[0][24] = 0;
    f.resize(2);
    f[1] = "bad \xff\xfe bytes";
  });
  std::mt19937 rng(42);
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> frames(static_cast<size_t>(1 + i));
    for (std::string& f : frames) {
      f.resize(rng() % 100);
      for (char& c : f) c = static_cast<char>(rng());
    }
    out.push_back({"random bytes " + std::to_string(i), frames, "expected"});
  }
  return out;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice-io-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Child::Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
             const std::string& output) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  for (char** e = environ; *e; ++e) env.push_back(*e);
  env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!output.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  int failed = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0]);
  }
}

bool Child::exited() {
  if (status_ >= 0) return true;
  int raw = 0;
  if (pid_ <= 0 || waitpid(pid_, &raw, WNOHANG) != pid_) return false;
  status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return true;
}

void Child::signal(int signal) {
  if (pid_ > 0 && !exited()) kill(pid_, signal);
}

int Child::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited()) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      int raw = 0;
      waitpid(pid_, &raw, 0);
      status_ = 128 + SIGKILL;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

Child::~Child() {
  if (pid_ > 0 && !exited()) {
    kill(pid_, SIGKILL);
    int raw = 0;
    waitpid(pid_, &raw, 0);
  }
}

Watchdog::Watchdog(std::shared_ptr<ZmqSource> source, std::chrono::milliseconds limit)
    : thread_([this, source = std::move(source), limit] {
        std::unique_lock lock(mutex_);
        if (!dismissed_.wait_for(lock, limit, [&] { return done_; })) {
          fired_ = true;
          source->stop();
        }
      }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  dismissed_.notify_all();
  thread_.join();
}

std::string python_with_numpy_and_zmq() {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    std::string probe = std::string(python) + " -c 'import numpy, zmq' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return python;
  }
  return "";
}

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_tcp_port: no socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("free_tcp_port: cannot bind 127.0.0.1:0");
  return ntohs(address.sin_port);
}

wire::Message next_message(Channel& in, const std::string& what) {
  std::optional<wire::Message> m = in.recv(kReceiveWait);
  if (!m) throw std::runtime_error(what + ": nothing within " + std::to_string(kReceiveWait.count()) + " ms");
  return *m;
}

bool await_subscription(Channel& pub, Channel& sub, uint64_t stream) {
  const auto deadline = std::chrono::steady_clock::now() + kReceiveWait;
  while (std::chrono::steady_clock::now() < deadline) {
    pub.send({scalar(int64_t{0})}, 0, stream);
    if (sub.recv(std::chrono::milliseconds(20))) return true;
  }
  return false;
}

int64_t value_of(const wire::Message& m) { return m.tensors.at(0).to_vector<int64_t>().at(0); }

std::string mapping_of(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    // start-end perms offset dev inode path
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);
    const size_t dash = range.find('-');
    const uintptr_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (start <= a && a < end) return perms + " " + path;
  }
  return {};
}

}  // namespace sluice::test
