#pragma once
// What a backend implements. Callers use backend.h; only backends (cpu/,
// cuda/) and the devices layer's own glue include this file. A backend is
// registered once, by one line in its folder's CMakeLists.txt
// (sluice_register_backend, which writes the table registered_backends()
// returns); core code never asks which backend
// it has, only what it can do (capabilities, declines, host_memory).
//
// A backend in outline (devices/cpu/ and devices/cuda/ are the two there are):
//   - memory: allocate, upload, download, copy between its devices; a
//     Buffer's `memory` keeps its allocation alive, and frees it through the
//     backend's allocator when the last holder lets go;
//   - events: every buffer being computed has an Event; work queued on a
//     device also has a DeviceEvent (below);
//   - compile: run the graph passes it wants, lower the Function (lowering.h:
//     liveness, scratch reuse, aliases, donation), turn each lowered step
//     into what it runs, and run without blocking (ExecutableImpl::run), its
//     outputs made by run_outputs.h.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sluice/devices/backend.h>

namespace sluice {

// ---------------------------------------------------------------- DeviceEvent
// A point in one device's queue of work, after the work an Event waits for (a
// CUDA event recorded on a stream). A backend that queues work:
//   - records one after each piece of work it queues and gives it to the
//     Event of the buffers that work writes (Event's constructor);
//   - makes later work of the same device wait for it on the device (a stream
//     waits on the event), so that a chain of runs never returns to the host;
//   - sets the Event from a host callback when the device is past it, which
//     also runs the Event's continuations (a pipeline stage passes its output
//     on from there; no thread waits).
// Events of another backend, and host events, are waited for through
// Event::then: the work is queued once they are set.
class DeviceEvent {
 public:
  virtual ~DeviceEvent() = default;
  // Where the work was queued.
  virtual Device device() const = 0;
  // Whether the device is past it now (never waits).
  virtual bool query() const = 0;
};

// ---------------------------------------------------------------- ExecutableImpl
// A Function compiled by one backend for one device.
class ExecutableImpl {
 public:
  virtual ~ExecutableImpl() = default;
  // The compiled function (its inputs and output specs).
  virtual const Function& function() const = 0;
  virtual Device device() const = 0;
  // Starts the computation on already validated arguments and returns the
  // outputs, whose buffers' events are set when done (or failed with the
  // error). `donated[i]` says argument i's buffer may be reused for an output.
  // A backend with host memory puts fresh outputs where `output_memory`
  // says; others ignore it. Must not block on pending arguments: chain on
  // their events instead. Spans, so that a caller lists a run's few
  // arguments without allocating (a small run costs a few hundred ns).
  virtual std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const bool> donated,
                                     OutputMemory output_memory) = 0;
};

// ---------------------------------------------------------------- Backend
class Backend {
 public:
  virtual ~Backend() = default;
  // Number of devices of this platform on this machine; 0: not available.
  virtual int device_count() const = 0;
  // The ClientOptions that apply to it, as `sluice devices` prints them
  // ("preallocate true, memory_fraction 0.9"): the others it ignores.
  virtual std::string options_str(const ClientOptions& options) const = 0;

  // ---- what it runs
  // Ops and dtypes it implements, and pairs of them it declines anyway;
  // compile rejects the rest with the reason (executable.cpp).
  virtual Capabilities capabilities() const = 0;
  // Finer than capabilities(): whether it runs this node (its shapes, its
  // attributes, its operands' dtypes); nullopt when it does, else why not
  // ("dot of s8 with more than 2^31 elements"). Asked only for nodes that
  // capabilities() allows. Default: every such node.
  virtual std::optional<std::string> declines(const Node& /*node*/) const { return std::nullopt; }
  // Whether its buffers' data are host addresses the CPU reads and writes
  // directly (the host): Tensor::data, views of tensors, and pipeline stages
  // that run a step on the calling thread need it. Default: no.
  virtual bool host_memory() const { return false; }
  // What results depend on besides the computation and its inputs: choices
  // this process made that another may make differently (the host's
  // measured FFTW plans), as text. A process restored from a checkpoint
  // takes the plans of the one that stored it (use_plans, before it
  // computes anything), and so computes bit for bit as it would have.
  // Default: none (empty).
  virtual std::string plans() const { return {}; }
  // Makes `text` (plans() of another process of this platform) the plans
  // this process uses from now on. ConfigError when it cannot read them.
  // Default: nothing to take.
  virtual void use_plans(const std::string& /*text*/) {}

  // ---- memory
  // Uninitialised memory for `bytes` on `device`, ready at once.
  virtual BufferPtr allocate(Device device, size_t bytes) = 0;
  // Host memory to a device buffer; `dst` may still be being written when
  // it returns, its event says when done. `src_owner` null: src is the
  // caller's to reuse, read before upload returns; else it keeps src alive
  // (a host tensor's memory), and the backend may hold it and read src
  // until its copy is done, so that the caller does not wait for the copy.
  virtual void upload(const void* src, Buffer& dst, std::shared_ptr<const void> src_owner) = 0;
  // A device buffer to host memory, once `src` is ready; returns when `dst`
  // holds the data.
  virtual void download(const Buffer& src, void* dst) = 0;
  // A device-to-device copy within this backend's devices; `dst` is ready
  // (or its event set) when the copy is done.
  virtual void copy(const Buffer& src, Buffer& dst) = 0;

  // ---- memory another process of this host opens (Tensor::to_pointer's ipc mode)
  // A handle, as text starting "sluice-<platform>-ipc:", to `buffer` (this
  // backend's device memory), that open_ipc opens in another process of
  // this host; `keep` gets what must live while it may be opened. Default:
  // DeviceError, the backend shares none.
  virtual std::string ipc_handle(const BufferPtr& buffer, std::shared_ptr<void>& keep);
  // A read-only buffer of `bytes` over the memory `handle` names, on the
  // one of `devices` (the client's) it names. ValueError for a malformed
  // handle or too few bytes; DeviceError when it cannot be opened. Default:
  // DeviceError.
  virtual BufferPtr open_ipc(std::string_view handle, size_t bytes, std::span<const Device> devices);
  // The id device `id`'s handles name (a GPU's UUID), which tells a sender
  // whether a receiver's process can open them. Default: none.
  virtual std::optional<IpcDeviceId> ipc_device(int id);

  // ---- compiling
  // Compiles a validated function (every node allowed by capabilities() and
  // declines()).
  virtual std::unique_ptr<ExecutableImpl> compile(const Function& f, Device device) = 0;
};

// ---------------------------------------------------------------- registration
// A backend built into sluice: its platform's name, how to make it (null:
// not available on this machine), and how many devices this machine has
// without making it (making a client reserves memory).
struct BackendRegistration {
  const char* platform;
  std::unique_ptr<Backend> (*make)(const ClientOptions&);
  int (*devices)();
  Capabilities (*capabilities)();  // known without a device
};

// Every backend built, in the order of their folders' names (generated:
// devices/backends.cpp.in).
std::span<const BackendRegistration> registered_backends();

}  // namespace sluice
