// zip_by_time's alignment (pipeline/detail/time_alignment.h). Each
// stream's rows go forward in time, so one cursor walks the other stream's
// held chunks along the reference's rows: the alignment costs a step per
// row, where a search would cost a log. And a chunk's rows are evenly
// spaced, so once a row has taken a sample, the rows after it take the
// samples after it for as long as two straight lines (the two chunks'
// times) stay closer than the bounds: that run is computed, not stepped.

#include <sluice/pipeline/detail/time_alignment.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace sluice {
namespace {

// One stream's rows aligned to a reference chunk: where they go.
struct Aligned {
  Tensors tensors;
  std::vector<std::byte*> to;  // each tensor's bytes
  std::vector<size_t> row;     // each tensor's bytes a row
  std::byte* hit = nullptr;    // whether each row matched
};
// Rows a block of the alignment takes on a worker: tens of microseconds of
// copying, where handing out blocks costs a few (a 1,600-row chunk aligned
// in 4 blocks took 10% longer than in one).
constexpr int64_t kBlockRows = 16384;

// The other stream's samples in time order, as a cursor over the held
// chunks. Its fields are locals of the row loop, not reads through
// `held`: the loop's stores (bytes, which may alias anything) would
// otherwise make the compiler load them again at every row.
class Cursor {
 public:
  // At the first sample after `t`.
  Cursor(const HeldChunks& held, int64_t t) : held_(held) {
    while (next_ < held_.size() && held_[next_]->last <= t) ++next_;  // chunks wholly at or before it
    if (next_ > 0) {
      before_ = held_[next_ - 1].get();
      before_row_ = before_->rows - 1;
      before_time_ = before_->last;
    }
    if (next_ == held_.size()) return;
    enter(held_[next_].get());
    // The first row after `t` in it (its first may be too); its last is.
    int64_t lo = 0, hi = rows_ - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (times_.at(mid) > t)
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo > 0) {
      before_ = chunk_;
      before_row_ = lo - 1;
      before_time_ = times_.at(lo - 1);
    }
    row_ = lo;
    time_ = times_.at(lo);
  }

  // Moves on past every sample at or before `t`.
  void pass(int64_t t) {
    while (chunk_ && time_ <= t) {
      before_ = chunk_;
      before_row_ = row_;
      before_time_ = time_;
      if (++row_ < rows_) {
        time_ = times_.at(row_);
      } else if (++next_ < held_.size()) {
        enter(held_[next_].get());
      } else {
        chunk_ = nullptr;
      }
    }
  }

  // After row `r` of `ref` took this chunk's row `at` (the sample after
  // the one it passed, or that one), how many of the next rows (at most
  // `most`) take the rows after `at` in turn, each within `tolerance`.
  //
  // Times are rounded lines, time(j) = first + round(j * period), so row
  // r + i's distance to sample at + i is a line in i, e + i * slope, give
  // or take 1 ns. Sample at + i is nearest (with its neighbours in the
  // chunk, no closer sample anywhere) while that distance is under half
  // a period less 1 ns, the most the spacing of two rows falls short of a
  // period; a line stays within bounds between two ends that do.
  int64_t steady(const RowTimes& ref, int64_t r, int64_t at, int64_t tolerance, int64_t most) const {
    most = std::min(most, rows_ - 2 - at);  // at + i keeps a neighbour after it in the chunk
    const int64_t apart = ref.first - times_.first;
    if (!chunk_ || most <= 0 || std::abs(apart) > (int64_t{1} << 50)) return 0;
    const double period = times_.period_ns, slope = ref.period_ns - period;
    const double e = static_cast<double>(apart) + static_cast<double>(r) * ref.period_ns -
                     static_cast<double>(at) * period;
    // 1 ns for the two roundings, 1 ns to spare, and far more than the
    // doubles' own rounding of the products.
    const double spare = 2 + 1e-12 * (std::abs(e) + static_cast<double>(r + most) * ref.period_ns +
                                      static_cast<double>(at + most) * period);
    const double bound = std::min(static_cast<double>(tolerance), (period - 1) / 2) - spare;
    if (bound <= 0 || std::abs(e + slope) > bound) return 0;  // row r + 1
    if (slope == 0) return most;
    const double last = ((slope > 0 ? bound : -bound) - e) / slope;  // the line meets the bound
    return last >= static_cast<double>(most) ? most : static_cast<int64_t>(last);
  }

  // Places the cursor after a steady run that ended at this chunk's row
  // `at`: the next row is past at - 1 (it is past at, give or take half
  // a period), and pass() takes it from there.
  void after_run(int64_t at) {
    before_ = chunk_;
    before_row_ = at - 1;
    before_time_ = times_.at(at - 1);
    row_ = at;
    time_ = times_.at(at);
  }

