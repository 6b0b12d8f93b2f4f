#include <sluice/devices/cuda/cuda_ipc.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include <sluice/base/error.h>
#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_device.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {
namespace {

constexpr std::string_view kPrefix = "sluice-cuda-ipc:1:";
constexpr std::string_view kForm =
    "sluice-cuda-ipc:1:device=32 hex digits:memory=128 hex digits:region=R:offset=O:bytes=B:ticket=a "
    "sluice-shm handle";

// The ticket: what the handle says, written by its owner into shared memory.
constexpr char kTicketMagic[16] = {'S', 'L', 'U', 'I', 'C', 'E', '-', 'C',
                                   'U', 'D', 'A', '-', 'I', 'P', 'C', '1'};
constexpr size_t kTicketBytes = 16 + 16 + 64 + 3 * 8;

std::array<uint8_t, kTicketBytes> ticket_of(const CudaIpcHandle& h) {
  std::array<uint8_t, kTicketBytes> t{};
  uint8_t* p = t.data();
  std::memcpy(p, kTicketMagic, 16);
  std::memcpy(p + 16, h.device.data(), 16);
  std::memcpy(p + 32, h.memory.data(), 64);
  const uint64_t numbers[] = {h.region, h.offset, h.bytes};  // little-endian, as every host sluice runs on
  std::memcpy(p + 96, numbers, sizeof numbers);
  return t;
}

template <size_t N>
std::string hex(const std::array<uint8_t, N>& bytes) {
  std::string s;
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}

}  // namespace

std::array<uint8_t, 16> gpu_uuid(int ordinal) {
  static std::mutex mutex;
  static std::map<int, std::array<uint8_t, 16>> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(ordinal); it != known.end()) return it->second;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, ordinal), fmt::format("cuda:{}", ordinal), "cudaGetDeviceProperties");
  std::array<uint8_t, 16> uuid{};
  std::memcpy(uuid.data(), prop.uuid.bytes, 16);
  return known[ordinal] = uuid;
}

namespace {

// Regions this process exported, by their handle: opening one's own handle
// is what CUDA refuses, so this process reaches its own regions here.
std::mutex exported_mutex;
std::map<std::array<uint8_t, 64>, char*>& exported() {
  static auto* regions = new std::map<std::array<uint8_t, 64>, char*>;
  return *regions;
}

// A region of another process, open here until the last buffer over it
// and the recently-opened list let go.
struct OpenRegion {
  char* base = nullptr;
  bool ours = false;  // this process's own region: nothing to close
  ~OpenRegion() {
    if (!ours) cudaIpcCloseMemHandle(base);
  }
};
constexpr size_t kKeptOpen = 8;

std::shared_ptr<OpenRegion> open_region(CudaDevice& device, const CudaIpcHandle& h) {
  static std::mutex mutex;
  static auto* open = new std::map<std::array<uint8_t, 64>, std::weak_ptr<OpenRegion>>;
  static auto* recent = new std::deque<std::shared_ptr<OpenRegion>>;  // never destroyed: CUDA is gone at exit
  std::lock_guard lock(mutex);
  if (auto it = open->find(h.memory); it != open->end())
    if (std::shared_ptr<OpenRegion> r = it->second.lock()) return r;
  auto region = std::make_shared<OpenRegion>();
  if (h.ticket.pid == static_cast<uint32_t>(::getpid())) {
    std::lock_guard exports(exported_mutex);
    auto it = exported().find(h.memory);
    if (it == exported().end())
      throw DeviceError(error_message(device.who(), "from_pointer", "a region this process exported",
                                      "a handle of this process naming none"));
    region->base = it->second;
    region->ours = true;
  } else {
    cudaIpcMemHandle_t memory;
    std::memcpy(memory.reserved, h.memory.data(), sizeof memory.reserved);
    device.activate();
    void* base = nullptr;
    const cudaError_t status = cudaIpcOpenMemHandle(&base, memory, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw DeviceError(error_message(device.who(), "from_pointer: cudaIpcOpenMemHandle",
                                      fmt::format("the memory of process {}", h.ticket.pid),
                                      cudaGetErrorString(status)));
    }
    region->base = static_cast<char*>(base);
  }
  (*open)[h.memory] = region;
  recent->push_back(region);
  if (recent->size() > kKeptOpen) recent->pop_front();
  return region;
}

bool parse_hex(std::string_view text, uint8_t* out, size_t bytes) {
  if (text.size() != 2 * bytes) return false;
  for (size_t i = 0; i < bytes; ++i) {
    const auto [end, ec] = std::from_chars(text.data() + 2 * i, text.data() + 2 * i + 2, out[i], 16);
    if (ec != std::errc{} || end != text.data() + 2 * i + 2) return false;
  }
  return true;
}

}  // namespace

