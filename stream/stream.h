#pragma once
// Streams: one compiled function run chunk by chunk, carrying an accumulator
// from chunk to chunk (the contract of EXLA's stream, Nx.Stream send / recv /
// done). Start here.
//
//   auto s = sluice::stream(
//       [](sluice::Expr x, sluice::Expr acc) {
//         auto total = acc + sluice::sum(x);
//         return sluice::tuple(total, total);        // {output, new acc}
//       },
//       {sluice::f32({4})}, {sluice::scalar(0.0f)});
//   for (auto& chunk : chunks) s.send(chunk);      // returns at once
//   for (size_t i = 0; i < chunks.size(); ++i) std::cout << s.recv()[0];
//   sluice::Tensor total = s.done()[0];             // the final accumulator
//
// f takes the chunk's tensors then the accumulator's tensors, as separate
// Exprs (or one std::vector<Expr>), and returns a Tuple of its outputs
// followed by the new accumulator (as many tensors as acc_init has).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include <sluice/stream/step.h>

namespace sluice {

struct StreamOptions {
  // Unreceived outputs allowed before send blocks (backpressure).
  size_t max_pending = 64;
  // Outputs are dropped instead of queued for recv (only the accumulator matters).
  bool discard_outputs = false;
};

// The Function a stream of f over input_spec with accumulator acc_init runs:
// parameters are the chunk's specs then the accumulator's.
template <typename F>
Function stream_function(F&& f, const std::vector<Spec>& input_spec, const Tensors& acc_init);

// A running stream. Thread safety: send may be called from any number of
// threads at once (chunks are ordered by arrival); recv and done from any
// thread. The device is held only while a chunk computes, never for the life
// of the stream: other executables and streams share it meanwhile.
class Stream {
 public:
  // Prefer sluice::stream(...); this takes an already traced function.
  Stream(const Function& f, std::vector<Spec> input_spec, const Tensors& acc_init, Device device,
         StreamOptions options);
  ~Stream();
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;

  // Checks the chunk against input_spec (ShapeError/TypeError; the stream
  // stays usable), copies it to the stream's device if needed, and enqueues
  // it; returns without waiting for the computation. Blocks while
  // max_pending outputs wait unreceived; throws StreamError instead when the
  // calling thread is the one that must recv (it would wait on itself).
  void send(const Tensors& chunk);
  void send(const Tensor& chunk) { send(Tensors{chunk}); }

  // The outputs of the oldest unreceived chunk, waiting until they are
  // computed. A chunk whose computation failed throws StreamError naming its
  // sequence number (0 for the first chunk sent).
  Tensors recv();

  // Waits for every chunk sent and returns the final accumulator; the stream
  // is closed afterwards. With outputs still unreceived (and discard_outputs
  // off) throws StreamError saying how many, and the stream stays open.
  Tensors done();

  const std::vector<Spec>& input_spec() const;
  const std::vector<Spec>& output_spec() const;
  Device device() const;
  // Chunks sent and outputs received so far.
  uint64_t sent() const;
  uint64_t received() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with continuations of pending chunks
};

// Opens a stream of f(chunk..., acc...) -> {outputs..., new acc...} on
// `device`, compiled once (through the compile cache).
template <typename F>
Stream stream(F&& f, std::vector<Spec> input_spec, const Tensors& acc_init, Device device = host(),
              StreamOptions options = {}) {
  Function fn = stream_function(std::forward<F>(f), input_spec, acc_init);
  return Stream(fn, std::move(input_spec), acc_init, device, options);
}
inline Stream stream(const Function& f, std::vector<Spec> input_spec, const Tensors& acc_init,
                     Device device = host(), StreamOptions options = {}) {
  return Stream(f, std::move(input_spec), acc_init, device, options);
}

// Whether a stream of this function and these specs is already compiled on device.
template <typename F>
bool stream_cached(F&& f, const std::vector<Spec>& input_spec, const Tensors& acc_init, Device device = host()) {
  return jit_cached(stream_function(std::forward<F>(f), input_spec, acc_init), device);
}

// ---- implementation of the templates
template <typename F>
Function stream_function(F&& f, const std::vector<Spec>& input_spec, const Tensors& acc_init) {
  if constexpr (std::is_convertible_v<F, const Function&>) {
    return f;
  } else {
    return trace(step_parameters(input_spec, acc_init, "stream"), std::forward<F>(f));
  }
}

}  // namespace sluice