  const Held* chunk() const { return chunk_; }

  // The sample nearest `t` (ties to the earlier), after pass(t): its
  // chunk (null when there are no samples) and row, and its distance.
  const Held* nearest(int64_t t, int64_t& row, int64_t& distance) const {
    if (chunk_ && (!before_ || time_ - t < t - before_time_)) {
      row = row_;
      distance = time_ - t;
      return chunk_;
    }
    row = before_row_;
    distance = t - before_time_;
    return before_;
  }

 private:
  void enter(const Held* c) {
    chunk_ = c;
    rows_ = c->rows;
    times_ = c->times;
    row_ = 0;
    time_ = times_.at(0);
  }

  const HeldChunks& held_;
  size_t next_ = 0;              // held_[next_] is chunk_
  const Held* chunk_ = nullptr;  // the first sample after: its chunk (null: none)
  int64_t row_ = 0, rows_ = 0, time_ = 0;
  RowTimes times_;
  const Held* before_ = nullptr;  // the last at or before (null: none)
  int64_t before_row_ = 0, before_time_ = 0;
};

// Aligns reference rows [from, to); how many matched.
uint64_t align_rows(const Held& c, const HeldChunks& held, int64_t tolerance, Aligned& a, int64_t from,
                    int64_t to) {
  Cursor cursor(held, c.time(from));
  // Rows are copied in runs: consecutive rows taking consecutive samples
  // of one chunk (most of them, at like rates), or taking none (zeros).
  int64_t run_from = 0, run_rows = 0, run_row = 0;
  const Held* run_chunk = nullptr;
  auto flush = [&] {
    for (size_t k = 0; k < a.to.size() && run_rows > 0; ++k) {
      std::byte* dst = a.to[k] + static_cast<size_t>(run_from) * a.row[k];
      const size_t bytes = static_cast<size_t>(run_rows) * a.row[k];
      if (run_chunk)
        std::memcpy(dst, run_chunk->data[k] + static_cast<size_t>(run_row) * a.row[k], bytes);
      else
        std::memset(dst, 0, bytes);
    }
  };
  const RowTimes times = c.times;
  std::byte* const hit = a.hit;
  uint64_t matches = 0;
  for (int64_t r = from; r < to; ++r) {
    const int64_t t = times.at(r);
    cursor.pass(t);
    int64_t at = 0, distance = 0;
    const Held* pick = cursor.nearest(t, at, distance);
    if (pick && distance <= tolerance) {
      ++matches;
      hit[r] = std::byte{1};
    } else {
      pick = nullptr;
      at = 0;
    }
    if (run_rows > 0 && pick == run_chunk && (!pick || at == run_row + run_rows)) {
      ++run_rows;
    } else {
      flush();
      run_from = r;
      run_rows = 1;
      run_chunk = pick;
      run_row = at;
    }
    if (!pick || pick != cursor.chunk()) continue;
    const int64_t steady = cursor.steady(times, r, at, tolerance, to - 1 - r);
    if (steady == 0) continue;
    std::memset(hit + r + 1, 1, static_cast<size_t>(steady));
    matches += static_cast<uint64_t>(steady);
    run_rows += steady;
    r += steady;
    cursor.after_run(at + steady);
  }
  flush();
  return matches;
}

}  // namespace

// A long chunk's rows are aligned in blocks on the idle workers: each
// block finds where its cursor starts with a search, then walks.
uint64_t align_by_time(const Held& c, const HeldChunks& held, const std::vector<Spec>& specs,
                       int64_t tolerance, const std::string& who, Tensors& out) {
  Aligned a;
  for (const Spec& spec : specs) {
    // Every row is written below: a match's, or zeros.
    a.tensors.push_back(host_tensor(with_rows(spec, c.rows), who, /*zeroed=*/false));
    a.to.push_back(host_bytes(a.tensors.back()));
    a.row.push_back(row_bytes(spec));
  }
  Tensor matched = host_tensor(Spec{DType::Pred, Shape{c.rows}}, who);
  a.hit = host_bytes(matched);
  uint64_t matches = 0;
  if (c.rows < 2 * kBlockRows) {
    matches = align_rows(c, held, tolerance, a, 0, c.rows);
  } else {
    std::atomic<uint64_t> counted{0};
    // Isolated: while it waits for the blocks, this thread takes up
    // nothing else, which would hold up this message behind it.
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, c.rows, kBlockRows),
                        [&](const tbb::blocked_range<int64_t>& b) {
                          counted += align_rows(c, held, tolerance, a, b.begin(), b.end());
                        });
    });
    matches = counted;
  }
  for (Tensor& t : a.tensors) out.push_back(std::move(t));
  out.push_back(std::move(matched));
  return matches;
}

}  // namespace sluice