std::string CudaIpcHandle::str() const {
  return fmt::format("{}device={}:memory={}:region={}:offset={}:bytes={}:ticket={}", kPrefix, hex(device),
                     hex(memory), region, offset, bytes, ticket.str());
}

CudaIpcHandle CudaIpcHandle::parse(std::string_view text) {
  auto fail = [&]() -> CudaIpcHandle {
    throw ValueError(error_message("cuda ipc handle", "", kForm, fmt::format("'{}'", text)));
  };
  if (!text.starts_with(kPrefix)) return fail();
  std::string_view rest = text.substr(kPrefix.size());
  // Each field up to the next ':', but the ticket, which is the rest.
  auto field = [&](std::string_view name, bool last = false) -> std::string_view {
    if (!rest.starts_with(name) || rest.substr(name.size(), 1) != "=") fail();
    rest.remove_prefix(name.size() + 1);
    const size_t end = last ? rest.size() : rest.find(':');
    if (end == std::string_view::npos) fail();
    const std::string_view value = rest.substr(0, end);
    rest.remove_prefix(last ? end : end + 1);
    return value;
  };
  auto number = [&](std::string_view name, uint64_t& out) {
    const std::string_view v = field(name);
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size()) fail();
  };
  CudaIpcHandle h;
  if (!parse_hex(field("device"), h.device.data(), h.device.size())) fail();
  if (!parse_hex(field("memory"), h.memory.data(), h.memory.size())) fail();
  number("region", h.region);
  number("offset", h.offset);
  number("bytes", h.bytes);
  h.ticket = SharedHandle::parse(field("ticket", true));  // ValueError naming the ticket
  if (h.offset > h.region || h.bytes > h.region - h.offset) fail();
  return h;
}

std::string export_ipc(CudaDevice& device, const BufferPtr& buffer, std::shared_ptr<void>& keep) {
  const DeviceAllocator::Span region = device.allocator().region_of(buffer->data);
  if (!region.begin)
    throw DeviceError(error_message(device.who(), "to_pointer in ipc mode",
                                    "a tensor in memory sluice allocated",
                                    "memory it did not (from_pointer of an address?): copy it first"));
  device.activate();
  cudaIpcMemHandle_t memory;
  check(cudaIpcGetMemHandle(&memory, region.begin), device.who(), "cudaIpcGetMemHandle");
  CudaIpcHandle h;
  h.device = gpu_uuid(device.ordinal());
  std::memcpy(h.memory.data(), memory.reserved, h.memory.size());
  h.region = region.bytes;
  h.offset = static_cast<uint64_t>(static_cast<const char*>(buffer->data) - region.begin);
  h.bytes = buffer->bytes;
  std::shared_ptr<void> ticket = shared_allocate(kTicketBytes);
  const std::array<uint8_t, kTicketBytes> content = ticket_of(h);
  std::memcpy(ticket.get(), content.data(), content.size());
  h.ticket = *find_shared(ticket.get(), kTicketBytes);
  {
    std::lock_guard lock(exported_mutex);
    exported()[h.memory] = region.begin;
  }
  keep = std::make_shared<std::pair<BufferPtr, std::shared_ptr<void>>>(buffer, std::move(ticket));
  return h.str();
}

BufferPtr open_ipc(CudaDevice& device, const CudaIpcHandle& h, size_t bytes) {
  if (h.bytes < bytes)
    throw ValueError(error_message("from_pointer", "handle", fmt::format("at least {} bytes", bytes),
                                   fmt::format("{} bytes", h.bytes)));
  if (h.device != gpu_uuid(device.ordinal()))
    throw DeviceError(error_message(device.who(), "from_pointer",
                                    fmt::format("a handle of this GPU ({})", hex(gpu_uuid(device.ordinal()))),
                                    fmt::format("one of GPU {}", hex(h.device))));
  // Stale, another user's, a process gone: refused by the ticket's own checks.
  std::shared_ptr<void> ticket = map_shared(h.ticket);
  const std::array<uint8_t, kTicketBytes> expected = ticket_of(h);
  if (h.ticket.bytes < kTicketBytes || std::memcmp(ticket.get(), expected.data(), expected.size()) != 0)
    throw DeviceError(error_message(device.who(), "from_pointer", "a handle its ticket vouches for",
                                    "one that differs from what its owner wrote"));
  std::shared_ptr<OpenRegion> region = open_region(device, h);
  auto buffer = std::make_shared<Buffer>();
  buffer->device = device.device();
  buffer->data = region->base + h.offset;
  buffer->bytes = bytes;
  buffer->memory = std::make_shared<std::pair<std::shared_ptr<OpenRegion>, std::shared_ptr<void>>>(
      std::move(region), std::move(ticket));
  buffer->read_only = true;
  return buffer;
}

}  // namespace sluice::cuda
