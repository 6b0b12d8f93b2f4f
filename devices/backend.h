#pragma once
// What callers of the devices layer see: Device, Client, Buffer, Tensor,
// Executable. Backends implement backend_impl.h; callers never include it.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <sluice/devices/event.h>
#include <sluice/base/error.h>
#include <sluice/ops/function.h>
#include <sluice/ops/shape.h>

namespace sluice {

class Backend;
class Client;

// ---------------------------------------------------------------- Device
// A client's platform plus a device id ("host:0", "cuda:1"). A value type.
class Device {
 public:
  Device() = default;
  Device(Client* client, int id) : client_(client), id_(id) {}
  Client& client() const;
  Backend& backend() const;
  std::string_view platform() const;
  int id() const { return id_; }
  std::string str() const;
  // Whether tensors on it live in host memory, readable through
  // Tensor::data without a copy (the host); a GPU's need to_host or to_vector.
  bool host_memory() const;
  bool operator==(const Device& o) const { return client_ == o.client_ && id_ == o.id_; }

 private:
  Client* client_ = nullptr;
  int id_ = 0;
};

// ---------------------------------------------------------------- Client
// One platform's runtime, a singleton per platform, options as in EXLA.
// An option that does not apply to a platform is ignored for it (and not
// printed by `sluice devices`): the host has no device memory to reserve, a
// GPU has no host threads to size.
struct ClientOptions {
  int default_device_id = 0;
  // A GPU's memory: preallocate reserves memory_fraction of the device's
  // memory when the client starts, and the client's allocator hands out
  // buffers from that block; without it the allocator takes memory from the
  // device as needed, up to memory_fraction. Either way freed buffers are
  // kept for reuse, and a request past the limit is a DeviceError.
  bool preallocate = true;
  double memory_fraction = 0.9;  // in (0, 1]

  // Host threads. sluice is a library: by default it changes no setting of
  // the process it runs in, so the application's own oneTBB and OpenBLAS
  // settings stand. The last two ask for process-wide changes that make
  // sluice's computations faster; sluice's own programs ask for both.

  // Threads of the oneTBB arena the host runs computations on, which is
  // sluice's own: one of sluice's runners, which joins it to run what a
  // caller handed off, and oneTBB workers. 0: oneTBB's default concurrency
  // (the cores this process may use), which its default worker limit fills.
  int host_threads = 0;
  // oneTBB lets an arena have no more workers than its process-wide limit
  // allows (by default its default concurrency, less the one thread it
  // counts on to join). When true and the limit in force is below the
  // arena's threads (host_threads above the cores, or an application that
  // lowered it), sluice raises oneTBB's max_allowed_parallelism to them for
  // the life of the process. A limit the application set stands otherwise:
  // oneTBB obeys the lowest one set, so sluice only ever sets a higher one.
  // Not needed for every core to work: the defaults do that.
  bool raise_worker_limit = false;
  // 0: OpenBLAS keeps the threads the application (or OPENBLAS_NUM_THREADS)
  // gave it. n > 0: sluice loads OpenBLAS (otherwise loaded when a kernel
  // first calls it) and calls openblas_set_num_threads(n), which is
  // process-wide by OpenBLAS's design (0.3.21 has no per-thread setting).
  // 1 runs each BLAS call on the thread that makes it, so oneTBB alone
  // shares out the cores rather than a second pool competing with it.
  // f32 products go to oneDNN, on one thread a call whatever this says.
  int blas_threads = 0;

  bool operator==(const ClientOptions&) const = default;
};

// What a backend can run: the ops and dtypes it implements, and pairs of
// them it declines (an op on operands of that dtype: tanh of c64, say).
struct Capabilities {
  std::vector<Op> ops;
  std::vector<DType> dtypes;
  std::vector<std::pair<Op, DType>> declined;
  std::vector<std::string> native_blocks;  // blocks (ops/block.h) run by a kernel of the backend's own
  bool supports(Op op) const;
  bool supports(DType t) const;
  bool supports(Op op, DType operand) const;  // both listed, the pair not declined
};

// Thread safety: all members may be called from any thread.
class Client {
 public:
  Client(std::string platform, ClientOptions options, std::unique_ptr<Backend> backend);
  ~Client();
  std::string_view platform() const { return platform_; }
  const ClientOptions& options() const { return options_; }
  int device_count() const;
  Device device(int id) const;  // DeviceError for an id out of range
  Device default_device() const { return device(options_.default_device_id); }
  Capabilities capabilities() const;
  // The options that apply to this platform, as `sluice devices` prints them.
  std::string options_str() const;
  Backend& backend() const { return *backend_; }
  // The plans its results depend on and use_plans takes (Backend::plans):
  // what checkpoints store, so that a restored process computes bit for
  // bit as the one that stored them. Empty where there are none.
  std::string plans() const;
  void use_plans(const std::string& text);

