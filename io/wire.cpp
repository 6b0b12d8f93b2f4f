#include <sluice/io/wire.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <sluice/devices/shared_memory.h>
#include <sluice/io/npy.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::wire {
namespace {

// A stream sends one spec over and over: each thread keeps the .npy header
// it made last, so that a message costs no string formatting.
const std::shared_ptr<const std::string>& npy_header(const Spec& spec) {
  thread_local Spec last_spec;
  thread_local std::shared_ptr<const std::string> last;
  if (!last || spec != last_spec) {
    last = std::make_shared<const std::string>(npy::header(spec));
    last_spec = spec;
  }
  return last;
}

// The alignment a tensor's elements need: a complex is a pair of its reals.
uintptr_t element_alignment(DType t) {
  return static_cast<uintptr_t>(is_complex(t) ? dtype_size(t) / 2 : dtype_size(t));
}

// A message of one frame: its header, then the `after` bytes that
// write_after writes (a control record, a barrier's checkpoint number).
template <size_t after, typename WriteAfter>
std::vector<Frame> one_frame(const Header& h, WriteAfter write_after) {
  auto bytes = std::make_shared<std::array<uint8_t, kHeaderBytes + after>>();
  write_header(h, bytes->data());
  write_after(bytes->data() + kHeaderBytes);
  return {{bytes->data(), bytes->size(), bytes}};
}

Bytes bytes_of(const std::string& text) { return {reinterpret_cast<const uint8_t*>(text.data()), text.size()}; }

// What a reader would reject in `m`, refused before any frame is made.
void check_encodable(const Message& m) {
  const Header& h = m.header;
  // Built only where it is needed: a data message's path formats nothing.
  auto at = [&] { return fmt::format("encode: seq {}", h.seq); };
  if (static_cast<uint8_t>(h.kind) > static_cast<uint8_t>(Kind::Update))
    throw WireError(error_message(
        "encode", "kind", "data, end of stream, error, credit, ack, checkpoint barrier, heartbeat or update",
        fmt::format("{} ({})", static_cast<int>(h.kind), kind_name(h.kind))));
  if (!carries_tensors(h.kind) && !m.tags.empty())
    throw WireError(error_message(at(), "tags",
                                  fmt::format("none (a {} message carries no tensors)", kind_name(h.kind)),
                                  m.tags.size()));
  if (!carries_tensors(h.kind) && !m.tensors.empty())
    throw WireError(error_message(at(), "tensors",
                                  fmt::format("none (a {} message carries no tensors)", kind_name(h.kind)),
                                  m.tensors.size()));
  if (h.kind == Kind::Error && !valid_utf8(bytes_of(m.error)))
    throw WireError(error_message(at(), "error message", "UTF-8 text", "invalid bytes"));
  if (h.kind == Kind::Update) {
    check_target(bytes_of(m.target), at());
    if (m.tensors.empty())
      throw WireError(error_message(at(), "update", "at least 1 tensor", m.tensors.size()));
  }
}

// Whether `t` goes as a device reference: shared, on a device whose memory
// the receiver opens.
bool goes_as_device_ref(const Tensor& t, const EncodeOptions& options) {
  if (!options.shared || options.devices.empty() || t.device().host_memory()) return false;
  const std::optional<IpcDeviceId> id = ipc_device_id(t.device());
  return id && std::find(options.devices.begin(), options.devices.end(), *id) != options.devices.end();
}

// packed_bytes, of a message checked already.
size_t packed_size(const Message& m, const EncodeOptions& options) {
  if (m.header.kind != Kind::Data || options.shared) return 0;
  size_t bytes = kHeaderBytes + (m.tags.empty() ? 0 : tags_block_bytes(m.tags));
  for (const Tensor& t : m.tensors)
    bytes += npy_header(t.spec())->size() + static_cast<size_t>(t.spec().bytes());
  return bytes < options.pack_below ? bytes : 0;
}

}  // namespace

