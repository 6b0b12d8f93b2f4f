// .npy files: save and load through the header code of npy.cpp.

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/io/npy.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::npy {

void save(const std::string& path, const Tensor& t) {
  Tensor h = t.to_host();
  std::ofstream f(path, std::ios::binary);
  if (!f) throw WireError(error_message("npy::save '" + path + "'", "cannot open for writing", "", ""));
  std::string head = header(h.spec());
  f.write(head.data(), static_cast<std::streamsize>(head.size()));
  f.write(static_cast<const char*>(h.host_data()), static_cast<std::streamsize>(h.spec().bytes()));
  f.close();
  if (!f) throw WireError(error_message("npy::save '" + path + "'", "writing failed", "", ""));
}

Tensor load(const std::string& path, int64_t max_bytes) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  std::string where = "npy::load '" + path + "'";
  if (!f) throw WireError(error_message(where, "cannot open", "", ""));
  const int64_t size = f.tellg();
  if (size < 0) throw WireError(error_message(where, "cannot tell the file's size", "", ""));
  f.seekg(0);
  // Enough for any version 1.0 header; a longer 2.0 header fails to parse.
  constexpr int64_t kHeaderLimit = 65536 + 12;
  std::vector<uint8_t> head(static_cast<size_t>(std::min(size, kHeaderLimit)));
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  size_t header_bytes = 0;
  Spec spec = parse_header(head, &header_bytes, where, Accept::AnyVersion);
  // The file's real size bounds what is read, never the header's claim.
  if (spec.bytes() > max_bytes)
    throw WireError(error_message(where, "size", fmt::format("at most {} bytes", max_bytes),
                                  fmt::format("{} with {} bytes, above the limit", spec, spec.bytes())));
  const int64_t data_bytes = size - static_cast<int64_t>(header_bytes);
  if (data_bytes != spec.bytes())
    throw WireError(
        error_message(where, "data", fmt::format("{} bytes for {}", spec.bytes(), spec), data_bytes));
  // Read straight into the tensor's memory (operator new aligns it for any dtype).
  std::shared_ptr<char[]> data(new char[static_cast<size_t>(std::max<int64_t>(data_bytes, 1))]);
  f.seekg(static_cast<std::streamoff>(header_bytes));
  f.read(data.get(), static_cast<std::streamsize>(data_bytes));
  if (!f) throw WireError(error_message(where, "reading the data failed", "", ""));
  return wrap_host(spec, data.get(), data);
}

}  // namespace sluice::npy
