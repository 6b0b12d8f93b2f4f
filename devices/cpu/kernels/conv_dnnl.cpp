// Conv through oneDNN, f32 (conv.h).
//
// Threads: each call on one OpenMP thread (one_omp_thread.h); the batch is
// cut into one part per worker and the parts are spread across oneTBB's
// workers, as dot spreads single-threaded gemm calls.
//
// Primitives: made once per (geometry, part size), with the reorders between
// sluice's plain layout and the blocked layout oneDNN's fast kernels choose,
// and kept in a process-wide cache: a compiled plan runs many times on a
// stream. Blocked copies and oneDNN's scratchpad live in per-thread buffers
// reused across runs (fresh large allocations cost more than the work).

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string_view>

#include <sluice/devices/cpu/kernels/conv.h>
#include <sluice/devices/cpu/kernels/one_omp_thread.h>

namespace sluice::cpu {
namespace {

using dnnl::memory;

struct Primitive {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  memory::desc src, weights, dst;  // sluice's plain layouts
  // From and to those layouts, where oneDNN chose another.
  std::optional<dnnl::reorder> to_src, to_weights, from_dst;
};

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// oneDNN's kernels cover 1 to 3 spatial axes, without input dilation, batch
// groups or negative padding.
bool eligible(const ConvGeometry& g) {
  if (g.spatial() < 1 || g.spatial() > 3 || g.batch_groups != 1 || g.in_batch == 0) return false;
  for (size_t i = 0; i < g.input.size(); ++i) {
    if (g.input_dilation[i] != 1 || g.low[i] < 0 || g.high[i] < 0) return false;
  }
  return true;
}

memory::dims with_leading(std::initializer_list<int64_t> leading, const std::vector<int64_t>& spatial) {
  memory::dims d(leading);
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

// Null where oneDNN has no optimised kernel for this geometry (its
// reference kernels are slower than im2col).
std::shared_ptr<const Primitive> make_primitive(const ConvGeometry& g, int64_t batch) {
  using tag = memory::format_tag;
  const int d = g.spatial();
  // sluice's plain layouts, by number of spatial axes.
  constexpr tag kData[] = {tag::ncw, tag::nchw, tag::ncdhw};
  constexpr tag kWeights[] = {tag::oiw, tag::oihw, tag::oidhw};
  constexpr tag kGroupedWeights[] = {tag::goiw, tag::goihw, tag::goidhw};
  const bool grouped = g.groups > 1;
  const tag data_tag = kData[d - 1], weights_tag = grouped ? kGroupedWeights[d - 1] : kWeights[d - 1];
  const memory::dims src_dims = with_leading({batch, g.channels}, g.input);
  const memory::dims dst_dims = with_leading({batch, g.out_channels}, g.output);
  const memory::dims weights_dims = grouped ? with_leading({g.groups, g.group_out, g.group_in}, g.kernel)
                                            : with_leading({g.out_channels, g.group_in}, g.kernel);
  memory::dims dilation;  // oneDNN counts the holes: dilation - 1
  for (int64_t k : g.kernel_dilation) dilation.push_back(k - 1);
  const auto f32 = memory::data_type::f32;
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, {src_dims, f32, tag::any},
      {weights_dims, f32, tag::any}, {dst_dims, f32, tag::any}, g.strides, dilation, g.low, g.high);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
    if (std::string_view(pd.impl_info_str()).starts_with("ref")) return nullptr;
    auto p = std::make_shared<Primitive>(Primitive{.pd = pd,
                                                   .conv = dnnl::convolution_forward(pd),
                                                   .src = {src_dims, f32, data_tag},
                                                   .weights = {weights_dims, f32, weights_tag},
                                                   .dst = {dst_dims, f32, data_tag},
                                                   .to_src = std::nullopt,
                                                   .to_weights = std::nullopt,
                                                   .from_dst = std::nullopt});
    if (pd.src_desc() != p->src)
      p->to_src = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->src, engine(), pd.src_desc()));
    if (pd.weights_desc() != p->weights)
      p->to_weights =
          dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p->weights, engine(), pd.weights_desc()));
    if (pd.dst_desc() != p->dst)
      p->from_dst = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), pd.dst_desc(), engine(), p->dst));
    return p;
  } catch (const dnnl::error&) {
    return nullptr;  // unimplemented here: im2col serves it
  }
}

std::shared_ptr<const Primitive> primitive(const ConvGeometry& g, int64_t batch) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<const Primitive>> cache;
  std::vector<int64_t> key{batch, g.channels, g.out_channels, g.groups};
  for (const auto* v : {&g.input, &g.kernel, &g.strides, &g.low, &g.high, &g.kernel_dilation})
    key.insert(key.end(), v->begin(), v->end());
  {
    const std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // Made outside the lock (it takes a while); a racing thread's copy is dropped.
  std::shared_ptr<const Primitive> p;
  {
    const OneOmpThread one;  // oneDNN plans its kernels for the threads it will get
    p = make_primitive(g, batch);
  }
  const std::lock_guard lock(mutex);
  return cache.emplace(std::move(key), std::move(p)).first->second;
}

