#pragma once
// A CUDA stream and the thread that reports its work done: the CUDA
// backend's events (backend_impl.h, DeviceEvent). Work is queued on the
// stream; record() marks the point after it with a CUDA event and returns
// the host Event that says when the device got there. A completion thread
// per queue waits for those points in order (a blocking-sync event: it
// sleeps, it does not spin), then releases what the work needed alive and
// sets the Event, running its continuations there (a stage's output is
// passed on, a dependent host run starts) — never on a CUDA callback thread,
// where calling CUDA is not allowed.
// Thread safety: every member may be called from any thread.

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sluice/devices/detail/backend_impl.h>

namespace sluice::cuda {

// A point in one queue's work: a CUDA event recorded on its stream.
class CudaEvent final : public DeviceEvent {
 public:
  CudaEvent(Device device, cudaEvent_t event) : device_(device), event_(event) {}
  ~CudaEvent() override;
  Device device() const override { return device_; }
  bool query() const override;
  cudaEvent_t get() const { return event_; }

 private:
  Device device_;
  cudaEvent_t event_;
};

class CudaQueue {
 public:
  CudaQueue(Device device, int cuda_device, std::string name);
  ~CudaQueue();  // waits for the work queued, then stops its thread
  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;

  cudaStream_t stream() const { return stream_; }
  // The point after the work queued so far: the Event is set when the
  // device is past it (failed with the device's error if the work failed),
  // and `keep` (buffers the work reads or writes, scratch) is let go then.
  EventPtr record(std::vector<std::shared_ptr<void>> keep);
  // Makes work queued next wait, on the device, for the work before `event`
  // (of any queue of the same device).
  void wait(const CudaEvent& event);
  // Makes work queued next wait for every pending buffer among `buffers`:
  // on the device for this device's work, else (another backend's work) by
  // blocking until it is done. DeviceError when one failed.
  void wait_for(const std::vector<const Buffer*>& buffers);
  // Blocks until the work queued so far is done (without spinning).
  void synchronize();

 private:
  struct Pending {
    std::shared_ptr<CudaEvent> point;
    EventPtr done;
    std::vector<std::shared_ptr<void>> keep;
  };
  void complete();  // the completion thread

  Device device_;
  int cuda_device_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sluice::cuda
