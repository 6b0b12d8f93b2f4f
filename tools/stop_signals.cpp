#include "tools/stop_signals.h"

#include <atomic>

namespace sluice::tools {
namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int) { stop_requested.store(true); }

}  // namespace

StopSignals::StopSignals() {
  stop_requested.store(false);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocking wait returns EINTR, and the loops around it
  // look at requested() again.
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

bool StopSignals::requested() const { return stop_requested.load(); }

}  // namespace sluice::tools
