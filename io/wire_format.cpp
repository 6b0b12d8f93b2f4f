#include <sluice/io/wire_format.h>

#include <array>
#include <cstring>
#include <string>

#include <sluice/io/npy.h>
#include <sluice/io/detail/wire_error.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

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

uint32_t crc32c_table(uint32_t crc, const uint8_t* p, size_t size) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes CRC-32C 8 bytes at a time: about 20x
// the table's speed, which makes the CRC affordable on large tensors.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p, size_t size) {
  uint64_t c = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  return crc32c_table(static_cast<uint32_t>(c), p, size);
}
#endif

std::string frames_expected(const Header& h, size_t expected, size_t found) {
  return error_message(fmt::format("seq {}", h.seq),
                       carries_tensors(h.kind) ? fmt::format("kind {}, count {}", kind_name(h.kind), h.count)
                                               : fmt::format("kind {}", kind_name(h.kind)),
                       fmt::format("{} frames", expected), found);
}

// A tensor's .npy version 1.0 header at the start of `bytes` (the whole of
// a header frame, or the rest of a packed frame); sets *header_bytes to its
// length. A stream repeats one header over and over, so the last one parsed
// on this thread is remembered and identical bytes skip the parse. The
// spec returned is that memory: valid until the next call on this thread.
template <typename Where>
const Spec& parse_npy_header(Bytes bytes, size_t* header_bytes, const Where& where) {
  thread_local std::vector<uint8_t> last_header;
  thread_local Spec last_spec;
  const size_t n = last_header.size();
  if (n != 0 && bytes.size() >= n && std::memcmp(bytes.data(), last_header.data(), n) == 0) {
    *header_bytes = n;
    return last_spec;
  }
  try {
    last_spec = npy::parse_header(bytes, header_bytes, "npy header", npy::Accept::Version1);
  } catch (const WireError& e) {
    wire_fail(where(), e.what());
  }
  last_header.assign(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(*header_bytes));
  return last_spec;
}

}  // namespace

bool valid_utf8(Bytes s) {
  size_t i = 0;
  while (i < s.size()) {
    uint8_t c = s[i];
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    constexpr uint32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Data: return "data";
    case Kind::EndOfStream: return "end of stream";
    case Kind::Error: return "error";
    case Kind::Credit: return "credit";
    case Kind::Ack: return "ack";
    case Kind::Barrier: return "checkpoint barrier";
    case Kind::Heartbeat: return "heartbeat";
    case Kind::Update: return "update";
    case Kind::Batch: return "batch";
  }
  return "unknown";
}

