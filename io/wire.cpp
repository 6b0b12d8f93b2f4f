#include "io/wire.h"

#include <array>
#include <cstring>

#include "io/npy.h"

namespace sluice::wire {
namespace {

constexpr char kMagic[4] = {'S', 'L', 'C', 'E'};

template <typename T>
void put(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}
template <typename T>
T get(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{p[i]} << (8 * i);
  return static_cast<T>(v);
}

std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

[[noreturn]] void fail(std::string_view where, const std::string& what) {
  throw WireError(std::string(where) + ": " + what);
}

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void write_header(const Header& h, uint8_t* out) {
  std::memcpy(out, kMagic, 4);
  out[4] = kVersion;
  out[5] = static_cast<uint8_t>(h.kind);
  put<uint16_t>(out + 6, h.flags);
  put<uint64_t>(out + 8, h.stream_id);
  put<uint64_t>(out + 16, h.seq);
  put<uint32_t>(out + 24, h.count);
  put<uint32_t>(out + 28, h.crc);
}

Header read_header(std::span<const uint8_t> f, std::string_view where) {
  if (f.size() != kHeaderBytes)
    fail(where, "header frame: expected " + std::to_string(kHeaderBytes) + " bytes, found " + std::to_string(f.size()));
  if (std::memcmp(f.data(), kMagic, 4) != 0) fail(where, "header frame: expected magic SLCE, found other bytes");
  if (f[4] != kVersion)
    fail(where, "header frame: expected version 1, found " + std::to_string(f[4]));
  if (f[5] > static_cast<uint8_t>(Kind::Error))
    fail(where, "header frame: expected kind 0 (data), 1 (end of stream) or 2 (error), found " + std::to_string(f[5]));
  Header h;
  h.kind = static_cast<Kind>(f[5]);
  h.flags = get<uint16_t>(f.data() + 6);
  h.stream_id = get<uint64_t>(f.data() + 8);
  h.seq = get<uint64_t>(f.data() + 16);
  h.count = get<uint32_t>(f.data() + 24);
  h.crc = get<uint32_t>(f.data() + 28);
  return h;
}

std::vector<Frame> encode(const Message& m, const EncodeOptions& options) {
  Header h = m.header;
  h.count = m.header.kind == Kind::Data ? static_cast<uint32_t>(m.tensors.size()) : 0;
  h.flags = options.crc ? kFlagCrc : 0;
  std::vector<Frame> frames;
  frames.reserve(1 + 2 * m.tensors.size());
  auto header = std::make_shared<std::array<uint8_t, kHeaderBytes>>();
  frames.push_back({header->data(), kHeaderBytes, header});
  if (h.kind == Kind::Error) {
    auto text = std::make_shared<std::string>(m.error);
    frames.push_back({text->data(), text->size(), text});
  }
  if (h.kind == Kind::Data) {
    for (const Tensor& t0 : m.tensors) {
      Tensor t = t0.to_host();
      auto npy_header = std::make_shared<std::string>(npy::header(t.spec()));
      frames.push_back({npy_header->data(), npy_header->size(), npy_header});
      // The frame shares the buffer's ownership: no copy of the data.
      std::shared_ptr<const void> keep(t.buffer(), t.host_data());
      frames.push_back({t.host_data(), static_cast<size_t>(t.spec().bytes()), keep});
      if (options.crc) h.crc = crc32c(h.crc, t.host_data(), static_cast<size_t>(t.spec().bytes()));
    }
  }
  write_header(h, header->data());
  return frames;
}

Message decode(std::vector<ReceivedFrame> frames, const DecodeLimits& limits, std::string_view where) {
  if (frames.empty()) fail(where, "expected a header frame, found an empty message");
  Message m;
  m.header = read_header(frames[0].bytes, where);
  const Header& h = m.header;
  auto frame_count_error = [&](size_t expected) {
    fail(where, "seq " + std::to_string(h.seq) + ": expected " + std::to_string(expected) + " frames, found " +
                    std::to_string(frames.size()));
  };
  switch (h.kind) {
    case Kind::EndOfStream:
      if (frames.size() != 1) frame_count_error(1);
      return m;
    case Kind::Error:
      if (frames.size() != 2) frame_count_error(2);
      m.error.assign(reinterpret_cast<const char*>(frames[1].bytes.data()), frames[1].bytes.size());
      return m;
    default:
      break;
  }
  // Compare the claimed count with the frames present before trusting it.
  if (frames.size() != 1 + 2 * size_t{h.count}) frame_count_error(1 + 2 * size_t{h.count});
  int64_t total = 0;
  uint32_t crc = 0;
  m.tensors.reserve(h.count);
  for (uint32_t i = 0; i < h.count; ++i) {
    std::string at = std::string(where) + ": seq " + std::to_string(h.seq) + ", tensor " + std::to_string(i);
    size_t header_bytes = 0;
    const ReceivedFrame& hf = frames[1 + 2 * i];
    Spec spec = npy::parse_header(hf.bytes, &header_bytes, at);
    if (header_bytes != hf.bytes.size())
      fail(at, "npy header frame: expected " + std::to_string(header_bytes) + " bytes, found " +
                   std::to_string(hf.bytes.size()));
    ReceivedFrame& df = frames[2 + 2 * i];
    if (static_cast<int64_t>(df.bytes.size()) != spec.bytes())
      fail(at, "data frame: expected " + std::to_string(spec.bytes()) + " bytes for " + spec.str() + ", found " +
                   std::to_string(df.bytes.size()));
    total += spec.bytes();
    if (total > limits.max_message_bytes)
      fail(at, "message size: expected at most max_message_bytes = " + std::to_string(limits.max_message_bytes) +
                   ", found " + std::to_string(total) + " bytes so far");
    if (h.flags & kFlagCrc) crc = crc32c(crc, df.bytes.data(), df.bytes.size());
    // Zero copy when the frame's alignment suits the element type.
    void* data = const_cast<uint8_t*>(df.bytes.data());
    if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(std::max(1, dtype_size(spec.dtype))) == 0 && df.owner) {
      m.tensors.push_back(wrap_host(spec, data, df.owner));
    } else {
      m.tensors.push_back(tensor_from_bytes(spec, data));
    }
  }
  if ((h.flags & kFlagCrc) && crc != h.crc)
    fail(where, "seq " + std::to_string(h.seq) + ": CRC-32C mismatch: header says " + std::to_string(h.crc) +
                    ", data frames give " + std::to_string(crc));
  return m;
}

}  // namespace sluice::wire
