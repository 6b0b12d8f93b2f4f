// Starting, watching and stopping the demo's child processes (POSIX).

#include "tools/processes.h"

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/core.h>

#include <sluice/base/error.h>

extern char** environ;

namespace sluice::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr auto kGrace = std::chrono::seconds(2);  // between SIGTERM and SIGKILL
constexpr int kExitOrphaned = 1;

std::string describe(int wait_status, int* status) {
  if (WIFEXITED(wait_status)) {
    *status = WEXITSTATUS(wait_status);
    return fmt::format("exited {}", *status);
  }
  int sig = WTERMSIG(wait_status);
  *status = 128 + sig;
  return fmt::format("killed by signal {} ({})", sig, strsignal(sig));
}

}  // namespace

std::string self_path() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw ConfigError(error_message("self_path", "", "/proc/self/exe to name this program", ec.message()));
  return p.string();
}

void exit_with_parent() {
  const char* parent = std::getenv("SLUICE_PARENT_PID");
  if (!parent) return;
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died before the request: then this process has
  // been handed to another and must not run on alone.
  if (fmt::format("{}", getppid()) != parent) std::_Exit(kExitOrphaned);
}

ProcessGroup::~ProcessGroup() {
  for (Child& c : children_)
    if (c.running) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, nullptr, 0);
    }
}

void ProcessGroup::start(const std::string& name, const std::vector<std::string>& args,
                         bool restart_when_killed) {
  children_.push_back(
      {.name = name, .args = args, .restart_when_killed = restart_when_killed, .pid = spawn(name, args)});
}

pid_t ProcessGroup::spawn(const std::string& name, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {fmt::format("SLUICE_PARENT_PID={}", getpid())};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SLUICE_PARENT_PID=", 18) != 0) env_strings.emplace_back(*e);
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, group_);  // 0: a new group, led by the first child
  pid_t pid = 0;
  int err = posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), env.data());
  posix_spawnattr_destroy(&attr);
  if (err) throw ConfigError(error_message("process " + name, "", "to start " + args[0], std::strerror(err)));
  if (group_ == 0) group_ = pid;
  return pid;
}

void ProcessGroup::stop_running(const std::string& because) {
  for (Child& c : children_)
    if (c.running && c.stopped_because.empty()) {
      c.stopped_because = because;
      kill(c.pid, SIGTERM);
    }
}

std::vector<ProcessGroup::Exit> ProcessGroup::wait(double timeout_seconds,
                                                   const std::function<bool()>& interrupted) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds));
  std::optional<Clock::time_point> kill_at;
  size_t running = 0;
  for (const Child& c : children_) running += c.running;
  while (running > 0) {
    for (Child& c : children_) {
      if (!c.running) continue;
      int wait_status = 0;
      pid_t r = waitpid(c.pid, &wait_status, WNOHANG);
      if (r == 0) continue;
      if (r > 0 && WIFSIGNALED(wait_status) && c.restart_when_killed && c.stopped_because.empty() &&
          !kill_at) {
        ++c.exit.restarts;
        fmt::print(stderr, "{}: killed by signal {}; starting it again (restart {})\n", c.name,
                   WTERMSIG(wait_status), c.exit.restarts);
        c.pid = spawn(c.name, c.args);
        continue;
      }
      c.running = false;
      --running;
      c.exit.name = c.name;
      if (r < 0) {
        c.exit.status = 1;
        c.exit.how = std::string("lost (") + std::strerror(errno) + ")";
      } else {
        c.exit.how = describe(wait_status, &c.exit.status);
      }
      if (!c.stopped_because.empty()) c.exit.how += " (stopped: " + c.stopped_because + ")";
      if (c.exit.restarts > 0) c.exit.how += fmt::format(" (restarted {} times)", c.exit.restarts);
      if (c.exit.status != 0 && c.stopped_because.empty()) stop_running(c.name + " failed");
    }
    if (running == 0) break;
    auto now = Clock::now();
    if (now >= deadline && !kill_at) stop_running("the run passed its deadline");
    if (!kill_at && interrupted()) stop_running("interrupted");
    bool stopping = false;
    for (const Child& c : children_) stopping = stopping || (c.running && !c.stopped_because.empty());
    if (stopping && !kill_at) kill_at = now + kGrace;
    if (kill_at && now >= *kill_at)
      for (const Child& c : children_)
        if (c.running) kill(c.pid, SIGKILL);
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<Exit> exits;
  for (const Child& c : children_) exits.push_back(c.exit);
  return exits;
}

}  // namespace sluice::tools
