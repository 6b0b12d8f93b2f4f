#pragma once
// Benchmark programs that time other processes (a restored compute
// process, the processes of a partitioned pipeline): start one, read the
// line it prints, wait for it.

#include <sys/types.h>

#include <string>
#include <vector>

namespace sluice::bench {

class ChildProcess {
 public:
  // Starts `argv` (argv[0] a path); with `read_output`, its standard output
  // comes to first_line(). std::runtime_error when it cannot start.
  ChildProcess(const std::vector<std::string>& argv, bool read_output);
  ~ChildProcess();  // waits for it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The first line it printed (without the newline): blocks until it came
  // or the process closed its output.
  std::string first_line();
  // Waits for it; whether it exited with 0.
  bool succeeded();

 private:
  pid_t pid_ = 0;
  int output_ = -1;
  int status_ = -1;  // -1: not waited for yet
};

// A program next to the running benchmark's (bench_restore_child, ...).
std::string sibling_program(const std::string& name);

}  // namespace sluice::bench
