#include <sluice/io/npy.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

#include <sluice/io/detail/wire_error.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

struct DescrEntry {
  DType dtype;
  const char* descr;
};
constexpr DescrEntry kDescrs[] = {
    {DType::Pred, "|b1"}, {DType::S8, "|i1"},  {DType::S16, "<i2"}, {DType::S32, "<i4"},
    {DType::S64, "<i8"},  {DType::U8, "|u1"},  {DType::U16, "<u2"}, {DType::U32, "<u4"},
    {DType::U64, "<u8"},  {DType::F16, "<f2"}, {DType::BF16, "<V2"}, {DType::F32, "<f4"},
    {DType::F64, "<f8"},  {DType::C64, "<c8"}, {DType::C128, "<c16"},
};

// A tiny parser for the one dict literal numpy writes; it accepts the keys
// in any order and the whitespace numpy's writers have used over the years.
struct DictParser {
  std::string_view s;
  size_t i = 0;
  std::string_view where;

  void skip_space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  }
  bool eat(char c) {
    skip_space();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) wire_fail(where, "header dict", fmt::format("'{}' at offset {}", c, i), "other text");
  }
  std::string_view quoted() {
    skip_space();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      wire_fail(where, "header dict", fmt::format("a quoted string at offset {}", i), "other text");
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) wire_fail(where, "header dict: unterminated string");
    return s.substr(start, i++ - start);
  }
  std::string_view word() {
    skip_space();
    size_t start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(start, i - start);
  }
  std::vector<int64_t> shape() {
    expect('(');
    std::vector<int64_t> dims;
    while (!eat(')')) {
      skip_space();
      int64_t d = -1;
      auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), d);
      if (ec != std::errc() || d < 0)
        wire_fail(where, "shape", fmt::format("a non-negative dimension at offset {}", i), "other text");
      i = static_cast<size_t>(p - s.data());
      dims.push_back(d);
      if (dims.size() > static_cast<size_t>(kMaxRank))
        wire_fail(where, "shape", fmt::format("rank <= {}", kMaxRank), "more");
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }
};

}  // namespace

std::string descr(DType t) {
  for (const auto& e : kDescrs)
    if (e.dtype == t) return e.descr;
  wire_fail("npy", "no descr for dtype");
}

DType dtype_from_descr(std::string_view d, std::string_view where) {
  for (const auto& e : kDescrs)
    if (d == e.descr) return e.dtype;
  // Single-byte types carry no byte order: numpy writes '|', but '<' and '='
  // read the same; numpy writes a void type (bf16's '<V2') as '|V2'.
  if (d.size() == 3 && (d[0] == '<' || d[0] == '=' || d[0] == '|')) {
    std::string_view code = d.substr(1);
    if (code == "b1") return DType::Pred;
    if (code == "i1") return DType::S8;
    if (code == "u1") return DType::U8;
    if (code == "V2") return DType::BF16;
  }
  wire_fail(where, "descr: expected one of '<f4', '<f8', '<i4', ... (little-endian numeric), found '" + std::string(d) + "'");
}

std::string header(const Spec& spec) {
  std::string dict = "{'descr': '" + descr(spec.dtype) + "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < spec.shape.rank(); ++i) {
    fmt::format_to(std::back_inserter(dict), "{}{}", spec.shape.dim(i),
                   spec.shape.rank() == 1 ? "," : (i + 1 < spec.shape.rank() ? ", " : ""));
  }
  dict += "), }";
  size_t prefix = kMagicBytes + 2 + 2;  // magic, version, header length
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicBytes);
  out += '\x01';
  out += '\x00';
  uint16_t len = static_cast<uint16_t>(dict.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  return out + dict;
}

Spec parse_header(std::span<const uint8_t> bytes, size_t* header_bytes, std::string_view where, Accept accept) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0)
    wire_fail(where, "", "the .npy magic \\x93NUMPY",
         bytes.size() < kMagicBytes ? fmt::format("a frame of {} bytes", bytes.size()) : "other bytes");
  uint8_t major = bytes[6], minor = bytes[7];
  size_t len = 0, prefix = 0;
  if (major == 1 && minor == 0) {
    len = bytes[8] | (size_t{bytes[9]} << 8);
    prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0 && accept == Accept::AnyVersion && bytes.size() >= 12) {
    len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    prefix = 12;
  } else {
    wire_fail(where, "", fmt::format(".npy version 1.0{}", accept == Accept::AnyVersion ? ", 2.0 or 3.0" : ""),
         fmt::format("{}.{}", major, minor));
  }
  if (len > bytes.size() - prefix)
    wire_fail(where, "header", fmt::format("the {} bytes the header claims", len), bytes.size() - prefix);
  DictParser p{std::string_view(reinterpret_cast<const char*>(bytes.data() + prefix), len), 0, where};
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> dims;
  std::optional<bool> fortran;
  p.expect('{');
  while (!p.eat('}')) {
    std::string_view key = p.quoted();
    p.expect(':');
    if (key == "descr" && !dtype) {
      dtype = dtype_from_descr(p.quoted(), where);
    } else if (key == "fortran_order" && !fortran) {
      std::string_view w = p.word();
      if (w != "False" && w != "True") wire_fail(where, "fortran_order: expected False, found '" + std::string(w) + "'");
      fortran = w == "True";
    } else if (key == "shape" && !dims) {
      dims = p.shape();
    } else {
      wire_fail(where, "header dict: expected the keys descr, fortran_order and shape once each, found '" +
                      std::string(key) + "'" + (key == "descr" || key == "fortran_order" || key == "shape" ? " again" : ""));
    }
    if (!p.eat(',')) {
      p.expect('}');
      break;
    }
  }
  p.skip_space();
  if (p.i != p.s.size()) wire_fail(where, "header: expected only padding after the dict, found other bytes");
  if (!dtype || !dims || !fortran) wire_fail(where, "header dict: expected the keys descr, fortran_order and shape");
  if (*fortran) wire_fail(where, "fortran_order: expected False (C order), found True");
  // The size in bytes must be representable: a header may claim anything.
  int64_t size = dtype_size(*dtype);
  for (int64_t d : *dims)
    if (__builtin_mul_overflow(size, d, &size))
      wire_fail(where, "shape: expected a size in bytes below 2^63, found one that overflows");
  *header_bytes = prefix + len;
  try {
    return Spec{*dtype, Shape(*dims)};
  } catch (const Error& e) {
    wire_fail(where, e.what());
  }
}

}  // namespace sluice::npy
