// zip_by_time's alignment (pipeline/detail/time_alignment.h). Each
// stream's rows go forward in time, so one cursor walks the other stream's
// held chunks along the reference's rows: the alignment costs a step per
// row, where a search would cost a log.

#include <sluice/pipeline/detail/time_alignment.h>

#include <atomic>
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
constexpr int64_t kBlockRows = 512;

// Aligns reference rows [from, to); how many matched.
uint64_t align_rows(const Held& c, const HeldChunks& held, int64_t tolerance, Aligned& a, int64_t from,
                    int64_t to) {
  // The cursor: `after`, the first sample after the row's time (chunk
  // held[next], row j; next == held.size(): none), and `before`, the one
  // before it; first placed by a search for row `from`'s time.
  size_t next = 0;
  int64_t j = 0;
  const Held* before = nullptr;
  int64_t before_row = 0, before_time = 0;
  const int64_t start = c.time(from);
  while (next < held.size() && held[next]->last <= start) ++next;  // chunks wholly at or before it
  if (next > 0) {
    before = held[next - 1].get();
    before_row = before->rows - 1;
    before_time = before->last;
  }
  if (next < held.size()) {
    // The first row after `start` in held[next] (its first may be too).
    const Held& h = *held[next];
    int64_t lo = 0, hi = h.rows - 1;  // h.time(hi) > start
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (h.time(mid) > start)
        hi = mid;
      else
        lo = mid + 1;
    }
    j = lo;
    if (j > 0) {
      before = &h;
      before_row = j - 1;
      before_time = h.time(j - 1);
    }
  }
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
  auto copy = [&](int64_t r, const Held* chunk, int64_t at) {
    if (run_rows > 0 && chunk == run_chunk && (!chunk || at == run_row + run_rows)) {
      ++run_rows;
      return;
    }
    flush();
    run_from = r;
    run_rows = 1;
    run_chunk = chunk;
    run_row = at;
  };
  uint64_t matches = 0;
  for (int64_t r = from; r < to; ++r) {
    const int64_t t = c.time(r);
    while (next < held.size() && held[next]->time(j) <= t) {
      before = held[next].get();
      before_row = j;
      before_time = before->time(j);
      if (++j == before->rows) {
        ++next;
        j = 0;
      }
    }
    const Held* pick = before;
    int64_t pick_row = before_row, distance = t - before_time;
    if (next < held.size()) {
      const int64_t after = held[next]->time(j) - t;
      if (!before || after < distance) {
        pick = held[next].get();
        pick_row = j;
        distance = after;
      }
    }
    if (!pick || distance > tolerance) {
      copy(r, nullptr, 0);
      continue;
    }
    ++matches;
    a.hit[r] = std::byte{1};
    copy(r, pick, pick_row);
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
