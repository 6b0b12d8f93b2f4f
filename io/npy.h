#pragma once
// The .npy format: the header that precedes a tensor's raw little-endian
// C-order data. Each tensor on the wire is a version 1.0 header frame
// followed by its data frame, so the two together are a .npy file; the same
// code reads and writes .npy files, so files can feed a pipeline.
//
// Thread safety: everything here is a pure function of its arguments (save
// and load touch only the named file).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <sluice/ops/shape.h>

namespace sluice {
class Tensor;
}

namespace sluice::npy {

// The header bytes: magic, version 1.0, length, the dict
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, space-padded
// and newline-terminated so its length is a multiple of 64.
std::string header(const Spec& spec);

// Which header versions a reader takes: the wire carries 1.0 only; files
// may be 2.0 or 3.0 (numpy writes those for headers above 64 KiB).
enum class Accept : uint8_t { Version1, AnyVersion };

// Parses a header strictly: magic, version, a known little-endian descr,
// fortran_order False, a shape of rank <= 16 with dims >= 0 whose size in
// bytes fits in int64, nothing but padding after the dict. Throws WireError
// naming `where` and what was wrong. Returns the spec and sets
// *header_bytes to the header's length (the data starts there).
Spec parse_header(std::span<const uint8_t> bytes, size_t* header_bytes, std::string_view where = "npy",
                  Accept accept = Accept::AnyVersion);

// numpy's descr of a dtype ('<f4', '|b1', '<c8', ...). bf16, which numpy
// lacks, travels as '<V2': two raw bytes numpy reads as void (view them as
// uint16, or as ml_dtypes.bfloat16 where that is installed).
std::string descr(DType t);
DType dtype_from_descr(std::string_view descr, std::string_view where);

// Files: a tensor (copied to the host) to `path`, and back to a host tensor
// of at most max_bytes of data. WireError when the file cannot be written
// or read, or is not a valid .npy file.
void save(const std::string& path, const Tensor& t);
Tensor load(const std::string& path, int64_t max_bytes = int64_t{1} << 34);

}  // namespace sluice::npy
