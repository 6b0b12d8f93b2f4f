#include "io/npy.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

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

[[noreturn]] void fail(std::string_view where, const std::string& what) {
  throw WireError(std::string(where) + ": " + what);
}

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
    if (!eat(c)) fail(where, std::string("header dict: expected '") + c + "' at offset " + std::to_string(i));
  }
  std::string_view quoted() {
    skip_space();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail(where, "header dict: expected a quoted string at offset " + std::to_string(i));
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail(where, "header dict: unterminated string");
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
      if (ec != std::errc() || d < 0) fail(where, "shape: expected a non-negative dimension at offset " + std::to_string(i));
      i = static_cast<size_t>(p - s.data());
      dims.push_back(d);
      if (dims.size() > static_cast<size_t>(kMaxRank))
        fail(where, "shape: expected rank <= " + std::to_string(kMaxRank) + ", found more");
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
  fail("npy", "no descr for dtype");
}

DType dtype_from_descr(std::string_view d, std::string_view where) {
  for (const auto& e : kDescrs)
    if (d == e.descr) return e.dtype;
  // Single-byte types carry no byte order; numpy writes '|' but '<' and '=' read the same.
  if (d.size() == 3 && (d[0] == '<' || d[0] == '=')) {
    std::string_view code = d.substr(1);
    if (code == "b1") return DType::Pred;
    if (code == "i1") return DType::S8;
    if (code == "u1") return DType::U8;
  }
  fail(where, "descr: expected one of '<f4', '<f8', '<i4', ... (little-endian numeric), found '" + std::string(d) + "'");
}

std::string header(const Spec& spec) {
  std::string dict = "{'descr': '" + descr(spec.dtype) + "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < spec.shape.rank(); ++i) {
    dict += std::to_string(spec.shape.dim(i));
    dict += spec.shape.rank() == 1 ? "," : (i + 1 < spec.shape.rank() ? ", " : "");
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

Spec parse_header(std::span<const uint8_t> bytes, size_t* header_bytes, std::string_view where) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0)
    fail(where, "expected the .npy magic \\x93NUMPY, found " +
                    (bytes.size() < kMagicBytes ? std::string("a frame of ") + std::to_string(bytes.size()) + " bytes"
                                                : std::string("other bytes")));
  uint8_t major = bytes[6], minor = bytes[7];
  size_t len, prefix;
  if (major == 1 && minor == 0) {
    len = bytes[8] | (size_t{bytes[9]} << 8);
    prefix = 10;
  } else if (major == 2 && minor == 0 && bytes.size() >= 12) {
    len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    prefix = 12;
  } else {
    fail(where, "expected .npy version 1.0, found " + std::to_string(major) + "." + std::to_string(minor));
  }
  if (len > bytes.size() - prefix)
    fail(where, "header claims " + std::to_string(len) + " bytes, found " + std::to_string(bytes.size() - prefix));
  DictParser p{std::string_view(reinterpret_cast<const char*>(bytes.data() + prefix), len), 0, where};
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> dims;
  bool fortran = false, seen_fortran = false;
  p.expect('{');
  while (!p.eat('}')) {
    std::string_view key = p.quoted();
    p.expect(':');
    if (key == "descr") {
      dtype = dtype_from_descr(p.quoted(), where);
    } else if (key == "fortran_order") {
      std::string_view w = p.word();
      if (w != "False" && w != "True") fail(where, "fortran_order: expected False, found '" + std::string(w) + "'");
      fortran = w == "True";
      seen_fortran = true;
    } else if (key == "shape") {
      dims = p.shape();
    } else {
      fail(where, "header dict: unexpected key '" + std::string(key) + "'");
    }
    if (!p.eat(',')) {
      p.expect('}');
      break;
    }
  }
  if (!dtype || !dims || !seen_fortran) fail(where, "header dict: expected the keys descr, fortran_order and shape");
  if (fortran) fail(where, "fortran_order: expected False (C order), found True");
  *header_bytes = prefix + len;
  try {
    return Spec{*dtype, Shape(*dims)};
  } catch (const Error& e) {
    fail(where, e.what());
  }
}

void save(const std::string& path, const Tensor& t) {
  Tensor h = t.to_host();
  std::ofstream f(path, std::ios::binary);
  if (!f) throw WireError("npy::save: cannot open '" + path + "' for writing");
  std::string head = header(h.spec());
  f.write(head.data(), static_cast<std::streamsize>(head.size()));
  f.write(static_cast<const char*>(h.host_data()), static_cast<std::streamsize>(h.spec().bytes()));
  if (!f) throw WireError("npy::save: writing '" + path + "' failed");
}

Tensor load(const std::string& path, int64_t max_bytes) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw WireError("npy::load: cannot open '" + path + "'");
  int64_t size = f.tellg();
  f.seekg(0);
  std::vector<uint8_t> head(static_cast<size_t>(std::min<int64_t>(size, 65536 + 12)));
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  size_t header_bytes = 0;
  Spec spec = parse_header(head, &header_bytes, "npy::load '" + path + "'");
  // The file's real size bounds what is read, never the header's claim.
  if (spec.bytes() > max_bytes)
    throw WireError("npy::load '" + path + "': " + spec.str() + " is " + std::to_string(spec.bytes()) +
                    " bytes, above the limit of " + std::to_string(max_bytes));
  if (size - static_cast<int64_t>(header_bytes) != spec.bytes())
    throw WireError("npy::load '" + path + "': expected " + std::to_string(spec.bytes()) + " data bytes for " +
                    spec.str() + ", found " + std::to_string(size - static_cast<int64_t>(header_bytes)));
  Tensor t = zeros(spec);
  f.seekg(static_cast<std::streamoff>(header_bytes));
  f.read(static_cast<char*>(const_cast<void*>(t.host_data())), static_cast<std::streamsize>(spec.bytes()));
  if (!f && spec.bytes() > 0) throw WireError("npy::load '" + path + "': reading the data failed");
  return t;
}

}  // namespace sluice::npy
