// libFuzzer target: wire::parse, the strict decoder every received message
// goes through, and wire::split_batch, on arbitrary frames (a message's tags
// block, which decode reads with read_tags_block, has its own damage test:
// tests/io/wire_tags_test.cpp). It may reject (WireError) but must not
// crash, read out of bounds, overflow, allocate what a header claims, or
// accept a message whose tensors do not match their frames.
//
// Input: a limit byte, then frames, each a little-endian u16 length and that
// many bytes (the last one cut short by the input's end).

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <sluice/io/npy.h>
#include <sluice/io/wire_format.h>
#include <sluice/base/error.h>

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  if (size < 1) return 0;
  // Limits from 64 bytes to 2 MiB reach the size checks on small inputs.
  const wire::DecodeLimits limits{.max_message_bytes = int64_t{64} << (data[0] % 16)};
  std::vector<wire::Bytes> frames;
  for (size_t at = 1; at + 2 <= size;) {
    size_t n = data[at] | (size_t{data[at + 1]} << 8);
    at += 2;
    n = std::min(n, size - at);
    frames.emplace_back(data + at, n);
    at += n;
  }
  try {
    wire::Parsed m = wire::parse(frames, limits, "fuzz");
    int64_t total = 0;
    for (wire::Bytes f : frames) total += static_cast<int64_t>(f.size());
    check(total <= limits.max_message_bytes);
    const bool packed = (m.header.flags & wire::kFlagPacked) != 0;
    check(!packed || m.header.kind == wire::Kind::Data);
    const size_t first_tensor = wire::first_tensor_frame(m.header.kind);
    // Tags: a block after the tensors (the last frame, or the end of a
    // packed one) exactly when flag bit 9 says so, on data and updates only.
    const bool tagged = (m.header.flags & wire::kFlagTags) != 0;
    check(tagged == !m.tags.empty() && (!tagged || wire::carries_tensors(m.header.kind)));
    check(!tagged || packed || m.tags.data() == frames.back().data());
    check(frames.size() == (packed ? 1
                            : wire::carries_tensors(m.header.kind)
                                ? first_tensor + 2 * m.tensors.size() + tagged
                            : m.header.kind == wire::Kind::Error ? 2
                                                                 : 1));
    // An update names its target in frame 1, 1 to kMaxTargetBytes bytes of
    // UTF-8, and carries at least one tensor; no other kind has a target.
    if (m.header.kind == wire::Kind::Update) {
      check(!m.target.empty() && m.target.size() <= wire::kMaxTargetBytes && !m.tensors.empty());
      check(m.target.data() == reinterpret_cast<const char*>(frames[1].data()));
      check(wire::valid_utf8(frames[1]));
    } else {
      check(m.target.empty());
    }
    // A control message is its header and its record, one frame, then a
    // heartbeat's probe reference when it offers shared memory and the
    // leases of a receiver that takes it; a barrier is its header and its
    // checkpoint number.
    const bool control = wire::is_control(m.header.kind);
    if (control || m.header.kind == wire::Kind::Barrier)
      check(frames[0].size() == wire::header_frame_bytes(m.header));
    check(m.header.kind == wire::Kind::Barrier || m.checkpoint == 0);
    const bool shared = (m.header.flags & wire::kFlagShared) != 0;
    check(m.leases.size() == (control && shared ? m.header.count : 0) && m.leases.size() <= wire::kMaxLeases);
    check(m.ring.has_value() == (control && shared && (m.header.flags & wire::kFlagRing) != 0));
    check(m.probe.has_value() ==
          (m.header.kind == wire::Kind::Heartbeat && (m.header.flags & wire::kFlagShareOffer) != 0));
    for (const wire::TensorView& t : m.tensors) {
      // The data, or a reference to it where the sender shares memory.
      check(t.shared.has_value() == (shared && !packed));
      check(static_cast<int64_t>(t.data.size()) == (t.shared ? int64_t{wire::kSharedRefBytes} : t.spec.bytes()));
      check(!t.shared || static_cast<int64_t>(t.shared->bytes) == t.spec.bytes());
      // What a writer makes of an accepted spec reads back as the same spec.
      std::string header = npy::header(t.spec);
      size_t header_bytes = 0;
      Spec again = npy::parse_header({reinterpret_cast<const uint8_t*>(header.data()), header.size()}, &header_bytes,
                                     "fuzz", npy::Accept::Version1);
      check(again == t.spec && header_bytes == header.size() && header.size() % 64 == 0);
    }
  } catch (const WireError&) {
  }
  // A batch (what a reliable receiver splits before parsing): its entries
  // lie within the frame, one after another, as many as its count says.
  if (!frames.empty()) {
    try {
      const std::vector<wire::Bytes> entries = wire::split_batch(frames[0], "fuzz");
      const wire::Header h = wire::read_header(frames[0], "fuzz", /*packed_ok=*/true);
      check(h.kind == wire::Kind::Batch && entries.size() == h.count);
      const uint8_t* at = frames[0].data() + wire::kHeaderBytes;
      for (wire::Bytes e : entries) {
        check(e.data() == at + wire::kBatchEntryHeaderBytes && e.size() >= wire::kHeaderBytes);
        at += wire::batch_entry_bytes(e.size());
      }
      check(at == frames[0].data() + frames[0].size());
    } catch (const WireError&) {}
  }
  return 0;
}
