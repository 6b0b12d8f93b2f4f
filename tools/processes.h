#pragma once
// Child processes for the three-process demo: started together, waited for
// together, and never left running when the parent is done.

#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace sluice::tools {

// The path of the running program, to start copies of it.
std::string self_path();

// In a child a ProcessGroup started: ask the kernel for SIGTERM when the
// parent dies (PR_SET_PDEATHSIG), and exit at once if it already has.
void exit_with_parent();

// Processes that only make sense together: when one fails, or all run past
// the deadline, the others are stopped, since a peer waiting on a dead one
// would wait forever. Thread safety: one thread uses a group.
class ProcessGroup {
 public:
  struct Exit {
    std::string name;
    int status;       // the exit status, or 128 + the signal that ended it
    std::string how;  // "exited 0", "killed by signal 15 (stopped: compute failed)"
    int restarts = 0;
  };

  ProcessGroup() = default;
  ~ProcessGroup();  // kills and reaps any still running
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts args[0] with args (stdin, stdout and stderr shared with this
  // process), in a process group of the children's own: a Ctrl-C at the
  // terminal reaches this process alone, which stops them in order, and
  // killpg reaches them all. Each learns this process's pid from
  // SLUICE_PARENT_PID (see exit_with_parent). Throws sluice::Error when it
  // cannot be started.
  // `restart_when_killed`: a process that a signal ends (SIGKILL, say) and
  // that the group did not stop is started again with the same arguments,
  // saying so on stderr: for a role that resumes from its checkpoints.
  void start(const std::string& name, const std::vector<std::string>& args, bool restart_when_killed = false);
  // Waits until every process has ended, stopping the rest when one fails
  // or `timeout_seconds` pass. Returns their exits in start order.
  // `interrupted` is asked as it waits: true stops them all too.
  std::vector<Exit> wait(double timeout_seconds, const std::function<bool()>& interrupted = [] { return false; });

 private:
  struct Child {
    std::string name;
    std::vector<std::string> args;
    bool restart_when_killed = false;
    pid_t pid;
    bool running = true;
    std::string stopped_because;
    Exit exit;
  };
  void stop_running(const std::string& because);
  pid_t spawn(const std::string& name, const std::vector<std::string>& args);
  std::vector<Child> children_;
  pid_t group_ = 0;  // the children's process group: the first child's pid
};

}  // namespace sluice::tools