uint32_t crc32c(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~crc32c_sse42(~crc, p, size);
#endif
  return ~crc32c_table(~crc, p, size);
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

Header read_header(Bytes f, std::string_view where, bool packed_ok) {
  if (f.size() != kHeaderBytes && !(packed_ok && f.size() > kHeaderBytes))
    wire_fail(where, "header frame", fmt::format("{} bytes", kHeaderBytes), f.size());
  if (std::memcmp(f.data(), kMagic, 4) != 0) wire_fail(where, "header frame", "magic SLCE", "other bytes");
  if (f[4] != kVersion) wire_fail(where, "header frame", "version 1", unsigned{f[4]});
  if (f[5] > static_cast<uint8_t>(Kind::Batch)) {
    wire_fail(
        where, "header frame",
        "kind 0 to 8 (data, end of stream, error, credit, ack, checkpoint barrier, heartbeat, update, batch)",
        unsigned{f[5]});
  }
  Header h;
  h.kind = static_cast<Kind>(f[5]);
  h.flags = get<uint16_t>(f.data() + 6);
  h.stream_id = get<uint64_t>(f.data() + 8);
  h.seq = get<uint64_t>(f.data() + 16);
  h.count = get<uint32_t>(f.data() + 24);
  h.crc = get<uint32_t>(f.data() + 28);
  return h;
}

void write_control(const Control& c, uint8_t* out) {
  put<uint64_t>(out, c.session);
  put<uint64_t>(out + 8, c.next);
  put<uint64_t>(out + 16, c.credit_messages);
  put<uint64_t>(out + 24, c.credit_bytes);
  put<uint64_t>(out + 32, c.max_message_bytes);
  put<uint64_t>(out + 40, c.rewind);
}

Control read_control(Bytes f, std::string_view where) {
  if (f.size() != kControlBytes)
    wire_fail(where, "control record", fmt::format("{} bytes", kControlBytes), f.size());
  Control c;
  c.session = get<uint64_t>(f.data());
  c.next = get<uint64_t>(f.data() + 8);
  c.credit_messages = get<uint64_t>(f.data() + 16);
  c.credit_bytes = get<uint64_t>(f.data() + 24);
  c.max_message_bytes = get<uint64_t>(f.data() + 32);
  c.rewind = get<uint64_t>(f.data() + 40);
  return c;
}

void check_target(Bytes name, std::string_view where) {
  if (name.empty() || name.size() > kMaxTargetBytes)
    wire_fail(where, "update target", fmt::format("a name of 1 to {} bytes", kMaxTargetBytes), name.size());
  if (!valid_utf8(name)) wire_fail(where, "update target", "UTF-8 text", "invalid bytes");
}

void write_shared_ref(const SharedHandle& h, uint8_t* out) {
  put<uint32_t>(out, h.pid);
  put<uint32_t>(out + 4, h.fd);
  put<uint64_t>(out + 8, h.segment);
  put<uint64_t>(out + 16, h.offset);
  put<uint64_t>(out + 24, h.bytes);
  put<uint64_t>(out + 32, h.generation);
}

SharedHandle read_shared_ref(Bytes f, std::string_view where) {
  if (f.size() != kSharedRefBytes)
    wire_fail(where, "shared-memory reference", fmt::format("{} bytes", kSharedRefBytes), f.size());
  return {get<uint32_t>(f.data()),       get<uint32_t>(f.data() + 4),  get<uint64_t>(f.data() + 8),
          get<uint64_t>(f.data() + 16), get<uint64_t>(f.data() + 24), get<uint64_t>(f.data() + 32)};
}

void write_checkpoint(uint64_t checkpoint, uint8_t* out) { put<uint64_t>(out, checkpoint); }

bool is_device_ref(Bytes frame) {
  return frame.size() >= kDeviceRefPrefix.size() &&
         std::memcmp(frame.data(), kDeviceRefPrefix.data(), kDeviceRefPrefix.size()) == 0;
}

std::string_view read_device_ref(Bytes f, std::string_view where) {
  const std::string_view text(reinterpret_cast<const char*>(f.data()), f.size());
  if (f.size() > kMaxDeviceRefBytes)
    wire_fail(where, "device reference", fmt::format("at most {} bytes", kMaxDeviceRefBytes), f.size());
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] < 0x21 || text[i] > 0x7e)
      wire_fail(where, "device reference", "printable ASCII",
                fmt::format("byte {} at {}", static_cast<int>(f[i]), i));
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || !text.substr(0, colon).ends_with("-ipc"))
    wire_fail(where, "device reference", "'sluice-<platform>-ipc:...'",
              fmt::format("'{}'", text.substr(0, 40)));
  return text;
}

void write_devices(std::span<const IpcDeviceId> devices, uint8_t* out) {
  std::memset(out, 0, kDevicesBytes);
  put<uint64_t>(out, devices.size());
  for (size_t i = 0; i < devices.size(); ++i) std::memcpy(out + 8 + 16 * i, devices[i].data(), 16);
}

std::vector<IpcDeviceId> read_devices(Bytes f, std::string_view where) {
  if (f.size() != kDevicesBytes)
    wire_fail(where, "devices", fmt::format("{} bytes", kDevicesBytes), f.size());
  const auto count = get<uint64_t>(f.data());
  if (count == 0 || count > kMaxDevices)
    wire_fail(where, "device count", fmt::format("1 to {}", kMaxDevices), count);
  for (size_t i = 8 + 16 * count; i < kDevicesBytes; ++i)
    if (f[i] != 0) wire_fail(where, "devices", fmt::format("zeros after the {} named", count), "other bytes");
  std::vector<IpcDeviceId> devices(count);
  for (size_t i = 0; i < count; ++i) std::memcpy(devices[i].data(), f.data() + 8 + 16 * i, 16);
  return devices;
}

uint64_t read_checkpoint(Bytes f, std::string_view where) {
  if (f.size() != kBarrierBytes)
    wire_fail(where, "checkpoint barrier",
         fmt::format("a {}-byte checkpoint number after the header", kBarrierBytes),
         fmt::format("{} bytes", f.size()));
  return get<uint64_t>(f.data());
}