std::vector<Frame> encode(const Message& m, const EncodeOptions& options) {
  check_encodable(m);
  Header h = m.header;
  h.count = static_cast<uint32_t>(m.tensors.size());
  h.flags = options.crc ? kFlagCrc : 0;
  h.crc = 0;
  if (is_control(h.kind)) {
    h.flags |= m.header.flags & (kFlagTakesBatches | kFlagConfirm);  // a receiver's, as its writer says
    if (m.probe && h.kind == Kind::Heartbeat) h.flags |= kFlagShareOffer;
    if (m.shared) {
      if (m.leases.size() > kMaxLeases)
        throw WireError(error_message(fmt::format("encode: seq {}", h.seq), "leases",
                                      fmt::format("at most {}", kMaxLeases), m.leases.size()));
      h.flags |= kFlagShared;
      h.count = static_cast<uint32_t>(m.leases.size());
      if (m.pid != 0) h.flags |= kFlagPid;
      if (m.ring) h.flags |= kFlagRing;
      if (m.devices.size() > kMaxDevices)
        throw WireError(error_message(fmt::format("encode: seq {}", h.seq), "devices",
                                      fmt::format("at most {}", kMaxDevices), m.devices.size()));
      if (!m.devices.empty()) h.flags |= kFlagDevices;
    }
    if (!(h.flags & (kFlagShared | kFlagShareOffer)))
      return one_frame<kControlBytes>(h, [&](uint8_t* out) { write_control(m.control, out); });
    auto bytes = std::make_shared<std::vector<uint8_t>>(header_frame_bytes(h));
    write_header(h, bytes->data());
    uint8_t* out = bytes->data() + kHeaderBytes;
    write_control(m.control, out);
    out += kControlBytes;
    if (h.flags & kFlagShareOffer) {
      write_shared_ref(*m.probe, out);
      out += kSharedRefBytes;
    }
    for (uint64_t seq : m.leases) {
      for (int b = 0; b < 8; ++b) out[b] = static_cast<uint8_t>(seq >> (8 * b));
      out += 8;
    }
    if (h.flags & kFlagPid) {
      for (int b = 0; b < 8; ++b) out[b] = static_cast<uint8_t>(m.pid >> (8 * b));
      out += 8;
    }
    if (h.flags & kFlagRing) {
      write_shared_ref(*m.ring, out);
      out += kSharedRefBytes;
    }
    if (h.flags & kFlagDevices) write_devices(m.devices, out);
    return {{bytes->data(), bytes->size(), bytes}};
  }
  if (h.kind == Kind::Barrier)
    return one_frame<kBarrierBytes>(h, [&](uint8_t* out) { write_checkpoint(m.checkpoint, out); });
  if (const size_t packed = packed_size(m, options); packed > 0) {
    // One allocation: the control block and the bytes together.
    std::shared_ptr<uint8_t[]> bytes = std::make_shared_for_overwrite<uint8_t[]>(packed);
    write_packed(m, options, bytes.get());
    std::vector<Frame> frames;
    frames.push_back({bytes.get(), packed, std::move(bytes)});
    return frames;
  }
  std::vector<Frame> frames;
  // Each tensor on the host (in shared memory when shared), or, where it
  // goes as a device reference, as it is.
  std::vector<Tensor> host;
  host.reserve(m.tensors.size());
  for (const Tensor& given : m.tensors)
    host.push_back(goes_as_device_ref(given, options) ? given
                   : options.shared                   ? given.to_shared()
                                                      : given.to_host());
  if (options.shared) h.flags |= kFlagShared;
  if (!m.tags.empty()) h.flags |= kFlagTags;
  frames.reserve(2 + 2 * host.size());
  auto header = std::make_shared<std::array<uint8_t, kHeaderBytes>>();
  frames.push_back({header->data(), kHeaderBytes, header});
  if (h.kind == Kind::Error || h.kind == Kind::Update) {
    auto text = std::make_shared<const std::string>(h.kind == Kind::Error ? m.error : m.target);
    frames.push_back({text->data(), text->size(), text});
  }
  for (const Tensor& t : host) {
    const std::shared_ptr<const std::string> npy = npy_header(t.spec());
    frames.push_back({npy->data(), npy->size(), npy});
    const auto bytes = static_cast<size_t>(t.spec().bytes());
    if (!t.device().host_memory()) {
      // The handle's owner keeps the tensor's memory (and what vouches for
      // the handle) alive while the message is kept.
      TensorPointer pointer = t.to_pointer({.mode = PointerMode::Ipc});
      auto ref = std::make_shared<std::pair<std::string, std::shared_ptr<void>>>(std::move(pointer.handle),
                                                                                 std::move(pointer.owner));
      frames.push_back({ref->first.data(), ref->first.size(), ref});
      continue;
    }
    // The frame shares the buffer's ownership: no copy of the data. A
    // reference keeps the shared memory from going back to the pool (and
    // another tensor being written there) while the message is kept.
    std::shared_ptr<const void> keep(t.buffer(), t.host_data());
    if (options.shared) {
      const std::optional<SharedHandle> handle = find_shared(t.host_data(), bytes);
      if (!handle)
        throw InternalError(
            error_message("encode", "a tensor to_shared made is not in shared memory", "", ""));
      auto ref = std::make_shared<std::pair<std::array<uint8_t, kSharedRefBytes>, std::shared_ptr<const void>>>();
      write_shared_ref(*handle, ref->first.data());
      ref->second = std::move(keep);
      frames.push_back({ref->first.data(), kSharedRefBytes, ref});
      if (options.crc) h.crc = crc32c(h.crc, ref->first.data(), kSharedRefBytes);
      continue;
    }
    frames.push_back({t.host_data(), bytes, std::move(keep)});
    if (options.crc) h.crc = crc32c(h.crc, t.host_data(), bytes);
  }
  if (!m.tags.empty()) {
    auto block = std::make_shared<std::vector<uint8_t>>(tags_block_bytes(m.tags));
    write_tags_block(m.tags, block->data());
    frames.push_back({block->data(), block->size(), block});
  }
  write_header(h, header->data());
  return frames;
}

