#pragma once
// Step: one compiled f(chunk..., acc...) -> {outputs..., new acc...} and the
// checks around it. What a Stream runs per chunk and what a pipeline Stage
// runs per message: one mechanism, one set of error messages.

#include <string>
#include <vector>

#include <sluice/devices/backend.h>

namespace sluice {

// Several tensors travelling together: a chunk, an output, an accumulator.
using Tensors = std::vector<Tensor>;

// Thread safety: const members may be called concurrently.
class Step {
 public:
  Step() = default;
  // Compiles f for device (through the compile cache) after checking that its
  // parameters are input_spec then acc_init's specs and that it returns the
  // new accumulator last, with acc_init's specs. `who` names the owner in
  // errors ("stream", "stage 'spectrum'").
  Step(const Function& f, std::vector<Spec> input_spec, const Tensors& acc_init, Device device, std::string who);
  // The checks of the constructor without the compile: f's outputs before
  // the new accumulator, what a Step of it would give. StreamError as the
  // constructor. For an owner that knows its function before its device.
  static std::vector<Spec> outputs_of(const Function& f, const std::vector<Spec>& input_spec,
                                      const Tensors& acc_init, const std::string& who);

  // ShapeError/TypeError when the chunk does not match input_spec; otherwise
  // the chunk on this step's device (copied only when it is elsewhere).
  Tensors place(const Tensors& chunk) const;
  // Starts the computation of one chunk: donates `acc`, replaces it with the
  // new accumulator, and returns the outputs (both may still be computing).
  Tensors run(const Tensors& placed_chunk, Tensors& acc, OutputMemory output_memory = OutputMemory::Default) const;
  // A copy of acc_init on this step's device: the caller's tensors stay valid.
  Tensors initial_acc(const Tensors& acc_init) const;

  const std::vector<Spec>& input_spec() const { return input_spec_; }
  const std::vector<Spec>& output_spec() const { return output_spec_; }
  size_t acc_count() const { return acc_count_; }
  Device device() const { return device_; }
  const std::string& who() const { return who_; }

 private:
  Executable exe_;
  std::vector<Spec> input_spec_, output_spec_;
  size_t acc_count_ = 0;
  Device device_;
  std::string who_;
};

// The parameters of a step's function: the chunk's specs, then the accumulator's.
std::vector<Spec> step_parameters(const std::vector<Spec>& input_spec, const Tensors& acc_init, const std::string& who);
std::string specs_str(const std::vector<Spec>& specs);
std::vector<Spec> specs_of(const Tensors& tensors);

}  // namespace sluice