uint8_t* begin_batch_entry(size_t frame_bytes, uint8_t* out) {
  put<uint32_t>(out, static_cast<uint32_t>(frame_bytes));
  put<uint32_t>(out + 4, 0);
  const size_t end = batch_entry_bytes(frame_bytes);
  std::memset(out + kBatchEntryHeaderBytes + frame_bytes, 0, end - kBatchEntryHeaderBytes - frame_bytes);
  return out + kBatchEntryHeaderBytes;
}

std::vector<Bytes> split_batch(Bytes frame, std::string_view where) {
  const Header h = read_header(frame, where, /*packed_ok=*/true);
  if (h.kind != Kind::Batch) wire_fail(where, "kind", "batch", kind_name(h.kind));
  auto at = [&] { return fmt::format("{}: batch from seq {}", where, h.seq); };
  // The smallest entry is a header alone: the count cannot claim more.
  constexpr size_t kSmallest = kBatchEntryHeaderBytes + kHeaderBytes;
  if (h.count == 0 || h.count > (frame.size() - kHeaderBytes) / kSmallest)
    wire_fail(
        at(), "message count",
        fmt::format("1 to {} (what {} bytes hold)", (frame.size() - kHeaderBytes) / kSmallest, frame.size()),
        h.count);
  std::vector<Bytes> entries;
  entries.reserve(h.count);
  size_t at_byte = kHeaderBytes;
  while (at_byte < frame.size()) {
    if (entries.size() == h.count)
      wire_fail(at(), "size", fmt::format("{} messages ending at byte {}", h.count, at_byte), frame.size());
    if (frame.size() - at_byte < kSmallest)
      wire_fail(at(), fmt::format("message {}", entries.size()), "a length word and at least a header",
                fmt::format("{} bytes left", frame.size() - at_byte));
    const size_t length = get<uint32_t>(frame.data() + at_byte);
    if (get<uint32_t>(frame.data() + at_byte + 4) != 0)
      wire_fail(at(), fmt::format("message {}", entries.size()), "a reserved word of 0", "another value");
    if (length < kHeaderBytes || batch_entry_bytes(length) > frame.size() - at_byte)
      wire_fail(at(), fmt::format("message {}", entries.size()),
                fmt::format("{} to {} bytes", kHeaderBytes, frame.size() - at_byte - kBatchEntryHeaderBytes),
                length);
    const size_t start = at_byte + kBatchEntryHeaderBytes, end = at_byte + batch_entry_bytes(length);
    for (size_t i = start + length; i < end; ++i)
      if (frame[i] != 0)
        wire_fail(at(), fmt::format("message {}", entries.size()), "zero padding", "other bytes");
    entries.push_back(frame.subspan(start, length));
    at_byte = end;
  }
  if (entries.size() != h.count) wire_fail(at(), "message count", h.count, entries.size());
  return entries;
}

Parsed parse(std::span<const Bytes> frames, const DecodeLimits& limits, std::string_view where) {
  Parsed m;
  parse(frames, m, limits, where);
  return m;
}

