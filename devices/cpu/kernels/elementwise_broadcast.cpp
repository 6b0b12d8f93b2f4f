// Broadcast loads on the host: the gather over a broadcast map.

#include <sluice/devices/cpu/kernels/elementwise_broadcast.h>

#include <algorithm>
#include <cstring>

namespace sluice::cpu {

namespace {

template <int Bytes>
struct Elem { unsigned char b[Bytes]; };

// Copies `len` elements from src stepping `stride` elements.
template <int Bytes>
void strided_copy(unsigned char* dst, const unsigned char* src, int64_t stride, int64_t len) {
  using E = Elem<Bytes>;
  auto* d = reinterpret_cast<E*>(dst);
  auto* s = reinterpret_cast<const E*>(src);
  if (stride == 0) {
    std::fill(d, d + len, *s);
  } else if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(len) * Bytes);
  } else {
    for (int64_t i = 0; i < len; ++i) d[i] = s[i * stride];
  }
}

void copy_run(unsigned char* dst, const unsigned char* src, int elem_bytes, int64_t stride, int64_t len) {
  switch (elem_bytes) {
    case 1: return strided_copy<1>(dst, src, stride, len);
    case 2: return strided_copy<2>(dst, src, stride, len);
    case 4: return strided_copy<4>(dst, src, stride, len);
    case 8: return strided_copy<8>(dst, src, stride, len);
    default: return strided_copy<16>(dst, src, stride, len);
  }
}

}  // namespace

void broadcast_gather(const BroadcastMap& map, const void* src, int elem_bytes, int64_t start, int64_t len,
                      void* dst) {
  const size_t rank = map.dims.size();
  int64_t index[16];  // output index along each simplified axis (rank <= 16)
  int64_t offset = 0;
  int64_t rest = start;
  for (size_t j = rank; j-- > 0;) {
    index[j] = rest % map.dims[j];
    rest /= map.dims[j];
    offset += index[j] * map.strides[j];
  }
  auto* out = static_cast<unsigned char*>(dst);
  auto* in = static_cast<const unsigned char*>(src);
  const size_t inner = rank - 1;
  while (len > 0) {
    int64_t run = std::min(map.dims[inner] - index[inner], len);
    copy_run(out, in + offset * elem_bytes, elem_bytes, map.strides[inner], run);
    out += run * elem_bytes;
    len -= run;
    offset += run * map.strides[inner];
    index[inner] += run;
    // Carry into the outer axes.
    for (size_t j = inner; j > 0 && index[j] == map.dims[j]; --j) {
      offset -= map.dims[j] * map.strides[j];
      index[j] = 0;
      ++index[j - 1];
      offset += map.strides[j - 1];
    }
  }
}

}  // namespace sluice::cpu
