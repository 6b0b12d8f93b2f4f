#include <sluice/devices/cpu/kernels/shape_box.h>

#include <algorithm>
#include <cstring>
#include <string>

#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

// Shape kernels move bytes: one instantiation per element size, not per dtype.
struct Bytes16 {
  uint64_t lo, hi;
};

// Rows longer than this are cut into segments, so that a box of a few long
// rows (a reshape, a concatenation along axis 0) still splits across cores.
constexpr int64_t kSegment = kGrainElements;
// Transposed boxes are copied in kTile x kTile tiles. 16 measured faster
// than 32 here (f32 and f64, 1000^2 to 4096^2): power-of-two strides put all
// the lines of a tile's strided side into one cache set, and fewer fit.
constexpr int64_t kTile = 16;

// Walks the outer axes of a box in row-major order, keeping both offsets.
class Walker {
 public:
  // The axes of `box` other than `skip_a` and `skip_b`.
  Walker(const Box& box, int skip_a, int skip_b) {
    for (int k = 0; k < box.rank; ++k) {
      if (k == skip_a || k == skip_b) continue;
      dims_[rank_] = box.dims[k];
      out_strides_[rank_] = box.out_strides[k];
      in_strides_[rank_] = box.in_strides[k];
      ++rank_;
    }
  }

  int64_t count() const {
    int64_t n = 1;
    for (int k = 0; k < rank_; ++k) n *= dims_[k];
    return n;
  }

  void seek(int64_t linear) {
    out_ = in_ = 0;
    for (int k = rank_; k-- > 0;) {
      index_[k] = linear % dims_[k];
      linear /= dims_[k];
      out_ += index_[k] * out_strides_[k];
      in_ += index_[k] * in_strides_[k];
    }
  }

  void next() {
    for (int k = rank_; k-- > 0;) {
      out_ += out_strides_[k];
      in_ += in_strides_[k];
      if (++index_[k] < dims_[k]) return;
      out_ -= out_strides_[k] * dims_[k];
      in_ -= in_strides_[k] * dims_[k];
      index_[k] = 0;
    }
  }

  int64_t out() const { return out_; }
  int64_t in() const { return in_; }

 private:
  int rank_ = 0;
  std::array<int64_t, kMaxRank> dims_{}, out_strides_{}, in_strides_{}, index_{};
  int64_t out_ = 0, in_ = 0;
};

template <typename T>
void copy_line(const T* in, T* out, int64_t n, int64_t out_stride, int64_t in_stride) {
  if (out_stride == 1 && in_stride == 1) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(T));
  } else if (out_stride == 1 && in_stride == -1) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[-i];  // a reversed row: vectorizes as a shuffle
  } else if (in_stride == 0) {
    const T v = *in;
    if (out_stride == 1) {
      std::fill_n(out, n, v);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i * out_stride] = v;
    }
  } else if (out_stride == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i * in_stride];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i * out_stride] = in[i * in_stride];
  }
}

// The last axis is the row; rows (or segments of long rows) are the items.
template <typename T>
void copy_rows(const T* in, T* out, const Box& box) {
  const int inner = box.rank - 1;
  const int64_t n = box.dims[inner];
  const int64_t out_stride = box.out_strides[inner], in_stride = box.in_strides[inner];
  const int64_t segment = std::min(n, kSegment);
  const int64_t segments = (n + segment - 1) / segment;
  const Walker rows(box, inner, -1);
  split_work(rows.count() * segments, segment, [&](int64_t begin, int64_t end) {
    Walker w = rows;
    w.seek(begin / segments);
    int64_t s = begin % segments;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t first = s * segment;
      copy_line(in + w.in() + first * in_stride, out + w.out() + first * out_stride,
                std::min(segment, n - first), out_stride, in_stride);
      if (++s == segments) {
        s = 0;
        w.next();
      }
    }
  });
}

// One tile: out[j][i] = in[i][j], out's rows contiguous along i, in's
// along j. Kept out of the band loop so that its pointers stay in registers.
template <typename T>
[[gnu::noinline]] void copy_tile(const T* in, T* out, int64_t ni, int64_t nj, int64_t in_stride,
                                 int64_t out_stride) {
  for (int64_t j = 0; j < nj; ++j) {
    T* d = out + j * out_stride;
    const T* s = in + j;
    for (int64_t i = 0; i < ni; ++i) d[i] = s[i * in_stride];
  }
}

// The output is contiguous along the last axis (a), the input along axis
// k (b): copy kTile x kTile tiles of those two axes, so that the lines one
// side reads or writes with a stride stay in cache while the other side
// walks them. Tiles are grouped in blocks of about 1 KiB by 1 KiB, the
// items, so that the pages both sides touch in a row stay in the TLB.
template <typename T>
void copy_tiles(const T* in, T* out, const Box& box, int k) {
  const int a = box.rank - 1, b = k;
  const int64_t na = box.dims[a], nb = box.dims[b];
  const int64_t a_in_stride = box.in_strides[a], b_out_stride = box.out_strides[b];
  constexpr int64_t block = std::max<int64_t>(kTile, 1024 / sizeof(T));
  const int64_t a_blocks = (na + block - 1) / block;
  const int64_t blocks = a_blocks * ((nb + block - 1) / block);
  const Walker outer(box, a, b);
  split_work(outer.count() * blocks, block * block, [&](int64_t begin, int64_t end) {
    Walker w = outer;
    w.seek(begin / blocks);
    int64_t blk = begin % blocks;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t a0 = blk % a_blocks * block, a1 = std::min(a0 + block, na);
      const int64_t b0 = blk / a_blocks * block, b1 = std::min(b0 + block, nb);
      const T* src = in + w.in();
      T* dst = out + w.out();
      for (int64_t j = b0; j < b1; j += kTile) {
        for (int64_t i = a0; i < a1; i += kTile) {
          copy_tile(src + i * a_in_stride + j, dst + j * b_out_stride + i, std::min(kTile, a1 - i),
                    std::min(kTile, b1 - j), a_in_stride, b_out_stride);
        }
      }
      if (++blk == blocks) {
        blk = 0;
        w.next();
      }
    }
  });
}

// The axis along which the input is contiguous when the output's last axis
// is not: the box is a transpose worth tiling. -1 otherwise.
int tiled_axis(const Box& box) {
  const int inner = box.rank - 1;
  if (box.out_strides[inner] != 1 || box.in_strides[inner] == 1 || box.in_strides[inner] == 0) return -1;
  for (int k = 0; k + 1 < box.rank; ++k) {
    if (box.in_strides[k] == 1) return k;
  }
  return -1;
}

template <typename T>
void copy_box_of(const void* in, void* out, Box box) {
  if (!normalize_box(box)) return;
  const auto* src = static_cast<const T*>(in);
  auto* dst = static_cast<T*>(out);
  if (box.rank == 0) {
    *dst = *src;
  } else if (const int k = tiled_axis(box); k >= 0) {
    copy_tiles(src, dst, box, k);
  } else {
    copy_rows(src, dst, box);
  }
}

}  // namespace

void copy_box(size_t elem_size, const void* in, void* out, const Box& box) {
  switch (elem_size) {
    case 1: return copy_box_of<uint8_t>(in, out, box);
    case 2: return copy_box_of<uint16_t>(in, out, box);
    case 4: return copy_box_of<uint32_t>(in, out, box);
    case 8: return copy_box_of<uint64_t>(in, out, box);
    case 16: return copy_box_of<Bytes16>(in, out, box);
  }
  throw InternalError(error_message("copy_box", "element size", "1, 2, 4, 8 or 16 bytes", elem_size));
}

}  // namespace sluice::cpu