void parse(std::span<const Bytes> frames, Parsed& m, const DecodeLimits& limits, std::string_view where) {
  // Everything of the parse before goes, but the room of its list of views
  // (not a large one: a message of many tensors must not hold its list's
  // memory for as long as the thread lives).
  constexpr size_t kKeptViews = 16;
  std::vector<TensorView> room = std::move(m.tensors);
  room.clear();
  if (room.capacity() > kKeptViews) room = {};
  m = Parsed{};
  m.tensors = std::move(room);
  if (frames.empty()) wire_fail(where, "", "a header frame", "an empty message");
  // The total first: nothing below may cost more than the bytes received.
  int64_t total = 0;
  for (Bytes f : frames) total += static_cast<int64_t>(f.size());
  if (total > limits.max_message_bytes)
    wire_fail(where, "message size",
              fmt::format("at most max_message_bytes = {} bytes", limits.max_message_bytes), total);
  m.header = read_header(frames[0], where, /*packed_ok=*/true);
  const Header& h = m.header;
  if (h.kind == Kind::Batch)
    wire_fail(where, "kind", "one message (a batch is split into its messages by a reliable receiver)",
              "a batch");
  const bool packed = (h.flags & kFlagPacked) != 0;
  const bool shared = (h.flags & kFlagShared) != 0;
  // Built only on failure: the common path must not format strings.
  auto at = [&] { return fmt::format("{}: seq {}", where, h.seq); };
  if (packed && h.kind != Kind::Data)
    wire_fail(at(), "flags", "packed (bit 1) only on data messages",
         fmt::format("it on kind {}", kind_name(h.kind)));
  if (shared && (packed || !(carries_tensors(h.kind) || is_control(h.kind))))
    wire_fail(at(), "flags", "shared (bit 2) only on data, updates and control messages, never packed",
              fmt::format("it on kind {}{}", kind_name(h.kind), packed ? ", packed" : ""));
  if ((h.flags & kFlagPid) && !(shared && is_control(h.kind)))
    wire_fail(at(), "flags", "pid (bit 5) only on control messages that take shared memory (bit 2)",
              fmt::format("it on kind {}{}", kind_name(h.kind), shared ? "" : " without bit 2"));
  if ((h.flags & kFlagRing) && !(shared && is_control(h.kind)))
    wire_fail(at(), "flags", "ring (bit 6) only on control messages that take shared memory (bit 2)",
              fmt::format("it on kind {}{}", kind_name(h.kind), shared ? "" : " without bit 2"));
  if ((h.flags & kFlagDevices) && !(shared && is_control(h.kind)))
    wire_fail(at(), "flags", "devices (bit 7) only on control messages that take shared memory (bit 2)",
              fmt::format("it on kind {}{}", kind_name(h.kind), shared ? "" : " without bit 2"));
  if ((h.flags & kFlagConfirm) && !is_control(h.kind))
    wire_fail(at(), "flags", "confirm (bit 8) only on a receiver's control messages",
              fmt::format("it on kind {}", kind_name(h.kind)));
  if ((h.flags & kFlagTags) && !carries_tensors(h.kind))
    wire_fail(at(), "flags", "tags (bit 9) only on data and updates",
              fmt::format("it on kind {}", kind_name(h.kind)));
  if ((h.flags & kFlagShareOffer) && h.kind != Kind::Heartbeat)
    wire_fail(at(), "flags", "share offer (bit 3) only on heartbeats", fmt::format("it on kind {}", kind_name(h.kind)));
  // A control message is one frame, its header then its record, and so is
  // a barrier, its header then its checkpoint number: a message of one
  // frame never arrives half-read, whatever its sender does.
  const size_t header_frame = header_frame_bytes(h);
  if (frames[0].size() != header_frame && !packed)
    wire_fail(where, "header frame",
              fmt::format("{} bytes for kind {}{}{}", header_frame, kind_name(h.kind),
                          h.kind == Kind::Data ? " (flag bit 1, packed, is clear)" : "",
                          h.kind == Kind::Barrier ? " (the header, then its u64 checkpoint number)" : ""),
              frames[0].size());
  if (shared && is_control(h.kind) && h.count > kMaxLeases)
    wire_fail(at(), "lease count", fmt::format("at most {}", kMaxLeases), h.count);
  if (!(h.flags & kFlagCrc) && h.crc != 0) wire_fail(at(), "crc", "0 when flag bit 0 (crc) is clear", h.crc);
  if (!carries_tensors(h.kind) && h.count != 0 && !(shared && is_control(h.kind)))
    wire_fail(at(), "tensor count", fmt::format("0 for kind {}", kind_name(h.kind)), h.count);
  // An update with nothing to apply is no request: a sender's bug, not a no-op.
  if (h.kind == Kind::Update && h.count == 0) wire_fail(at(), "tensor count", "at least 1 for kind update", 0);
  // Compare the claimed count with the frames present before trusting it.
  const size_t first_tensor = first_tensor_frame(h.kind);
  const bool tagged = (h.flags & kFlagTags) != 0;
  size_t expected = packed                    ? 1
                    : carries_tensors(h.kind) ? first_tensor + 2 * size_t{h.count} + (tagged ? 1 : 0)
                    : h.kind == Kind::Error   ? 2
                                              : 1;
  if (frames.size() != expected) wire_fail(where, frames_expected(h, expected, frames.size()));
  if (h.kind == Kind::Error) {
    if (!valid_utf8(frames[1])) wire_fail(at(), "error message", "UTF-8 text", "invalid bytes");
    m.error = {reinterpret_cast<const char*>(frames[1].data()), frames[1].size()};
  }
  if (h.kind == Kind::Update) {
    check_target(frames[1], at());
    m.target = {reinterpret_cast<const char*>(frames[1].data()), frames[1].size()};
  }
  if (is_control(h.kind)) m.control = read_control(frames[0].subspan(kHeaderBytes, kControlBytes), at());
  size_t after = kHeaderBytes + kControlBytes;
  if (h.kind == Kind::Heartbeat && (h.flags & kFlagShareOffer)) {
    m.probe = read_shared_ref(frames[0].subspan(after, kSharedRefBytes), at());
    after += kSharedRefBytes;
  }
  if (is_control(h.kind) && shared) {
    m.leases.resize(h.count);  // at most kMaxLeases, and the frame's size was checked against it
    for (uint32_t i = 0; i < h.count; ++i) m.leases[i] = get<uint64_t>(frames[0].data() + after + 8 * size_t{i});
    after += 8 * size_t{h.count};
    if (h.flags & kFlagPid) {
      m.pid = get<uint64_t>(frames[0].data() + after);
      after += 8;
    }
    if (h.flags & kFlagRing) {
      m.ring = read_shared_ref(frames[0].subspan(after, kSharedRefBytes), at());
      after += kSharedRefBytes;
    }
    if (h.flags & kFlagDevices) m.devices = read_devices(frames[0].subspan(after, kDevicesBytes), at());
  }
  if (h.kind == Kind::Barrier) m.checkpoint = read_checkpoint(frames[0].subspan(kHeaderBytes), at());
  // A packed message's tensors follow the header in its one frame; each
  // needs at least a 64-byte .npy header, which bounds the count before
  // anything is reserved for it.
  Bytes rest = packed ? frames[0].subspan(kHeaderBytes) : Bytes{};
  if (packed && h.count > rest.size() / 64)
    wire_fail(at(), "packed frame", fmt::format("room for {} tensors of at least 64 bytes each", h.count),
         fmt::format("{} bytes", rest.size()));
  uint32_t crc = 0;
  const uint32_t tensors = carries_tensors(h.kind) ? h.count : 0;  // a control's count is its leases
  m.tensors.reserve(tensors);
  for (uint32_t i = 0; i < tensors; ++i) {
    auto tensor_at = [&] { return fmt::format("{}, tensor {}", at(), i); };
    // The view's spec is copied once, from the cache of headers seen, into
    // the view made in place: a small message's decoding is mostly copies.
    const Spec* spec = nullptr;
    Bytes data;
    size_t header_bytes = 0;
    if (packed) {
      spec = &parse_npy_header(rest, &header_bytes, tensor_at);
      const auto bytes = static_cast<uint64_t>(spec->bytes());
      if (bytes > rest.size() - header_bytes)
        wire_fail(tensor_at(), "packed frame", fmt::format("{} bytes of data for {}", bytes, *spec),
                  rest.size() - header_bytes);
      data = rest.subspan(header_bytes, bytes);
      rest = rest.subspan(header_bytes + bytes);
    } else {
      const Bytes header = frames[first_tensor + 2 * size_t{i}];
      data = frames[first_tensor + 1 + 2 * size_t{i}];
      spec = &parse_npy_header(header, &header_bytes, tensor_at);
      if (header_bytes != header.size())
        wire_fail(tensor_at(), "npy header frame", fmt::format("{} bytes", header_bytes), header.size());
      if (!shared && static_cast<int64_t>(data.size()) != spec->bytes())
        wire_fail(tensor_at(), "data frame", fmt::format("{} bytes for {}", spec->bytes(), *spec),
                  data.size());
    }
    TensorView& v = m.tensors.emplace_back(*spec, data);
    if (shared && is_device_ref(v.data)) {
      v.device = read_device_ref(v.data, tensor_at());
    } else if (shared) {
      v.shared = read_shared_ref(v.data, tensor_at());
      if (static_cast<int64_t>(v.shared->bytes) != v.spec.bytes())
        wire_fail(tensor_at(), "shared-memory reference",
                  fmt::format("{} bytes for {}", v.spec.bytes(), v.spec),
                  fmt::format("{} bytes", v.shared->bytes));
    }
    if (h.flags & kFlagCrc) crc = crc32c(crc, v.data.data(), v.data.size());
  }
  // The tags block: the last frame, or the rest of a packed one.
  if (tagged) {
    m.tags = packed ? rest : frames.back();
    rest = {};
    if (m.tags.empty()) wire_fail(at(), "tags", "a tags block (flag bit 9)", "none");
  }
  if (packed && !rest.empty())
    wire_fail(at(), "packed frame", fmt::format("nothing after tensor {}", h.count),
         fmt::format("{} more bytes", rest.size()));
  if ((h.flags & kFlagCrc) && crc != h.crc)
    wire_fail(at(), "CRC-32C mismatch", fmt::format("{} (the header's)", h.crc),
              fmt::format("{} (the data frames')", crc));
}

}  // namespace sluice::wire
