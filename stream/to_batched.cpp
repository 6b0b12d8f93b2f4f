#include <sluice/stream/to_batched.h>

#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/ops.h>

namespace sluice {

Batches::Batches(Tensor tensor, int64_t batch_size, Leftover leftover, Tags tags)
    : tensor_(std::move(tensor)), batch_size_(batch_size), count_(0), tags_(std::move(tags)) {
  if (!tensor_) throw ShapeError(error_message("to_batched", "", "a tensor", "an empty one"));
  if (tensor_.rank() == 0)
    throw ShapeError(error_message("to_batched", "", "a tensor of rank 1 or more to cut along axis 0",
                                   fmt::format("a scalar {}", tensor_.spec())));
  if (batch_size < 1) throw ShapeError(error_message("to_batched", "batch_size", "at least 1", batch_size));
  int64_t rows = tensor_.shape().dim(0);
  if (rows < batch_size)
    throw ShapeError(
        error_message("to_batched", "",
                      fmt::format("at least batch_size = {} rows in {}", batch_size, tensor_.spec()), rows));
  count_ = leftover == Leftover::Repeat ? (rows + batch_size - 1) / batch_size : rows / batch_size;
  // A tag past the last row would be in no batch: lost without a word.
  for (const Tag& t : tags_.all())
    if (t.offset >= rows)
      throw ValueError(error_message("to_batched", fmt::format("tag '{}'", t.key),
                                     fmt::format("a row of {} (below {})", tensor_.spec(), rows),
                                     fmt::format("row {}", t.offset)));
}

Tags Batches::tags(int64_t i) const {
  if (i < 0 || i >= count_)
    throw ShapeError(
        error_message("to_batched", "batch index", fmt::format("an index in [0, {})", count_), i));
  if (tags_.empty()) return {};
  const int64_t rows = tensor_.shape().dim(0);
  const int64_t first = i * batch_size_;
  const int64_t tail = std::min(batch_size_, rows - first);
  if (tail == batch_size_) return slice_tags(tags_, first, first + batch_size_);
  const Tags parts[] = {slice_tags(tags_, first, rows), slice_tags(tags_, 0, batch_size_ - tail)};
  const int64_t part_rows[] = {tail, batch_size_ - tail};
  return join_tags(parts, part_rows);
}

Tensor Batches::operator[](int64_t i) const {
  if (i < 0 || i >= count_)
    throw ShapeError(
        error_message("to_batched", "batch index", fmt::format("an index in [0, {})", count_), i));
  const Shape& shape = tensor_.shape();
  int64_t rows = shape.dim(0);
  std::vector<int64_t> dims = shape.dims();
  dims[0] = batch_size_;
  Spec spec{tensor_.dtype(), Shape(dims)};
  int64_t first = i * batch_size_;
  int64_t row_bytes = spec.bytes() / batch_size_;

  if (first + batch_size_ <= rows && tensor_.device().host_memory()) {
    // A view: same memory, same readiness as the whole tensor.
    const BufferPtr& whole = tensor_.buffer();
    auto view = std::make_shared<Buffer>();
    view->device = whole->device;
    view->data = static_cast<uint8_t*>(whole->data) + first * row_bytes;
    view->bytes = static_cast<size_t>(spec.bytes());
    view->memory = whole->memory;
    view->ready = whole->ready;
    return Tensor(spec, std::move(view));
  }

  // Other devices, and the wrapped-around last batch: computed by one small
  // compiled function per shape (the compile cache keeps it).
  Spec whole = tensor_.spec();
  int64_t tail = std::min(batch_size_, rows - first);
  Function f = trace({whole}, [&](Expr x) {
    std::vector<int64_t> zeros(static_cast<size_t>(whole.shape.rank()), 0);
    std::vector<int64_t> starts = zeros;
    starts[0] = first;
    std::vector<int64_t> lengths = whole.shape.dims();
    lengths[0] = tail;
    Expr part = slice(x, starts, lengths);
    if (tail == batch_size_) return part;
    lengths[0] = batch_size_ - tail;
    return concatenate({part, slice(x, zeros, lengths)}, 0);
  });
  return compile(f, tensor_.device()).run({tensor_})[0];
}

Batches to_batched(const Tensor& tensor, int64_t batch_size, Leftover leftover) {
  return Batches(tensor, batch_size, leftover);
}

Batches to_batched(const Tensor& tensor, Tags tags, int64_t batch_size, Leftover leftover) {
  return Batches(tensor, batch_size, leftover, std::move(tags));
}

}  // namespace sluice
