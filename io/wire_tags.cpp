// A message's tags on the wire (kFlagTags; WIRE_FORMAT.md, "Tags"): the
// tags block that follows its tensors, written and read.

#include <cstring>

#include <fmt/format.h>

#include <sluice/io/detail/wire_error.h>
#include <sluice/io/npy.h>
#include <sluice/io/wire_format.h>

namespace sluice::wire {
namespace {

constexpr size_t kTagHeadBytes = 12;  // u16 key length, u8 type, u8 0, i64 offset

template <typename T>
void put(uint8_t*& out, T v) {
  for (size_t b = 0; b < sizeof(T); ++b) out[b] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b));
  out += sizeof(T);
}

void put_bytes(uint8_t*& out, const void* bytes, size_t size) {
  if (size != 0) std::memcpy(out, bytes, size);
  out += size;
}

// A tensor value travels as an .npy file: its header, then its data.
size_t value_bytes(const TagValue& v) {
  switch (v.index()) {
    case 0:
    case 1: return 8;
    case 2: return 4 + std::get<std::string>(v).size();
    default: {
      const Spec& spec = std::get<Tensor>(v).spec();
      return 4 + npy::header(spec).size() + static_cast<size_t>(spec.bytes());
    }
  }
}

// Reads the block in order; every size is checked against what is left.
class Reader {
 public:
  Reader(Bytes block, std::string_view where) : rest_(block), where_(where) {}
  template <typename T>
  T get(std::string_view what) {
    Bytes b = take(sizeof(T), what);
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{b[i]} << (8 * i);
    return static_cast<T>(v);
  }
  Bytes take(size_t size, std::string_view what) {
    if (size > rest_.size()) fail(what, fmt::format("{} bytes", size), fmt::format("{} left", rest_.size()));
    Bytes b = rest_.first(size);
    rest_ = rest_.subspan(size);
    return b;
  }
  [[noreturn]] void fail(std::string_view what, std::string_view expected, std::string_view found) const {
    wire_fail(fmt::format("{}: tags", where_), what, expected, found);
  }
  bool done() const { return rest_.empty(); }

 private:
  Bytes rest_;
  std::string_view where_;
};

}  // namespace

size_t tags_block_bytes(const Tags& tags) {
  size_t bytes = kTagsMagic.size() + 4;
  for (const Tag& t : tags.all()) bytes += kTagHeadBytes + t.key.size() + value_bytes(t.value);
  return bytes;
}

void write_tags_block(const Tags& tags, uint8_t* out) {
  put_bytes(out, kTagsMagic.data(), kTagsMagic.size());
  put(out, static_cast<uint32_t>(tags.size()));
  for (const Tag& t : tags.all()) {
    put(out, static_cast<uint16_t>(t.key.size()));
    put(out, static_cast<uint8_t>(t.value.index()));
    put(out, uint8_t{0});
    put(out, t.offset);
    put_bytes(out, t.key.data(), t.key.size());
    switch (t.value.index()) {
      case 0: put(out, std::get<int64_t>(t.value)); break;
      case 1: {
        uint64_t bits = 0;
        std::memcpy(&bits, &std::get<double>(t.value), 8);
        put(out, bits);
        break;
      }
      case 2: {
        const std::string& s = std::get<std::string>(t.value);
        put(out, static_cast<uint32_t>(s.size()));
        put_bytes(out, s.data(), s.size());
        break;
      }
      default: {
        const Tensor& x = std::get<Tensor>(t.value);
        const std::string npy = npy::header(x.spec());
        put(out, static_cast<uint32_t>(npy.size() + static_cast<size_t>(x.spec().bytes())));
        put_bytes(out, npy.data(), npy.size());
        put_bytes(out, x.host_data(), static_cast<size_t>(x.spec().bytes()));
      }
    }
  }
}

Tags read_tags_block(Bytes block, std::string_view where) {
  Reader r(block, where);
  if (Bytes magic = r.take(kTagsMagic.size(), "magic"); std::memcmp(magic.data(), kTagsMagic.data(), 4) != 0)
    r.fail("magic", "'TAGS'", "other bytes");
  const auto count = r.get<uint32_t>("count");
  if (count == 0 || count > kMaxTags)
    r.fail("count", fmt::format("1 to {}", kMaxTags), fmt::format("{}", count));
  Tags tags;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string at = fmt::format("tag {}", i);
    const auto key_bytes = r.get<uint16_t>(at);
    const auto type = r.get<uint8_t>(at);
    if (r.get<uint8_t>(at) != 0) r.fail(at, "a reserved byte of 0", "another");
    const auto offset = r.get<int64_t>(at);
    if (key_bytes == 0 || key_bytes > kMaxTagKeyBytes)
      r.fail(at, fmt::format("a key of 1 to {} bytes", kMaxTagKeyBytes), fmt::format("{} bytes", key_bytes));
    Bytes key_view = r.take(key_bytes, at);
    std::string key(reinterpret_cast<const char*>(key_view.data()), key_view.size());
    TagValue value;
    switch (static_cast<TagType>(type)) {
      case TagType::Integer: value = r.get<int64_t>(key); break;
      case TagType::Float: {
        const auto bits = r.get<uint64_t>(key);
        double d = 0;
        std::memcpy(&d, &bits, 8);
        value = d;
        break;
      }
      case TagType::String: {
        const auto size = r.get<uint32_t>(key);
        if (size > kMaxTagValueBytes)
          r.fail(key, fmt::format("a string of at most {} bytes", kMaxTagValueBytes),
                 fmt::format("{}", size));
        Bytes text = r.take(size, key);
        if (!valid_utf8(text)) r.fail(key, "UTF-8 text", "invalid bytes");
        value = std::string(reinterpret_cast<const char*>(text.data()), text.size());
        break;
      }
      case TagType::Tensor: {
        const auto size = r.get<uint32_t>(key);
        Bytes file = r.take(size, key);
        size_t header_bytes = 0;
        const Spec spec = npy::parse_header(file, &header_bytes, fmt::format("{}: tag '{}'", where, key),
                                            npy::Accept::Version1);
        if (spec.bytes() > static_cast<int64_t>(kMaxTagValueBytes) ||
            static_cast<uint64_t>(spec.bytes()) != file.size() - header_bytes)
          r.fail(key,
                 fmt::format("a tensor of at most {} bytes, its data filling the value", kMaxTagValueBytes),
                 fmt::format("{} in {} bytes of data", spec, file.size() - header_bytes));
        value = tensor_from_bytes(spec, file.data() + header_bytes);
        break;
      }
      default: r.fail(key, "a type of 0 to 3 (integer, float, string, tensor)", fmt::format("{}", type));
    }
    if (tags.find(key, offset)) r.fail(key, "one value per key and offset", fmt::format("two at {}", offset));
    try {
      tags.set(std::move(key), std::move(value), offset);
    } catch (const ValueError& e) { wire_fail(fmt::format("{}: tags", where), e.what()); }
  }
  if (!r.done()) r.fail("block", "nothing after the last tag", "more bytes");
  return tags;
}

}  // namespace sluice::wire
