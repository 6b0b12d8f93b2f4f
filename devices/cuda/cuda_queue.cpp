#include <sluice/devices/cuda/cuda_queue.h>

#include <fmt/format.h>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/base/error.h>

namespace sluice::cuda {

CudaEvent::~CudaEvent() { cudaEventDestroy(event_); }

bool CudaEvent::query() const { return cudaEventQuery(event_) != cudaErrorNotReady; }

CudaQueue::CudaQueue(Device device, int cuda_device, std::string name)
    : device_(device), cuda_device_(cuda_device), name_(std::move(name)) {
  check(cudaSetDevice(cuda_device_), device_.str(), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), device_.str(), "cudaStreamCreate " + name_);
  thread_ = std::thread([this] { complete(); });
}

CudaQueue::~CudaQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  cudaStreamDestroy(stream_);
}

EventPtr CudaQueue::record(std::vector<std::shared_ptr<void>> keep) {
  cudaEvent_t e = nullptr;
  // Blocking sync: the completion thread sleeps in cudaEventSynchronize.
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync), device_.str(),
        "cudaEventCreate");
  auto point = std::make_shared<CudaEvent>(device_, e);
  auto done = std::make_shared<Event>(point);
  {
    // Recorded and listed under one lock: the list keeps the stream's order.
    std::lock_guard lock(mutex_);
    check(cudaEventRecord(e, stream_), device_.str(), "cudaEventRecord on " + name_);
    pending_.push_back({point, done, std::move(keep)});
  }
  changed_.notify_one();
  return done;
}

void CudaQueue::wait(const CudaEvent& event) {
  check(cudaStreamWaitEvent(stream_, event.get(), 0), device_.str(), "cudaStreamWaitEvent on " + name_);
}

void CudaQueue::wait_for(const std::vector<const Buffer*>& buffers) {
  for (const Buffer* b : buffers) {
    if (!b->ready) continue;
    if (b->ready->is_set()) {
      if (std::exception_ptr e = b->ready->error()) std::rethrow_exception(e);
      continue;
    }
    const auto* point = dynamic_cast<const CudaEvent*>(b->ready->device_event().get());
    if (point && point->device() == device_)
      wait(*point);
    else
      b->ready->wait();  // another backend's work: the host waits
  }
}

void CudaQueue::synchronize() {
  check(cudaStreamSynchronize(stream_), device_.str(), "cudaStreamSynchronize on " + name_);
}

void CudaQueue::complete() {
  cudaSetDevice(cuda_device_);
  for (;;) {
    Pending p;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;
      p = std::move(pending_.front());
      pending_.pop_front();
    }
    const cudaError_t status = cudaEventSynchronize(p.point->get());
    p.keep.clear();
    if (status == cudaSuccess) {
      p.done->set_ready();
    } else {
      p.done->set_error(std::make_exception_ptr(DeviceError(fmt::format(
          "{}: work on its {} queue failed: {} ({})", device_.str(), name_, cudaGetErrorName(status),
          cudaGetErrorString(status)))));
    }
  }
}

}  // namespace sluice::cuda
