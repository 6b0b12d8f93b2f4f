#pragma once
// The wire format, version 1, in tensors (io/WIRE_FORMAT.md is its
// specification; io/wire_format.h has the bytes): one message is one ZeroMQ
// multipart message of a 32-byte header frame and two frames per tensor, an
// .npy header and the raw data, so that Python reads each tensor with numpy
// alone. Start here for io/; channel.h sends and receives these messages.
//
// Encoding never copies tensor data: data frames point into the tensors'
// buffers and keep them alive. Decoding is strict (wire::parse) and never
// allocates what a header merely claims; a data frame becomes a tensor
// without a copy when its address suits the element type. Between processes
// of one host a message may carry shared-memory references instead of data
// (kFlagShared): its tensors are then views of the sender's memory, on the
// host or, for a receiver that opens them, on a GPU (device references).
//
// Thread safety: encode and decode may be called from any thread.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/io/wire_format.h>

namespace sluice::wire {

// One frame to send: bytes that stay valid as long as `owner` lives.
struct Frame {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

// One received frame: its bytes and what keeps them alive, so that a data
// frame can become a tensor's buffer without a copy.
struct ReceivedFrame {
  Bytes bytes;
  std::shared_ptr<void> owner;
};

struct Message {
  Header header;                // encode sets count, flags (but a control's kFlagTakesBatches) and crc itself
  std::vector<Tensor> tensors;  // Data, Update
  Tags tags;                    // Data, Update: the tensors' tags (devices/tags.h), sent after them
  std::string error;            // Error: UTF-8
  std::string target;           // Update: what to apply the tensors to (a pipeline stage), UTF-8
  Control control;              // Credit, Ack, Heartbeat
  uint64_t checkpoint = 0;      // Barrier: the number of the checkpoint it closes
  // Received on a reliable channel: the session of the sending channel,
  // which Channel::ack takes back (0 otherwise).
  uint64_t peer = 0;
  // Same-host shared memory. A sender's heartbeat offers it by naming its
  // `probe` (kFlagShareOffer); a receiver's control message takes it
  // (`shared`, kFlagShared) and lists the messages whose tensors it still
  // holds (`leases`, at most kMaxLeases). Data or an update received with
  // `shared`: its tensors view the sender's shared memory.
  bool shared = false;
  std::optional<SharedHandle> probe;
  std::vector<uint64_t> leases;
  // A receiver's control message that takes shared memory: its process id
  // (kFlagPid), which its sender watches to reuse what it lent once the
  // process is gone. 0: not said.
  uint64_t pid = 0;
  // A receiver's control message that takes shared memory: the ring it
  // reads its sender's messages from (kFlagRing; io/detail/shared_ring.h).
  std::optional<SharedHandle> ring;
  // A receiver's control message that takes shared memory: the devices
  // whose memory its process opens (kFlagDevices; at most kMaxDevices).
  std::vector<IpcDeviceId> devices;
};

struct EncodeOptions {
  bool crc = false;  // compute a CRC-32C of the data frames
  // A data message whose frames would hold fewer bytes than this travels
  // packed in one frame (header, .npy headers and data copied together):
  // one ZeroMQ frame costs less than three for small tensors, and copying
  // a few hundred bytes less than lending them. 0: never packed.
  size_t pack_below = 0;
  // Data and updates go as shared-memory references, for a receiver on this
  // host that takes them: a tensor in shared memory as it is, any other
  // copied into it first. Never packed.
  bool shared = false;
  // With `shared`: the devices whose memory the receiver opens. A tensor on
  // one of them goes as a device reference (its ipc handle, the data
  // staying on the device) rather than copied to the host.
  std::vector<IpcDeviceId> devices;
};

// Maps the memory a reference names (devices/shared_memory.h's map_shared,
// or a receiver's own SharedMappings); throws when it cannot.
using MapShared = std::function<std::shared_ptr<void>(const SharedHandle&)>;
// Opens a device reference (an ipc handle's text) as a tensor of `spec`
// (from_pointer, for a receiver that named its devices); throws when it cannot.
using OpenDevice = std::function<Tensor(std::string_view handle, const Spec& spec)>;

// The frames of `message` (tensors not on the host are copied there first).
// WireError for a kind above update, tensors in a message that is not data
// or an update, an error message that is not UTF-8, or an update without
// tensors or whose target is not 1 to kMaxTargetBytes bytes of UTF-8. An
// update is never packed: its target's frame comes between header and tensors.
std::vector<Frame> encode(const Message& message, const EncodeOptions& options = {});
// A data message small enough to travel packed (one frame: pack_below,
// not shared): the bytes of that frame, which write_packed writes where
// the caller has room for them (a same-host ring), without the frame
// encode would allocate. 0 for any other message. WireError as encode.
size_t packed_bytes(const Message& message, const EncodeOptions& options);
// Whether a data message or an update has tensors outside host memory (a
// GPU's), and the bytes its frames hold when not packed nor shared, weighed
// without making them (which would copy those tensors to the host).
bool holds_device_tensors(const Message& message);
size_t unpacked_bytes(const Message& message);
void write_packed(const Message& message, const EncodeOptions& options, uint8_t* out);
// Throws WireError naming `where` (an endpoint) and what was wrong, a
// shared-memory reference that `map` cannot open included (empty `map`:
// map_shared), and a device reference that `open` cannot open or that
// comes where there is no `open` (it is given only where the receiver
// named its devices).
Message decode(std::span<const ReceivedFrame> frames, const DecodeLimits& limits = {},
               std::string_view where = "wire", const MapShared& map = {}, const OpenDevice& open = {});
// decode({{bytes, owner}}): frames written in place.
inline Message decode(std::initializer_list<ReceivedFrame> frames, const DecodeLimits& limits = {},
                      std::string_view where = "wire", const MapShared& map = {},
                      const OpenDevice& open = {}) {
  return decode(std::span<const ReceivedFrame>(frames.begin(), frames.size()), limits, where, map, open);
}

}  // namespace sluice::wire
