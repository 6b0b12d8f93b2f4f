#pragma once
// The start of a partitioned run: before any data moves, every process
// checks with the placement's first process (the host of the meeting) that
// they all run the same pipeline, specs included. Internal: partition.cpp.
//
// Each process sends its name and a description of the whole pipeline; the
// host waits until every process of the placement came, then answers all
// with one verdict, so that a process built from another version of the
// program, or a process missing, fails the run in every process with the
// same message. The host goes on answering latecomers (a process restarted
// from a checkpoint) for as long as it runs. With the placement's
// CurveZMQ keys the meeting is secured as the edges are: the host lets in
// the placement's processes only, and a guest refused says so at once.

#include <chrono>
#include <memory>
#include <string>

#include <sluice/pipeline/placement.h>

namespace sluice {

class Meeting {
 public:
  // Returns once every process came with the same description; PipelineError
  // naming the difference, or the processes that did not come within
  // `timeout`, otherwise.
  Meeting(const Placement& placement, const std::string& me, std::string description,
          std::chrono::milliseconds timeout);
  ~Meeting();  // the host stops answering latecomers
  Meeting(const Meeting&) = delete;
  Meeting& operator=(const Meeting&) = delete;

 private:
  struct Host;
  std::unique_ptr<Host> host_;
};

}  // namespace sluice
