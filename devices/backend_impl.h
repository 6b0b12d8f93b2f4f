#pragma once
// What a backend implements. Callers use backend.h; only backends (cpu/,
// cuda/) and the devices layer's own glue include this file. A backend is
// registered once, in registry.cpp; core code never asks which backend it has.

#include <memory>
#include <string_view>
#include <vector>

#include <sluice/devices/backend.h>

namespace sluice {

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
  // Must not block on pending arguments: chain on their events instead.
  virtual std::vector<BufferPtr> run(const std::vector<BufferPtr>& args,
                                     const std::vector<bool>& donated) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Number of devices of this platform on this machine.
  virtual int device_count() const = 0;
  // Ops and dtypes this backend implements; compile rejects the rest.
  virtual Capabilities capabilities() const = 0;
  // Uninitialised memory for `bytes` on `device`, ready at once.
  virtual BufferPtr allocate(Device device, size_t bytes) = 0;
  // Host memory to a device buffer, and back; both wait for `src` to be ready.
  virtual void upload(const void* src, Buffer& dst) = 0;
  virtual void download(const Buffer& src, void* dst) = 0;
  // A device-to-device copy within this backend's devices.
  virtual void copy(const Buffer& src, Buffer& dst) = 0;
  // Compiles a validated function (every op in capabilities()).
  virtual std::unique_ptr<ExecutableImpl> compile(const Function& f, Device device) = 0;
};

}  // namespace sluice
