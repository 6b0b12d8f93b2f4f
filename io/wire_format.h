#pragma once
// The bytes of the wire format, version 1 (io/WIRE_FORMAT.md specifies it):
// the 32-byte header frame, the CRC-32C, and parse(), which validates a
// received message's frames without making tensors. Depends on ops/shape.h
// alone (and the SharedHandle struct), so that the fuzzer (fuzz/) builds it
// without the devices layer.
// Most code wants io/wire.h, which turns parsed frames into tensors.
//
// Thread safety: everything here is a pure function of its arguments.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/devices/tags.h>
#include <sluice/ops/shape.h>

namespace sluice::wire {

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 32;

enum class Kind : uint8_t {
  Data = 0,
  EndOfStream = 1,
  Error = 2,  // frame 1 is a UTF-8 message
  // The reliable protocol's control messages: frame 1 is a Control record.
  Credit = 3,  // receiver -> sender: the window it grants, or a request to resend
  Ack = 4,     // receiver -> sender: every message below `seq` is done with
  // A checkpoint barrier: frame 0 holds the header, then the checkpoint
  // number (u64). A stream message like data: numbered and delivered in order.
  Barrier = 5,
  Heartbeat = 6,  // both ways: alive, and where each side stands
  // A request that the receiving process apply new values to a named
  // target (a pipeline stage's accumulator): frame 1 is the target's name
  // (UTF-8), then the tensors as in a data message, never packed. A stream
  // message like data: numbered and delivered in order.
  Update = 7,
  // Reliable mode only: small one-frame messages of one sender (packed
  // data, ends of stream, barriers) coalesced into one frame, for a
  // receiver that says it takes them (kFlagTakesBatches). The channel
  // splits it (split_batch) before anything is parsed; parse refuses it.
  Batch = 8,
};

enum Flags : uint16_t {
  kFlagCrc = 1 << 0,     // `crc` holds the CRC-32C of the data frames
  kFlagPacked = 1 << 1,  // one frame: header, then each tensor's .npy header and data
  // Same-host shared memory (WIRE_FORMAT.md, "Shared memory"). On data and
  // updates: each tensor's data frame is a shared-memory reference
  // (kSharedRefBytes), the data staying where the sender wrote it, or a
  // device reference (kDeviceRefPrefix, "Device memory"). On a
  // receiver's control message: it takes references, and `count` u64 seqs
  // follow its record, the messages whose tensors it still holds (leases).
  kFlagShared = 1 << 2,
  // On a sender's heartbeat: it offers shared memory; a reference to its
  // probe (8 bytes holding its session) follows the control record.
  kFlagShareOffer = 1 << 3,
  // On a reliable receiver's control message: it takes batches (Kind::Batch).
  kFlagTakesBatches = 1 << 4,
  // On a reliable receiver's control message taking shared memory: its
  // process id follows (a u64 after the leases), so that its sender knows
  // when it is gone and may reuse the memory it lent it.
  kFlagPid = 1 << 5,
  // On a reliable receiver's control message taking shared memory: a
  // reference to the ring it reads this sender's messages from follows
  // (after the pid, if any; WIRE_FORMAT.md, "Rings").
  kFlagRing = 1 << 6,
  // On a reliable receiver's control message taking shared memory: the
  // devices whose memory it opens follow, last (kDevicesBytes; WIRE_FORMAT.md,
  // "Device memory"), so that its sender may send it device references.
  kFlagDevices = 1 << 7,
  // On a reliable receiver's control message: it is closing, and waits for
  // its sender's heartbeat confirming that its acknowledgement arrived. A
  // sender answers other acknowledgements with nothing: an answer to each
  // (one a message on an edge of small credit) doubled the control
  // messages between two processes.
  kFlagConfirm = 1 << 8,
  // On data and updates: the message's tags (devices/tags.h) follow its
  // tensors, a tags block (below) in a frame of its own, or at the end of a
  // packed frame (WIRE_FORMAT.md, "Tags").
  kFlagTags = 1 << 9,
};
// A shared-memory reference: pid u32, fd u32, then segment, offset, bytes
// and generation as u64, little-endian (devices/shared_memory.h).
inline constexpr size_t kSharedRefBytes = 40;
// The most leases one control message lists: a receiver holding more copies
// what it receives instead (and a sender reads a control message in 4 KiB).
inline constexpr uint32_t kMaxLeases = 256;
// A device reference: the text of a device tensor's ipc handle
// (Tensor::to_pointer), "sluice-<platform>-ipc:...", printable ASCII, at
// most kMaxDeviceRefBytes. A shared-memory reference never starts so (its
// first four bytes, a pid, would be past any pid Linux gives).
inline constexpr std::string_view kDeviceRefPrefix = "sluice-";
inline constexpr size_t kMaxDeviceRefBytes = 1024;
// A receiver's devices (kFlagDevices): a u64 count, then kMaxDevices
// 16-byte ids (devices/backend.h's IpcDeviceId), those past the count zero.
inline constexpr size_t kMaxDevices = 8;
inline constexpr size_t kDevicesBytes = 8 + 16 * kMaxDevices;

// The record a control message (credit, ack, heartbeat) carries after its
// header, in the same frame: where its writer stands, in six little-endian u64 (WIRE_FORMAT.md,
// "Reliable mode"). A sender writes session and next and leaves the rest 0.
struct Control {
  uint64_t session = 0;            // the writer's session: random, new each time a channel opens
  uint64_t next = 0;               // receiver: the next seq it takes; sender: one past the last seq sent
  uint64_t credit_messages = 0;    // receiver: messages a sender may have unacknowledged
  uint64_t credit_bytes = 0;       // receiver: bytes a sender may have unacknowledged
  uint64_t max_message_bytes = 0;  // receiver: the largest message it takes
  uint64_t rewind = 0;             // receiver: bumped to ask the sender to resend from `next`
};
inline constexpr size_t kControlBytes = 48;
// A barrier's checkpoint number, a little-endian u64 after its header, in
// the same frame (one frame, like a control message, so it never arrives
// half-read).
inline constexpr size_t kBarrierBytes = 8;
// An update's target name: 1 to this many bytes of UTF-8. A name, not a
// document: the bound keeps a malformed frame from passing as one.
inline constexpr size_t kMaxTargetBytes = 1024;

struct Header {
  Kind kind = Kind::Data;
  uint16_t flags = 0;
  uint64_t stream_id = 0;
  uint64_t seq = 0;
  uint32_t count = 0;  // tensors in the message
  uint32_t crc = 0;
};

struct DecodeLimits {
  // The most bytes a message's frames may hold together; anything larger is
  // rejected before any allocation it would imply.
  int64_t max_message_bytes = int64_t{1} << 30;
};

using Bytes = std::span<const uint8_t>;

// One tensor of a parsed message: its spec and its data frame's bytes.
struct TensorView {
  TensorView(const Spec& spec_, Bytes data_) : spec(spec_), data(data_) {}
  Spec spec;
  Bytes data;                          // the data, or the reference's bytes when shared or device is set
  std::optional<SharedHandle> shared;  // kFlagShared: where the data is
  std::string_view device;             // kFlagShared: a device reference's text (else empty)
};

// A validated message: views into the frames it was parsed from.
struct Parsed {
  Header header;
  std::vector<TensorView> tensors;  // Data, Update
  std::string_view error;           // Error: the peer's message
  std::string_view target;          // Update: the name of what it updates
  Control control;                  // Credit, Ack, Heartbeat
  uint64_t checkpoint = 0;          // Barrier: the checkpoint it closes
  std::optional<SharedHandle> probe;  // a sender's heartbeat offering shared memory: its probe
  std::vector<uint64_t> leases;       // a receiver's control message taking shared memory
  uint64_t pid = 0;                   // kFlagPid: the receiver's process id (else 0)
  std::optional<SharedHandle> ring;   // kFlagRing: the receiver's ring for this sender
  std::vector<IpcDeviceId> devices;   // kFlagDevices: the devices whose memory the receiver opens
  Bytes tags;                         // kFlagTags: the tags block, read by read_tags_block (else empty)
};

// A tags block (kFlagTags; WIRE_FORMAT.md, "Tags"): 'TAGS', a u32 count of
// 1 to kMaxTags, then per tag a u16 key length, a u8 type (kTagTypes), a u8
// 0, an i64 offset (-1: the whole message), the key, and the value: 8 bytes
// for an integer or a float, a u32 length and the bytes for a string (UTF-8)
// or a tensor (an .npy file). Tags hold no more than devices/tags.h allows.
inline constexpr std::string_view kTagsMagic = "TAGS";
enum class TagType : uint8_t { Integer = 0, Float = 1, String = 2, Tensor = 3 };
size_t tags_block_bytes(const Tags& tags);
void write_tags_block(const Tags& tags, uint8_t* out);  // tags_block_bytes(tags) bytes
// WireError naming `where` and what is wrong: a wrong magic, a count or a
// length past the bytes there or the bounds, a key or a value Tags refuses,
// a key and offset twice, an .npy that is not one, anything after the last tag.
Tags read_tags_block(Bytes block, std::string_view where);

// True for the kinds of the reliable protocol's control messages.
inline bool is_control(Kind kind) { return kind == Kind::Credit || kind == Kind::Ack || kind == Kind::Heartbeat; }
// True for the kinds whose header counts tensors that follow it.
inline bool carries_tensors(Kind kind) { return kind == Kind::Data || kind == Kind::Update; }
// The frame holding tensor 0's .npy header when not packed: an update's
// target name comes first.
inline size_t first_tensor_frame(Kind kind) { return kind == Kind::Update ? 2 : 1; }
// The bytes of a header frame that is not packed: the header, and the
// record a control message or a barrier carries after it (then a
// heartbeat's probe reference, a receiver's leases, its pid, its ring and
// its devices).
inline size_t header_frame_bytes(const Header& h) {
  const bool control = is_control(h.kind);
  const bool offer = h.kind == Kind::Heartbeat && (h.flags & kFlagShareOffer);
  const bool leases = control && (h.flags & kFlagShared);
  const bool pid = control && (h.flags & kFlagPid);
  const bool ring = control && (h.flags & kFlagRing);
  const bool devices = control && (h.flags & kFlagDevices);
  return kHeaderBytes + (ring ? kSharedRefBytes : 0) + (devices ? kDevicesBytes : 0) +
         (control                   ? kControlBytes
          : h.kind == Kind::Barrier ? kBarrierBytes
                                    : 0) +
         (offer ? kSharedRefBytes : 0) + (leases ? 8 * size_t{h.count} : 0) + (pid ? 8 : 0);
}

// A batch frame (WIRE_FORMAT.md, "Batches"): the 32-byte header (kind 8,
// `count` the messages it holds, `seq` the first one's), then per message a
// u32 length, a u32 0, the message's one frame and zeros up to a multiple
// of 8 bytes (which keeps each message's tensors as aligned as the frame).
inline constexpr size_t kBatchEntryHeaderBytes = 8;
// What one message of `frame_bytes` takes in a batch frame.
inline size_t batch_entry_bytes(size_t frame_bytes) {
  return kBatchEntryHeaderBytes + (frame_bytes + 7) / 8 * 8;
}
// Writes an entry's header and padding at `out` for a message's frame of
// `frame_bytes` (batch_entry_bytes(frame_bytes) bytes in all); where the
// frame's bytes go, which the caller writes.
uint8_t* begin_batch_entry(size_t frame_bytes, uint8_t* out);
// The messages of a batch frame, in order, each the bytes of its one frame
// (not parsed: each is parsed as a message of its own). WireError naming
// `where` when the header is not a batch's, `count` is 0, an entry is
// shorter than a header or runs past the frame, its padding or reserved
// word is not 0, or the entries do not fill the frame exactly or number
// other than `count`. Allocates nothing beyond the list it returns, which
// is at most one entry per 40 bytes of the frame.
std::vector<Bytes> split_batch(Bytes frame, std::string_view where);

// Validates every frame of one message: the header (magic, version, kind,
// frame count), each tensor's .npy header (version 1.0, dtype, rank, dims)
// and data size (in frames of their own, or one after another in a packed
// message's single frame), the size of a control record or a barrier's
// checkpoint number, the byte total against `limits`, the CRC when flagged,
// an error message's UTF-8. Throws WireError naming `where` (an endpoint),
// the sequence number and tensor when known, what was expected and what was
// found. An update's target must be 1 to kMaxTargetBytes bytes of UTF-8,
// and it carries at least one tensor.
Parsed parse(std::span<const Bytes> frames, const DecodeLimits& limits = {}, std::string_view where = "wire");
// The same into `out`, whatever it held before replaced; its list of tensor
// views keeps its room (up to a few), so that a caller parsing message after
// message into one Parsed allocates none for them.
void parse(std::span<const Bytes> frames, Parsed& out, const DecodeLimits& limits = {},
           std::string_view where = "wire");

// The 32-byte header, little-endian. write_header writes flags as given:
// callers pass 0 for bits they do not define.
void write_header(const Header& h, uint8_t* out);
// Checks size (at least 32 bytes when `packed_ok`, so that a packed
// message's frame passes; else exactly 32), magic, version and kind (0 to 8);
// unknown flag bits are ignored.
Header read_header(Bytes frame, std::string_view where, bool packed_ok = false);

// The control record's 48 bytes.
void write_control(const Control& c, uint8_t* out);
Control read_control(Bytes frame, std::string_view where);

// A shared-memory reference's 40 bytes.
void write_shared_ref(const SharedHandle& h, uint8_t* out);
SharedHandle read_shared_ref(Bytes frame, std::string_view where);

// A data frame of a shared message that is a device reference (it starts
// with kDeviceRefPrefix), and its text: WireError naming `where` unless it
// is kMaxDeviceRefBytes or fewer of printable ASCII, "sluice-<platform>-ipc:...".
bool is_device_ref(Bytes frame);
std::string_view read_device_ref(Bytes frame, std::string_view where);

// A receiver's devices (kDevicesBytes; at most kMaxDevices of them, the
// caller's to check): WireError naming `where` for a count of 0 or past
// kMaxDevices, or bytes past the count that are not zero.
void write_devices(std::span<const IpcDeviceId> devices, uint8_t* out);
std::vector<IpcDeviceId> read_devices(Bytes frame, std::string_view where);

// A barrier's checkpoint number: 8 bytes, little-endian.
void write_checkpoint(uint64_t checkpoint, uint8_t* out);
uint64_t read_checkpoint(Bytes frame, std::string_view where);

// CRC-32C (Castagnoli) continuing from `crc` (0 to start).
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(Bytes text);
// An update's target name: WireError naming `where` unless it is 1 to
// kMaxTargetBytes bytes of UTF-8.
void check_target(Bytes name, std::string_view where);

// "data", "end of stream", "error", "credit", "ack", "checkpoint barrier", "heartbeat", "update", "batch".
std::string_view kind_name(Kind kind);

}  // namespace sluice::wire
