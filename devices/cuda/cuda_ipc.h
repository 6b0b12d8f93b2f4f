#pragma once
// A GPU tensor opened by another process on the same GPU, with no copy
// through the host (Tensor::to_pointer's ipc mode for `cuda` tensors, and
// from_pointer of its handle). CUDA names memory to other processes by
// allocation (cudaIpcGetMemHandle); a tensor is a buffer inside one of the
// caching allocator's regions, so its handle is the region's and the
// buffer's offset in it.
//
// The checks the host's shared memory makes (devices/shared_memory.h) come
// from a ticket: a small block of this host's shared memory that lives as
// long as the handle's owner (TensorPointer::owner) and holds what the
// handle says (magic, GPU, region handle and size, offset, bytes). Opening maps the
// ticket first, so a handle whose owner let go and whose ticket was handed
// out again is refused as stale, one of another user or a process gone is
// refused by the ticket's checks, and a handle that does not match its
// ticket, or reaches past its region, is refused.
//
// A handle, as text:
//   sluice-cuda-ipc:1:device=<GPU UUID, 32 hex digits>:memory=<the region's cudaIpcMemHandle,
//     128 hex digits>:region=<its bytes>:offset=O:bytes=B:ticket=<the ticket's sluice-shm handle>
// (one line). Regions opened stay open for the next handles into them (a
// few, the most recently used): opening one costs about 0.1 s. Processes
// sharing a GPU make their clients without preallocate (ClientOptions), as
// the demo's do: one that reserves most of the GPU leaves the others none.
// Thread safety: every function may be called from any thread.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <sluice/devices/backend.h>
#include <sluice/devices/shared_memory.h>

namespace sluice::cuda {

class CudaDevice;

struct CudaIpcHandle {
  std::array<uint8_t, 16> device{};  // the GPU's UUID
  std::array<uint8_t, 64> memory{};  // cudaIpcMemHandle_t of the region
  uint64_t region = 0;               // the region's bytes
  uint64_t offset = 0;               // of the data in the region
  uint64_t bytes = 0;                // of the data
  SharedHandle ticket;
  std::string str() const;
  // ValueError naming what is wrong with `text`.
  static CudaIpcHandle parse(std::string_view text);
  bool operator==(const CudaIpcHandle&) const = default;
};

// The UUID of GPU `ordinal`, which handles name.
std::array<uint8_t, 16> gpu_uuid(int ordinal);

// The handle of `buffer` (on `device`, from its allocator); `keep` gets the
// buffer and the ticket, which the caller holds while the handle may be opened.
std::string export_ipc(CudaDevice& device, const BufferPtr& buffer, std::shared_ptr<void>& keep);

// A buffer of `bytes` over the memory `handle` names, on `device` (the GPU
// the handle names; DeviceError if it is not), read-only.
BufferPtr open_ipc(CudaDevice& device, const CudaIpcHandle& handle, size_t bytes);

}  // namespace sluice::cuda