size_t packed_bytes(const Message& m, const EncodeOptions& options) {
  check_encodable(m);
  // A tensor empty, donated or deallocated is refused now, as encode
  // refuses it, not when write_packed meets it.
  for (const Tensor& t : m.tensors) (void)t.device();
  return packed_size(m, options);
}

bool holds_device_tensors(const Message& m) {
  return std::any_of(m.tensors.begin(), m.tensors.end(),
                     [](const Tensor& t) { return !t.device().host_memory(); });
}

size_t unpacked_bytes(const Message& m) {
  check_encodable(m);
  size_t bytes = kHeaderBytes + (m.header.kind == Kind::Update ? m.target.size() : 0) +
                 (m.tags.empty() ? 0 : tags_block_bytes(m.tags));
  for (const Tensor& t : m.tensors)
    bytes += npy_header(t.spec())->size() + static_cast<size_t>(t.spec().bytes());
  return bytes;
}

void write_packed(const Message& m, const EncodeOptions& options, uint8_t* out) {
  // The header, then each tensor as an .npy file.
  Header h = m.header;
  h.count = static_cast<uint32_t>(m.tensors.size());
  h.flags = kFlagPacked | (options.crc ? kFlagCrc : 0) | (m.tags.empty() ? 0 : kFlagTags);
  h.crc = 0;
  uint8_t* at = out + kHeaderBytes;
  for (const Tensor& given : m.tensors) {
    // A host tensor read where it is: a copy of a Tensor copies its shape.
    const Tensor elsewhere = given.device() == host() ? Tensor() : given.to_host();
    const Tensor& t = elsewhere ? elsewhere : given;
    const std::string& npy = *npy_header(t.spec());
    std::memcpy(at, npy.data(), npy.size());
    at += npy.size();
    const auto size = static_cast<size_t>(t.spec().bytes());
    if (size != 0) std::memcpy(at, t.host_data(), size);
    if (options.crc) h.crc = crc32c(h.crc, at, size);
    at += size;
  }
  if (!m.tags.empty()) write_tags_block(m.tags, at);
  write_header(h, out);
}

