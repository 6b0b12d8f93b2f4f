#pragma once
// to_batched: a big tensor cut into batches along axis 0, lazily, so that a
// stream or pipeline can consume it chunk by chunk; the tensor's tags, if
// it has any, cut with it (each batch's tags(i): those at its rows, its
// first row's time).

#include <cstdint>
#include <iterator>

#include <sluice/devices/backend.h>
#include <sluice/devices/tags.h>

namespace sluice {

// What to do with rows that do not fill a last batch.
enum class Leftover : uint8_t {
  Repeat,   // fill the last batch by wrapping around to the first rows (Nx's default)
  Discard,  // drop them
};

// A lazy range of batches; batch i is made when it is read. Batches of a
// host tensor are views of its memory (the last batch under Repeat, which
// joins rows from both ends, is the one copy). The range keeps the tensor
// alive. Thread safety: const members may be called concurrently.
class Batches {
 public:
  Batches(Tensor tensor, int64_t batch_size, Leftover leftover, Tags tags = {});

  int64_t size() const { return count_; }
  int64_t batch_size() const { return batch_size_; }
  Tensor operator[](int64_t i) const;
  // Batch i's tags (slice_tags; the wrapped-around last batch under Repeat
  // joins those of both ends, join_tags). Empty when the tensor has none.
  Tags tags(int64_t i) const;

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Tensor;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const Batches* batches, int64_t i) : batches_(batches), i_(i) {}
    Tensor operator*() const { return (*batches_)[i_]; }
    iterator& operator++() { ++i_; return *this; }
    iterator operator++(int) { iterator old = *this; ++i_; return old; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const Batches* batches_ = nullptr;
    int64_t i_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  Tensor tensor_;
  int64_t batch_size_;
  int64_t count_;
  Tags tags_;
};

// Batches of `batch_size` rows of `tensor` (ShapeError for a rank-0 tensor,
// a batch_size below 1, or fewer rows than one batch, as Nx).
Batches to_batched(const Tensor& tensor, int64_t batch_size, Leftover leftover = Leftover::Repeat);
// The same for a tensor with tags (its rows' and its own), cut with it.
// ValueError for a tag at a row the tensor does not have.
Batches to_batched(const Tensor& tensor, Tags tags, int64_t batch_size, Leftover leftover = Leftover::Repeat);

}  // namespace sluice
