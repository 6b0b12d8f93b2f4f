#pragma once
// The wire format, version 1 (io/WIRE_FORMAT.md is its specification): one
// message is one ZeroMQ multipart message of a 32-byte header frame and two
// frames per tensor, an .npy header and the raw data, so that Python reads
// each tensor with numpy alone. Start here for io/.
//
// Encoding never copies tensor data: data frames point into the tensors'
// buffers and keep them alive. Decoding is strict and never allocates what a
// header merely claims: every size is checked against the frames actually
// received and against max_message_bytes first.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "devices/backend.h"

namespace sluice::wire {

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 32;

enum class Kind : uint8_t {
  Data = 0,
  EndOfStream = 1,
  Error = 2,  // frame 1 is a UTF-8 message
  // Reserved for reliable channels; a version-1 reader rejects them.
  Credit = 3,
  Ack = 4,
  Barrier = 5,
  Heartbeat = 6,
};

enum Flags : uint16_t {
  kFlagCrc = 1 << 0,  // `crc` holds the CRC-32C of the data frames
};

struct Header {
  Kind kind = Kind::Data;
  uint16_t flags = 0;
  uint64_t stream_id = 0;
  uint64_t seq = 0;
  uint32_t count = 0;  // tensors in the message
  uint32_t crc = 0;
};

// One frame to send: bytes that stay valid as long as `owner` lives.
struct Frame {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

// One received frame: its bytes and what keeps them alive, so that a data
// frame can become a tensor's buffer without a copy.
struct ReceivedFrame {
  std::span<const uint8_t> bytes;
  std::shared_ptr<void> owner;
};

struct Message {
  Header header;
  std::vector<Tensor> tensors;  // Data
  std::string error;            // Error
};

struct EncodeOptions {
  bool crc = false;  // compute a CRC-32C of the data frames
};

struct DecodeLimits {
  int64_t max_message_bytes = int64_t{1} << 30;
};

std::vector<Frame> encode(const Message& message, const EncodeOptions& options = {});
// Throws WireError naming `where` (an endpoint) and what was wrong.
Message decode(std::vector<ReceivedFrame> frames, const DecodeLimits& limits = {},
               std::string_view where = "wire");

// The 32-byte header, little-endian.
void write_header(const Header& h, uint8_t* out);
Header read_header(std::span<const uint8_t> frame, std::string_view where);

// CRC-32C (Castagnoli) continuing from `crc` (0 to start).
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

}  // namespace sluice::wire
