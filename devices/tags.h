#pragma once
// Tags: what a chunk carries besides its tensors (GNU Radio's stream tags,
// Holoscan's metadata): a small set of typed values by key, each for the
// whole chunk or at a sample offset within it (a row along axis 0).
//
//   Tags t;
//   t.set_time(now_ns, "monotonic");   // the first sample's time
//   t.set_sample_rate(16000);
//   t.set("source", std::string("pump-3"));
//   t.set("burst", int64_t{1}, /*offset=*/412);   // at sample 412
//   t.get<double>("sample_rate");      // 16000
//
// Well-known keys (tag_keys below) say when the first sample was taken
// (nanoseconds, by a named clock), the sample rate, the source and the
// sequence number. Cutting a chunk's rows (slice_tags, to_batched) and
// joining chunks (join_tags, a batch) keep every tag at its sample: offsets
// move with the rows, and a slice's first-sample time moves by its first
// row at the sample rate.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/devices/cross_thread_allocator.h>

namespace sluice {

// A tag's value: an integer, a float, UTF-8 text, or a small host tensor.
using TagValue = std::variant<int64_t, double, std::string, Tensor>;

struct Tag {
  static constexpr int64_t kWhole = -1;  // the offset of a tag about the whole chunk
  std::string key;
  TagValue value;
  int64_t offset = kWhole;  // a row of the chunk (its sample), or kWhole
};

namespace tag_keys {
inline constexpr std::string_view kTime = "time_ns";            // int64: the first sample's time, in ns
inline constexpr std::string_view kClock = "clock";             // string: the clock time_ns reads
inline constexpr std::string_view kSampleRate = "sample_rate";  // double: samples (rows) per second
inline constexpr std::string_view kSource = "source";           // string: where the chunk came from
inline constexpr std::string_view kSeq = "seq";                 // int64: its number at its source
// int64: no later chunk of this stream holds a sample at or before this
// time (ns, on the clock of time_ns): windows ending there are complete.
inline constexpr std::string_view kWatermark = "watermark_ns";
}  // namespace tag_keys

// How far row `row` (>= 0) of a chunk is from its first, in ns, at `rate`
// rows a second: floor(row * (1e9 / rate) + 0.5), the period computed
// first (once, in a loop over rows). The one rule for a row's time
// (time_ns + this), wherever sluice needs it; numpy writes it
// np.floor(row * (1e9 / rate) + 0.5).
inline double row_period_ns(double rate) { return 1e9 / rate; }
// The same with the period given: for a loop over rows, which a store
// through a byte pointer would otherwise make divide again at each row.
inline int64_t row_offset_at(int64_t row, double period_ns) {
  return static_cast<int64_t>(static_cast<double>(row) * period_ns + 0.5);  // truncation: floor, >= 0
}
inline int64_t row_offset_ns(int64_t row, double rate) { return row_offset_at(row, row_period_ns(rate)); }

// Bounds that keep tags small beside the data they describe.
inline constexpr size_t kMaxTags = 256;            // tags on one chunk
inline constexpr size_t kMaxTagKeyBytes = 128;     // printable ASCII
inline constexpr size_t kMaxTagValueBytes = 4096;  // a string's bytes, a tensor's data

// A chunk's tags, in order of offset (whole-chunk tags first), then of
// setting. One value per key and offset. A value type, cheap when empty.
class Tags {
 public:
  // Sets `key` at `offset` (kWhole or a row, >= 0), replacing what it held
  // there. ValueError for a key that is not 1 to kMaxTagKeyBytes bytes of
  // printable ASCII, an offset below kWhole, a string or tensor over
  // kMaxTagValueBytes, a tensor not in host memory, or a kMaxTags+1-th tag.
  void set(std::string key, TagValue value, int64_t offset = Tag::kWhole);
  // The value of `key` at `offset`, or null.
  const TagValue* find(std::string_view key, int64_t offset = Tag::kWhole) const;
  // The value as T, or nullopt when absent. TypeError when it holds another
  // type (an integer asked as a double is converted; nothing else is).
  template <typename T>
  std::optional<T> get(std::string_view key, int64_t offset = Tag::kWhole) const;
  bool erase(std::string_view key, int64_t offset = Tag::kWhole);  // whether it was there
  std::span<const Tag> all() const { return tags_; }
  bool empty() const { return tags_.empty(); }
  size_t size() const { return tags_.size(); }

  // The well-known keys.
  void set_time(int64_t ns, std::string clock);
  std::optional<int64_t> time_ns() const { return get<int64_t>(tag_keys::kTime); }
  std::optional<std::string> clock() const { return get<std::string>(tag_keys::kClock); }
  void set_sample_rate(double hz);  // ValueError unless finite and above 0
  std::optional<double> sample_rate() const { return get<double>(tag_keys::kSampleRate); }

  // Tensors compare by spec and bytes.
  bool operator==(const Tags& other) const;

  // Made on a source's thread and freed on a sink's (tags_overhead lost a
  // tenth of its time to malloc's lock there).
  using Storage = std::vector<Tag, CrossThreadAllocator<Tag>>;

 private:
  Storage tags_;
};

extern template std::optional<int64_t> Tags::get<int64_t>(std::string_view, int64_t) const;
extern template std::optional<double> Tags::get<double>(std::string_view, int64_t) const;
extern template std::optional<std::string> Tags::get<std::string>(std::string_view, int64_t) const;
extern template std::optional<Tensor> Tags::get<Tensor>(std::string_view, int64_t) const;

// A message of a stream: its tensors and their tags.
struct Chunk {
  std::vector<Tensor> tensors;
  Tags tags;
};

// The tags of rows [begin, end) of a chunk whose tags are `tags`: the
// whole-chunk tags, the time moved to row `begin` (by the sample rate; a
// slice after row 0 of a chunk without one has no time), and the tags at
// those rows with their offsets from `begin`. ValueError unless 0 <= begin <= end.
Tags slice_tags(const Tags& tags, int64_t begin, int64_t end);

// The tags of chunks joined row after row (parts[i] of rows[i] rows): the
// first's whole-chunk tags; each later one's whole-chunk tags that say
// something else (its own time, another source) at its first row; every
// tag at a row moved to where that row lands. A key and offset set twice
// (two parts' tags at one row of an empty part) keeps the first.
// ValueError when the counts differ or a count is negative.
Tags join_tags(std::span<const Tags> parts, std::span<const int64_t> rows);

}  // namespace sluice
