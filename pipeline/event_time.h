#pragma once
// Event time: nodes that go by when samples were taken, read from each
// chunk's tags (devices/tags.h), rather than by when messages arrive.
//
//   auto a = p.source("imu", imu_chunks);      // chunks tagged time_ns and sample_rate
//   auto b = p.source("mic", mic_chunks);      // another clock, its own rate
//   auto joined = p.zip_by_time("joined", {.tolerance = 40us, .lateness = 50ms});
//   p.connect(a, joined);                      // the first input sets the rows
//   p.connect(b, joined);                      // its samples nearest each of a's
//   auto win = p.event_window("second", {.rows = 17000, .length = 1s, .every = 250ms});
//   p.connect(joined, win);
//
// Row j of a chunk is at time_ns + row_offset_ns(j, sample_rate). Each
// stream's rows go forward in time: a chunk starting at or before the end
// of the one before it is late. Late data is never dropped silently: it
// goes to the `late` sink (its tags with "late_input", the input it came
// on) or, without one, is counted in the node's metrics and logged.
//
// Watermarks (tag_keys::kWatermark) say how far a stream is complete.
// Both nodes stamp their outputs with one, and a window takes its input's
// where there is one (otherwise the time of the last row it saw). Tags
// cross processes with the messages, so watermarks do too.
//
// Both take part in checkpoints: what they hold at a barrier (a window's
// rows, the zip's chunks and the messages in flight on the inputs the
// barrier has not yet come on) is stored with where they stand, and a
// restored node holds it again. Late data given to a late sink is not part
// of a checkpoint: after a restore it may come to that sink again. A
// zip's matched_rows and unmatched_rows count its own run's.

#include <chrono>
#include <memory>

#include <sluice/pipeline/sinks.h>

namespace sluice {

// Pipeline::zip_by_time: aligns 2 to 4 streams by time. Each message of the
// first input (the reference) goes on with its own tensors (its scalars
// are values of its whole chunk; every other tensor has its rows along
// axis 0, as every tensor of the other inputs has), then, for each
// other input, every tensor of that input with the reference's rows (the
// sample nearest each reference row's time, ties to the earlier one; zeros
// where none is within `tolerance`) and a pred[rows] saying which rows
// matched. Its outputs carry the reference's tags and a watermark (the
// time of the last row emitted).
//
// A reference chunk waits until each other stream has a sample at least
// `tolerance` after its last row (that stream cannot bring a nearer one),
// or has ended (its source's last message taken, in this process or
// another), or is more than `lateness` behind the reference's newest row
// (it goes without that stream, counted as "unwaited"). Another stream's
// chunks are let go once no row still to come can match them. Waiting chunks
// hold their source's credit: a reference that holds its whole capacity
// waits for the others (backpressure; counted as "held_full" and logged
// once), so the lateness decides only where the capacity spans more time
// than it. A chunk of another stream starting within `tolerance` of what
// was emitted is late: its rows might have matched rows already gone.
// With `idle` > 0, a stream that has brought nothing for that long of
// wall-clock time (a sensor gone quiet without ending) is waited for no
// longer: the reference chunks go without it (counted as "unwaited")
// until it brings a chunk again. The lateness alone cannot say so when the
// reference goes quiet too.
struct ZipOptions {
  std::chrono::nanoseconds tolerance{0};
  std::chrono::nanoseconds lateness{std::chrono::milliseconds(100)};
  std::shared_ptr<Sink> late{};
  std::chrono::nanoseconds idle{0};
};

// Pipeline::event_window: the rows of one stream cut into windows.
//   By count (length 0): `rows` rows each, a new one every `every_rows`
//   (0: `rows`, tumbling). A window's tensors are its rows of each input
//   tensor ([rows, ...]). Rows left at the end, too few for a window, are
//   counted ("rows_unwindowed") and logged.
//   By time (length > 0): windows [start, start + length) with starts at
//   the multiples of `every` (0: `length`, tumbling) on the stream's
//   clock, each emitted once the watermark passes its end (at the end of
//   the stream, those holding rows). Its tensors are its rows of each
//   input tensor, zero-padded to `rows` rows, then an s64 scalar: how many
//   it holds. A window with more than `rows` rows fails (ErrorPolicy).
//   Windows holding no row are not emitted. A chunk with a row before the
//   end of an emitted window is late.
// Each window's tags: its rows' chunks' tags joined as its rows are
// (join_tags): the first row's chunk's whole-chunk tags, time_ns moved to
// that row (as slice_tags moves it); every tag at a row, at the row's
// place in the window; a later chunk's own time (and what else it says
// otherwise) at its first row; then "window_start_ns" and "window_end_ns"
// (by time), and the watermark.
//   Idle (by time, idle > 0): a stream that brings nothing for `idle` of
//   wall-clock time (a sensor that went quiet without ending) counts as
//   complete up to the end of the last window holding its newest row: the
//   windows holding rows are emitted then, as at the stream's end, rather
//   than when it goes on; a row that comes later into one of them is late.
//   Counted as "idle_flushes". 0: a window waits for the watermark.
struct EventWindowOptions {
  int64_t rows = 0;
  int64_t every_rows = 0;
  std::chrono::nanoseconds length{0};
  std::chrono::nanoseconds every{0};
  std::shared_ptr<Sink> late{};
  std::chrono::nanoseconds idle{0};
};

}  // namespace sluice