 private:
  std::string platform_;
  ClientOptions options_;
  std::unique_ptr<Backend> backend_;
};

// The client of a platform ("host", "cuda"), made with the default options
// the first time anything uses the platform (host(), a compile). DeviceError
// when the platform is not available here.
Client& client(std::string_view platform);
// The client made with these options: make it before anything else uses the
// platform. ValueError for an option out of range (a negative thread count);
// ConfigError when the client already exists with other options, which
// cannot change once its threads and memory are set up.
Client& client(std::string_view platform, const ClientOptions& options);
// Platforms this build has a backend for (its registration table), available here or not.
std::vector<std::string> known_platforms();
// What the backend of a known platform runs, told without its device (as
// Client::capabilities). DeviceError for a platform this build has no
// backend for.
Capabilities platform_capabilities(std::string_view platform);
// Platforms available on this machine, "host" always among them.
std::vector<std::string> platforms();
// The plans (Client::plans) of every client made so far that has any, by
// platform: what a checkpoint stores.
std::map<std::string, std::string> plans_in_use();
// Gives each platform's client its plans (Client::use_plans), making the
// client where it is not made yet. DeviceError for a platform not
// available here.
void use_plans(const std::map<std::string, std::string>& plans);
// The default device of the first available platform in `preference`
// (like EXLA.set_as_nx_default); with no argument, the host. A client
// this call makes is made with `options`; one made before is used as it
// is. DeviceError when none is available.
Device default_device(std::initializer_list<std::string_view> preference = {"host"});
Device default_device(const std::vector<std::string>& preference, const ClientOptions& options);

// Where a computation is to run, as its owner is configured: a device, or
// platforms in order of preference ({"cuda", "host"}) that resolve() turns
// into a device (default_device) in the process that runs it, so that a
// process that only describes the computation (a launcher, the other
// processes of a partitioned pipeline) makes no client. A value type.
class DevicePreference {
 public:
  DevicePreference(Device device) : device_(device) {}  // NOLINT(google-explicit-constructor): a device prefers itself
  DevicePreference(std::initializer_list<std::string> platforms) : platforms_(platforms) {}
  DevicePreference(std::vector<std::string> platforms, ClientOptions options)
      : platforms_(std::move(platforms)), options_(options) {}
  // Every platform of this build but the host, in the order they are
  // registered, then the host: an accelerator where the machine has one.
  static DevicePreference accelerator_or_host(const ClientOptions& options = {});
  // The device: the one given, or default_device(platforms, options).
  Device resolve() const;
  // "cuda:0", or "cuda, else host" before it is resolved.
  std::string str() const;

 private:
  std::optional<Device> device_;
  std::vector<std::string> platforms_;
  ClientOptions options_;
};
Device host();

// ---------------------------------------------------------------- Buffer
// Device memory holding one tensor's data, plus the event that says when a
// computation has finished writing it. Owned through shared_ptr by Tensors.
struct Buffer {
  Device device;
  void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> memory;  // keeps `data` alive: an allocation, user memory, a parent buffer
  EventPtr ready;                // null: ready
  enum class State : uint8_t { Live, Donated, Deallocated };
  std::atomic<State> state{State::Live};
  // Memory this process may only read: another process's shared memory,
  // mapped read-only (map_shared). A run never donates it.
  bool read_only = false;

