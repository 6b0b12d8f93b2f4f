#include "bench/child_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace sluice::bench {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, bool read_output) {
  int out[2] = {-1, -1};
  if (read_output && pipe(out) != 0) throw std::runtime_error("cannot make a pipe for " + argv.at(0));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (read_output) {
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int failed = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (read_output) {
    close(out[1]);
    output_ = out[0];
  }
  if (failed != 0) {
    if (output_ >= 0) close(output_);
    throw std::runtime_error("cannot start " + argv.at(0));
  }
}

ChildProcess::~ChildProcess() {
  succeeded();
  if (output_ >= 0) close(output_);
}

std::string ChildProcess::first_line() {
  std::string line;
  char c = 0;
  while (output_ >= 0 && read(output_, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

bool ChildProcess::succeeded() {
  if (status_ == -1 && waitpid(pid_, &status_, 0) != pid_) status_ = -2;
  return status_ >= 0 && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
}

std::string sibling_program(const std::string& name) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / name).string();
}

}  // namespace sluice::bench