// A per-thread buffer, grown as needed, 64-byte aligned for oneDNN's kernels.
class Scratch {
 public:
  void* get(size_t bytes) {
    bytes = (std::max<size_t>(bytes, 64) + 63) / 64 * 64;
    if (bytes > size_) {
      data_.reset(static_cast<char*>(std::aligned_alloc(64, bytes)));
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

struct ThreadScratch {
  Scratch src, weights, dst, pad;
};

// One part of the batch, on the calling thread.
void run_part(const Primitive& p, const float* x, const float* k, float* y) {
  const OneOmpThread one;
  thread_local ThreadScratch scratch;
  dnnl::stream stream(engine());
  dnnl::engine& e = engine();
  memory src_user(p.src, e, const_cast<float*>(x)), weights_user(p.weights, e, const_cast<float*>(k));
  memory dst_user(p.dst, e, y);
  memory src = src_user, weights = weights_user, dst = dst_user;
  if (p.to_src) {
    src = memory(p.pd.src_desc(), e, scratch.src.get(p.pd.src_desc().get_size()));
    p.to_src->execute(stream, src_user, src);
  }
  if (p.to_weights) {
    weights = memory(p.pd.weights_desc(), e, scratch.weights.get(p.pd.weights_desc().get_size()));
    p.to_weights->execute(stream, weights_user, weights);
  }
  if (p.from_dst) dst = memory(p.pd.dst_desc(), e, scratch.dst.get(p.pd.dst_desc().get_size()));
  memory pad(p.pd.scratchpad_desc(), e, scratch.pad.get(p.pd.scratchpad_desc().get_size()));
  p.conv.execute(
      stream,
      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}});
  if (p.from_dst) p.from_dst->execute(stream, dst, dst_user);
  stream.wait();
}

// Each image's output channels in `chunks` parts, one conv of a single image
// with that part's kernels each: a kernel's weights and an image's output
// channels are contiguous, so a part reads and writes in place.
bool conv_dnnl_by_channels(const ConvGeometry& g, int64_t chunks, const float* x, const float* k, float* y) {
  const int64_t base = g.out_channels / chunks, extra = g.out_channels % chunks;
  auto part_geometry = [&](int64_t channels) {
    ConvGeometry p = g;
    p.out_channels = p.group_out = channels;
    return p;
  };
  const std::shared_ptr<const Primitive> large = primitive(part_geometry(base + (extra > 0 ? 1 : 0)), 1);
  const std::shared_ptr<const Primitive> small = extra > 0 ? primitive(part_geometry(base), 1) : large;
  if (!large || !small) return false;
  const int64_t x_image = g.channels * g.input_size, y_image = g.out_channels * g.output_size;
  const int64_t kernel = g.group_in * g.kernel_size;
  tbb::parallel_for(int64_t{0}, g.in_batch * chunks, [&](int64_t item) {
    const int64_t image = item / chunks, chunk = item % chunks;
    const int64_t first = chunk * base + std::min(chunk, extra);
    run_part(chunk < extra ? *large : *small, x + image * x_image, k + first * kernel,
             y + image * y_image + first * g.output_size);
  });
  return true;
}

}  // namespace

bool conv_dnnl(const ConvGeometry& g, const float* x, const float* k, float* y) {
  if (!eligible(g)) return false;
  const int64_t workers = tbb::this_task_arena::max_concurrency();
  const bool serial = conv_macs(g) < kConvSerialMacs;
  // Fewer images than workers (a stream of single windows): each image's
  // output channels are cut into chunks as well, each chunk a conv with that
  // many kernels (not for grouped convs, whose channels belong to groups).
  const int64_t chunks = serial || g.groups != 1 || g.in_batch >= workers
                             ? 1
                             : std::clamp<int64_t>(workers / g.in_batch, 1, g.out_channels);
  if (chunks > 1) return conv_dnnl_by_channels(g, chunks, x, k, y);
  const int64_t parts = serial ? 1 : std::clamp<int64_t>(workers, 1, g.in_batch);
  // The first `extra` parts take one image more.
  const int64_t base = g.in_batch / parts, extra = g.in_batch % parts;
  const std::shared_ptr<const Primitive> large = primitive(g, base + (extra > 0 ? 1 : 0));
  const std::shared_ptr<const Primitive> small = extra > 0 ? primitive(g, base) : large;
  if (!large || !small) return false;
  const int64_t x_image = g.channels * g.input_size, y_image = g.out_channels * g.output_size;
  auto run = [&](int64_t part) {
    const int64_t first = part * base + std::min(part, extra);
    run_part(part < extra ? *large : *small, x + first * x_image, k, y + first * y_image);
  };
  if (parts == 1) {
    run(0);
  } else {
    tbb::parallel_for(int64_t{0}, parts, run);
  }
  return true;
}

}  // namespace sluice::cpu
