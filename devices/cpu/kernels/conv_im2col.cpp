// Conv by im2col + gemm, for every case and floating dtype (conv.h).
//
// For each (output batch, group) item, the input windows are copied into a
// column matrix col[c][window position][output position] (zeros where the
// window reads padding or the holes of input dilation), and the item's
// output rows are one gemm: y[group_out][outputs] = k[group_out][group_in *
// window] x col. A 1x1 window with stride 1 and no padding reads the input
// as it is. Items are spread across oneTBB's workers, each gemm on the
// worker's thread (and OpenBLAS's own threads, unless the program asked for
// one: ClientOptions::blas_threads in devices/backend.h).

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <memory>
#include <type_traits>

#include <sluice/devices/cpu/kernels/conv.h>
#include <sluice/devices/cpu/kernels/lapack.h>
#include <sluice/ops/dtype.h>

namespace sluice::cpu {
namespace {

// Whether the column matrix would equal the input: a 1x1 window read at
// every input element.
bool reads_input_as_is(const ConvGeometry& g) {
  for (int i = 0; i < g.spatial(); ++i) {
    const auto s = static_cast<size_t>(i);
    if (g.kernel[s] != 1 || g.strides[s] != 1 || g.low[s] != 0 || g.high[s] != 0 || g.input_dilation[s] != 1)
      return false;
  }
  return true;
}

// Where output position q at window offset w reads on one spatial axis:
// the input index, or -1 for padding and dilation holes.
int64_t source(const ConvGeometry& g, size_t axis, int64_t q, int64_t w) {
  const int64_t p = q * g.strides[axis] + w * g.kernel_dilation[axis] - g.low[axis];
  const int64_t d = g.input_dilation[axis];
  if (p < 0 || p % d != 0) return -1;
  const int64_t i = p / d;
  return i < g.input[axis] ? i : -1;
}

// col[(c * kernel_size + w)][q] for one item's group_in channels at x.
template <typename T>
void im2col(const ConvGeometry& g, const T* x, T* col) {
  const int d = g.spatial();
  if (d == 0) {  // no window: one value per channel
    std::copy(x, x + g.group_in, col);
    return;
  }
  const auto last = static_cast<size_t>(d - 1);
  const int64_t width = g.output[last];
  // Row strides of the input's spatial axes.
  std::vector<int64_t> in_stride(static_cast<size_t>(d), 1);
  for (int i = d - 2; i >= 0; --i)
    in_stride[static_cast<size_t>(i)] =
        in_stride[static_cast<size_t>(i) + 1] * g.input[static_cast<size_t>(i) + 1];
  std::vector<int64_t> w(static_cast<size_t>(d)), q(static_cast<size_t>(d));
  std::vector<int64_t> inner(static_cast<size_t>(width));
  for (int64_t c = 0; c < g.group_in; ++c) {
    const T* xc = x + c * g.input_size;
    std::fill(w.begin(), w.end(), 0);
    for (int64_t wi = 0; wi < g.kernel_size; ++wi) {
      // Input index along the last axis for each output column, once per window offset.
      for (int64_t j = 0; j < width; ++j) inner[static_cast<size_t>(j)] = source(g, last, j, w[last]);
      T* row = col + (c * g.kernel_size + wi) * g.output_size;
      std::fill(q.begin(), q.end(), 0);
      for (int64_t line = 0; line < g.output_size / width; ++line) {
        int64_t offset = 0;
        bool inside = true;
        for (size_t a = 0; a < last && inside; ++a) {
          const int64_t i = source(g, a, q[a], w[a]);
          inside = i >= 0;
          offset += i * in_stride[a];
        }
        T* out = row + line * width;
        if (!inside) {
          std::fill(out, out + width, T(0));
        } else {
          const T* xl = xc + offset;
          for (int64_t j = 0; j < width; ++j) {
            const int64_t i = inner[static_cast<size_t>(j)];
            out[j] = i >= 0 ? xl[i] : T(0);
          }
        }
        for (int a = d - 2; a >= 0; --a) {  // next line: odometer over the outer output axes
          const auto s = static_cast<size_t>(a);
          if (++q[s] < g.output[s]) break;
          q[s] = 0;
        }
      }
      for (int a = d - 1; a >= 0; --a) {  // next window offset
        const auto s = static_cast<size_t>(a);
        if (++w[s] < g.kernel[s]) break;
        w[s] = 0;
      }
    }
  }
}

// One (output batch b, group) item.
template <typename T>
void conv_item(const ConvGeometry& g, const T* x, const T* k, T* y, int64_t item, bool as_is,
               std::unique_ptr<T[]>& col) {
  const int64_t b = item / g.groups, group = item % g.groups;
  // Feature groups read a block of channels of batch b; batch groups read
  // all channels of batch `group * out_batch + b`.
  const int64_t n = g.batch_groups > 1 ? group * g.out_batch + b : b;
  const int64_t c0 = g.batch_groups > 1 ? 0 : group * g.group_in;
  const T* xi = x + (n * g.channels + c0) * g.input_size;
  const int64_t depth = g.group_in * g.kernel_size;
  const T* cols = xi;
  if (!as_is) {
    if (!col) col.reset(new T[static_cast<size_t>(depth * g.output_size)]);
    im2col(g, xi, col.get());
    cols = col.get();
  }
  // y [group_out][output] = kernel [group_out][depth] cols [depth][output]
  const auto rows = static_cast<blasint>(g.group_out), columns = static_cast<blasint>(g.output_size);
  const auto inner = static_cast<blasint>(depth);
  lapack::gemm({.m = rows, .n = columns, .k = inner, .lda = inner, .ldb = columns}, k + group * g.group_out * depth, cols,
               y + (b * g.out_channels + group * g.group_out) * g.output_size);
}

}  // namespace

template <typename T>
void conv_im2col(const ConvGeometry& g, const T* x, const T* k, T* y) {
  const bool as_is = reads_input_as_is(g);
  const int64_t items = g.out_batch * g.groups;
  const int64_t macs = conv_macs(g);
  if (macs < kConvSerialMacs || items == 1) {
    std::unique_ptr<T[]> col;
    for (int64_t i = 0; i < items; ++i) conv_item(g, x, k, y, i, as_is, col);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kConvSerialMacs / std::max<int64_t>(1, macs / items));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, grain), [&](const tbb::blocked_range<int64_t>& r) {
    std::unique_ptr<T[]> col;  // one column matrix per task, reused across its items
    for (int64_t i = r.begin(); i != r.end(); ++i) conv_item(g, x, k, y, i, as_is, col);
  });
}

template void conv_im2col<float>(const ConvGeometry&, const float*, const float*, float*);
template void conv_im2col<double>(const ConvGeometry&, const double*, const double*, double*);
template void conv_im2col<complex64>(const ConvGeometry&, const complex64*, const complex64*, complex64*);
template void conv_im2col<complex128>(const ConvGeometry&, const complex128*, const complex128*, complex128*);

}  // namespace sluice::cpu
