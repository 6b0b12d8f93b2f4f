#pragma once
// A Function compiled for the host: its Plan, and how a run goes. run()
// returns at once. A small plan whose arguments are ready runs inline on the
// calling thread (a hand-off to a worker costs ~23 us parked; `add` on four
// floats must cost under a microsecond); so does any plan called from inside
// a oneTBB task, such as a pipeline stage, which must not block on work it
// enqueued. Otherwise the outputs come back pending, the run is chained on its
// arguments' events (no thread waits) and executes in the thread pool's arena,
// setting the outputs' event when done or failing it with the error, which
// names the step that failed.

#include <memory>
#include <vector>

#include <sluice/devices/detail/backend_impl.h>
#include <sluice/devices/cpu/plan.h>

namespace sluice::cpu {

class CompiledPlan;  // the plan with its pool of arenas

// Thread safety: run may be called from many threads at once; each execution
// takes its own arena from a pool the executable keeps.
class CpuExecutable final : public ExecutableImpl {
 public:
  CpuExecutable(Function f, Device device, Plan plan);
  ~CpuExecutable() override;

  const Function& function() const override { return function_; }
  Device device() const override { return device_; }
  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const bool> donated,
                             OutputMemory output_memory) override;

 private:
  Function function_;
  Device device_;
  std::shared_ptr<CompiledPlan> plan_;  // shared with runs in flight, which may outlive the executable
};

}  // namespace sluice::cpu
