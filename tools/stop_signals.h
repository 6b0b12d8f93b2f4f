#pragma once
// SIGINT and SIGTERM as a request to stop cleanly: while a StopSignals
// lives, the two signals set a flag instead of killing the process, so that
// a command ends its stream (end of stream sent, acknowledgements awaited)
// before it exits. The previous handlers come back when it goes.
//
// Thread safety: requested() may be called from any thread; one
// StopSignals at a time per process.

#include <csignal>

namespace sluice::tools {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  bool requested() const;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace sluice::tools