Message decode(std::span<const ReceivedFrame> frames, const DecodeLimits& limits, std::string_view where,
               const MapShared& map, const OpenDevice& open) {
  // A message of a few frames (one packed, a tensor's three) is parsed from
  // views on the stack: no allocation per message for them.
  constexpr size_t kFew = 4;
  std::array<Bytes, kFew> few;
  std::vector<Bytes> many(frames.size() > kFew ? frames.size() : 0);
  const std::span<Bytes> views =
      many.empty() ? std::span<Bytes>(few.data(), frames.size()) : std::span<Bytes>(many);
  for (size_t i = 0; i < frames.size(); ++i) views[i] = frames[i].bytes;
  // The views of the message before on this thread, their room reused:
  // one list allocated per message cost a malloc and a free.
  thread_local Parsed parsed;
  parse(views, parsed, limits, where);
  Message m;
  m.header = parsed.header;
  m.shared = (parsed.header.flags & kFlagShared) != 0;
  // What only some kinds carry is copied only when there: a small data
  // message's decoding is mostly copies.
  if (!parsed.error.empty()) m.error = parsed.error;
  if (!parsed.target.empty()) m.target = parsed.target;
  if (is_control(parsed.header.kind)) {
    m.control = parsed.control;
    m.probe = parsed.probe;
    m.leases = std::move(parsed.leases);
    m.pid = parsed.pid;
    m.ring = parsed.ring;
    m.devices = std::move(parsed.devices);
  }
  m.checkpoint = parsed.checkpoint;
  if (!parsed.tags.empty())
    m.tags = read_tags_block(parsed.tags, fmt::format("{}: seq {}", where, parsed.header.seq));
  m.tensors.reserve(parsed.tensors.size());
  const bool packed = (parsed.header.flags & kFlagPacked) != 0;
  const size_t first_data = first_tensor_frame(parsed.header.kind) + 1;
  for (size_t i = 0; i < parsed.tensors.size(); ++i) {
    TensorView& v = parsed.tensors[i];
    if (!v.device.empty()) {
      auto at = [&] { return fmt::format("{}: seq {}, tensor {}", where, parsed.header.seq, i); };
      if (!open)
        throw WireError(
            error_message(at(), "device reference",
                          "none here (only a reliable receiver that named its devices takes them)",
                          fmt::format("'{}'", v.device.substr(0, v.device.find(':')))));
      try {
        m.tensors.push_back(open(v.device, v.spec));
      } catch (const Error& e) { throw WireError(error_message(at(), e.what(), "", "")); }
      continue;
    }
    if (v.shared) {
      std::shared_ptr<void> memory;
      try {
        memory = map ? map(*v.shared) : map_shared(*v.shared);
      } catch (const Error& e) {
        throw WireError(error_message(fmt::format("{}: seq {}, tensor {}", where, parsed.header.seq, i),
                                      e.what(), "", ""));
      }
      void* data = memory.get();
      if (reinterpret_cast<uintptr_t>(data) % element_alignment(v.spec.dtype) == 0) {
        m.tensors.push_back(wrap_host(std::move(v.spec), data, std::move(memory)));
        m.tensors.back().buffer()->read_only = true;  // mapped read-only
      } else
        m.tensors.push_back(tensor_from_bytes(v.spec, data));
      continue;
    }
    const ReceivedFrame& frame = packed ? frames[0] : frames[first_data + 2 * i];
    void* data = const_cast<uint8_t*>(v.data.data());
    bool aligned = reinterpret_cast<uintptr_t>(data) % element_alignment(v.spec.dtype) == 0;
    if (aligned && frame.owner && !v.data.empty()) {
      m.tensors.push_back(wrap_host(std::move(v.spec), data, frame.owner));
    } else {
      m.tensors.push_back(tensor_from_bytes(v.spec, data));
    }
  }
  return m;
}

}  // namespace sluice::wire