  void wait() const { if (ready) ready->wait(); }
  bool is_ready() const { return !ready || ready->is_set(); }
};
using BufferPtr = std::shared_ptr<Buffer>;

// ---------------------------------------------------------------- pointers
enum class PointerMode : uint8_t {
  Local,  // an address in this process
  Ipc,    // a handle another process of this host opens (shared memory)
};
struct PointerOptions {
  PointerMode mode = PointerMode::Local;
  bool require_shared = false;  // ipc: fail rather than copy a tensor that is not in shared memory
};
// Where a tensor's data is: what to_pointer gives and from_pointer takes.
struct TensorPointer {
  PointerMode mode = PointerMode::Local;
  Device device;               // where the data is (Ipc: the host for shared memory)
  void* address = nullptr;     // Local: the data
  std::string handle;          // Ipc: "sluice-shm:1:pid=..." (host memory) or "sluice-cuda-ipc:1:..." (a
                               // GPU's), printable, for any process of this host
  size_t bytes = 0;            // of the data
  std::shared_ptr<void> owner; // keeps the memory alive (null for memory the caller keeps alive)
};

// ---------------------------------------------------------------- Tensor
// A value: a Spec and a buffer on one device, possibly still being computed.
// Copies share the buffer. Reading data waits for it; passing it to another
// computation does not.
// Thread safety: const members may be called concurrently; deallocate and
// transfer must not race with other uses of the same tensor.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Spec spec, BufferPtr buffer);

  const Spec& spec() const { return spec_; }
  DType dtype() const { return spec_.dtype; }
  const Shape& shape() const { return spec_.shape; }
  int rank() const { return spec_.shape.rank(); }
  int64_t size() const { return spec_.size(); }
  Device device() const;
  const BufferPtr& buffer() const { return buffer_; }
  explicit operator bool() const { return buffer_ != nullptr; }

  bool is_ready() const;
  // Waits until computed; rethrows the computation's error.
  void wait() const;

  // A host copy (waits). The same tensor when it already is on the host.
  Tensor to_host() const;
  // A copy on `device`.
  Tensor to(Device device) const;
  // Moves to `device`: this tensor's buffer is freed afterwards.
  Tensor transfer(Device device);
  // Frees the buffer now; later use throws DeviceError.
  void deallocate();

  // The elements of a host tensor (waits); TypeError when T is not the dtype.
  template <typename T>
  std::span<const T> data() const {
    check_access(dtype_of<T>(), "data");
    return {static_cast<const T*>(host_data()), static_cast<size_t>(size())};
  }
  // The elements, copied to a vector from any device (waits).
  template <typename T>
  std::vector<T> to_vector() const {
    check_access(dtype_of<T>(), "to_vector", /*any_device=*/true);
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits
      std::vector<uint8_t> bytes(static_cast<size_t>(size()));
      copy_to_host(bytes.data());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> v(static_cast<size_t>(size()));
      copy_to_host(v.data());
      return v;
    }
  }
  // Raw host pointer to the data (waits); DeviceError when not on the host.
  const void* host_data() const;
  void copy_to_host(void* dst) const;

  // Nx.Backend's to_pointer: the tensor's memory for a library in this
  // process (PointerMode::Local: its address on its device) or for another
  // process of this host (PointerMode::Ipc: a handle that from_pointer
  // there maps, the same memory and no copy). Waits until the tensor is
  // computed. A host tensor's ipc handle names shared memory
  // (devices/shared_memory.h documents its text, for other languages): a
  // tensor already in it (to_shared, outputs of a run with
  // OutputMemory::Shared, tensors a same-host channel received) is shared
  // as it is; any other is copied into it once, unless `require_shared`,
  // which makes that a DeviceError. A GPU tensor's names its memory on the
  // GPU (devices/cuda/cuda_ipc.h), which a process on the same GPU opens.
  // The result's `owner` keeps the memory alive: hold it while another
  // process may still open the handle.
  TensorPointer to_pointer(const PointerOptions& options = {}) const;
  // A host copy in shared memory; this tensor when its memory is shared already.
  Tensor to_shared() const;

  // Nx's inspect format: "f32[2][3]\n[\n  [1.0, 2.0, 3.0],\n ...]", elided when large.
  std::string str() const;

 private:
  void check_access(DType t, const char* what, bool any_device = false) const;
  void check_live(const char* what) const;
  Spec spec_;
  BufferPtr buffer_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- creation
// A tensor holding a copy of `bytes` (spec.bytes() of them) on `device`.
Tensor tensor_from_bytes(const Spec& spec, const void* bytes, Device device = host());
namespace detail {
// Throws ShapeError: "tensor: values: expected 6 values for f32[2][3], found 5".
[[noreturn]] void tensor_value_count_error(const Spec& spec, size_t found);
}  // namespace detail
template <typename T>
Tensor tensor(const std::vector<T>& values, Shape shape, Device device = host()) {
  Spec spec{dtype_of<T>(), std::move(shape)};
  if (static_cast<int64_t>(values.size()) != spec.size())
    detail::tensor_value_count_error(spec, values.size());
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> packs bits; pred is a byte per element.
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return tensor_from_bytes(spec, bytes.data(), device);
  } else {
    return tensor_from_bytes(spec, values.data(), device);
  }
}
template <typename T>
Tensor tensor(std::initializer_list<T> values, Device device = host()) {
  return tensor(std::vector<T>(values), Shape{static_cast<int64_t>(values.size())}, device);
}
template <typename T>
Tensor scalar(T value, Device device = host()) { return tensor(std::vector<T>{value}, Shape{}, device); }
// Wraps host memory without copying; `owner` keeps it alive as long as any
// tensor uses it (pass a no-op owner for memory that outlives the tensor).
Tensor wrap_host(Spec spec, void* data, std::shared_ptr<void> owner);
// Nx.Backend's from_pointer: a tensor of `spec` over memory to_pointer
// described, without copying it. Local: `address` on `device` (pointer.owner
// kept alive with the tensor; null: the caller keeps the memory alive as
// long as the tensor lives). Ipc: the handle, mapped into this process and
// kept mapped while the tensor lives, read-only: on the host for shared
// memory, on the GPU it names for a GPU's. Writes through the tensor's
// memory (to_pointer of it, Local) are seen by every process mapping it.
// ValueError for a malformed handle or fewer bytes than the spec needs;
// DeviceError when the handle cannot be opened (its process gone, another
// user's memory, a slot handed out again since).
Tensor from_pointer(const TensorPointer& pointer, const Spec& spec);
// What names a device to another process of this host (a GPU's UUID): a
// process opens a device's ipc handles when it has a device of that id.
using IpcDeviceId = std::array<uint8_t, 16>;
// The id `device`'s ipc handles name; none for a device whose memory is
// shared as host memory (the host) or not at all.
std::optional<IpcDeviceId> ipc_device_id(const Device& device);
// The devices of the clients this process has made so far whose ipc handles
// from another process it opens, by platform name and id.
std::vector<IpcDeviceId> ipc_devices_here();
Tensor zeros(const Spec& spec, Device device = host());
Tensor ones(const Spec& spec, Device device = host());
// The device is not optional here: `iota(spec)` is the traced op of
// ops/ops.h, and a program includes both.
Tensor iota(const Spec& spec, Device device);

// ---------------------------------------------------------------- Executable
class ExecutableImpl;

// Where a run on the host puts its outputs.
enum class OutputMemory : uint8_t {
  Default,  // the backend's own memory
  // Shared memory (Tensor::to_pointer): outputs that will cross to another
  // process of this host are then written once, by the kernels, and read
  // there in place. Devices that are not the host ignore it.
  Shared,
};

struct RunOptions {
  // Arguments whose buffers the run may reuse for outputs; they are invalid
  // afterwards (using them throws DeviceError saying they were donated).
  // Memory the process may only read (Buffer::read_only: a tensor received
  // in another process's shared memory) is not reused, and stays valid.
  std::vector<size_t> donate{};
  OutputMemory output_memory = OutputMemory::Default;
};

// A Function compiled for one device.
// Thread safety: run may be called from many threads at once.
class Executable {
 public:
  Executable() = default;
  explicit Executable(std::shared_ptr<ExecutableImpl> impl);

  const std::vector<Spec>& inputs() const;
  const std::vector<Spec>& outputs() const;
  Device device() const;
  // Checks args against inputs() (count, dtype, shape, device, liveness) and
  // starts the computation; returns at once with outputs that complete later.
  std::vector<Tensor> run(const std::vector<Tensor>& args, const RunOptions& options = {}) const;

 private:
  struct State;
  std::shared_ptr<const State> state_;
};

// Compiles `f` for `device`, or returns the executable compiled before for a
// structurally equal function on that device. DeviceError, before anything
// runs, when the device's backend cannot run some of f (unsupported()).
Executable compile(const Function& f, Device device = host());
// What of `f` the device's backend cannot run, one line per reason ("op sort
// is not implemented on backend cuda"); empty when it runs all of f.
std::vector<std::string> unsupported(const Function& f, Device device);
// Whether compile(f, device) would be answered from the cache.
bool jit_cached(const Function& f, Device device = host());

}  // namespace sluice
