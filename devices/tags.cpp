#include <sluice/devices/tags.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

const char* type_name(const TagValue& v) {
  switch (v.index()) {
    case 0: return "an integer";
    case 1: return "a float";
    case 2: return "a string";
    default: return "a tensor";
  }
}

void check_key(std::string_view key) {
  const bool printable = std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (key.empty() || key.size() > kMaxTagKeyBytes || !printable)
    throw ValueError(error_message("tag", "key",
                                   fmt::format("1 to {} bytes of printable ASCII", kMaxTagKeyBytes),
                                   fmt::format("'{}' ({} bytes)", key.substr(0, 40), key.size())));
}

void check_value(std::string_view key, const TagValue& value) {
  auto refuse = [&](const std::string& expected, const std::string& found) {
    throw ValueError(error_message(fmt::format("tag '{}'", key), "value", expected, found));
  };
  if (const auto* s = std::get_if<std::string>(&value); s && s->size() > kMaxTagValueBytes)
    refuse(fmt::format("a string of at most {} bytes", kMaxTagValueBytes),
           fmt::format("{} bytes", s->size()));
  if (const auto* t = std::get_if<Tensor>(&value)) {
    if (!t->buffer()) refuse("a tensor", "an empty one (default-made)");
    if (!t->device().host_memory())
      refuse("a tensor in host memory", fmt::format("one on {}", t->device().str()));
    if (t->spec().bytes() > static_cast<int64_t>(kMaxTagValueBytes))
      refuse(fmt::format("a tensor of at most {} bytes", kMaxTagValueBytes), t->spec().str());
  }
}

bool same_value(const TagValue& a, const TagValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Tensor>)
          return x.spec() == y.spec() &&
                 std::memcmp(x.host_data(), y.host_data(), static_cast<size_t>(x.spec().bytes())) == 0;
        else
          return x == y;
      },
      a);
}

// Keeps the tags ordered by offset (whole-chunk ones first), then by setting.
void insert(Tags::Storage& tags, Tag tag) {
  auto at = std::upper_bound(tags.begin(), tags.end(), tag.offset,
                             [](int64_t offset, const Tag& t) { return offset < t.offset; });
  tags.insert(at, std::move(tag));
}

}  // namespace

void Tags::set(std::string key, TagValue value, int64_t offset) {
  check_key(key);
  if (offset < Tag::kWhole)
    throw ValueError(error_message(fmt::format("tag '{}'", key), "offset",
                                   "a row (0 or more) or Tag::kWhole (-1)", offset));
  check_value(key, value);
  for (Tag& t : tags_)
    if (t.offset == offset && t.key == key) {
      t.value = std::move(value);
      return;
    }
  if (tags_.size() == kMaxTags)
    throw ValueError(error_message(fmt::format("tag '{}'", key), "tags on a chunk",
                                   fmt::format("at most {}", kMaxTags),
                                   fmt::format("one more than {}", kMaxTags)));
  // A chunk's few tags in one allocation, not one per doubling.
  if (tags_.empty()) tags_.reserve(4);
  insert(tags_, Tag{std::move(key), std::move(value), offset});
}

const TagValue* Tags::find(std::string_view key, int64_t offset) const {
  for (const Tag& t : tags_)
    if (t.offset == offset && t.key == key) return &t.value;
  return nullptr;
}

template <typename T>
std::optional<T> Tags::get(std::string_view key, int64_t offset) const {
  const TagValue* v = find(key, offset);
  if (!v) return std::nullopt;
  if (const T* value = std::get_if<T>(v)) return *value;
  if constexpr (std::is_same_v<T, double>)
    if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  constexpr const char* wanted = std::is_same_v<T, int64_t>  ? "an integer"
                                 : std::is_same_v<T, double> ? "a float"
                                 : std::is_same_v<T, Tensor> ? "a tensor"
                                                             : "a string";
  throw TypeError(error_message(fmt::format("tag '{}'", key), "value", wanted, type_name(*v)));
}

template std::optional<int64_t> Tags::get<int64_t>(std::string_view, int64_t) const;
template std::optional<double> Tags::get<double>(std::string_view, int64_t) const;
template std::optional<std::string> Tags::get<std::string>(std::string_view, int64_t) const;
template std::optional<Tensor> Tags::get<Tensor>(std::string_view, int64_t) const;

bool Tags::erase(std::string_view key, int64_t offset) {
  auto it = std::find_if(tags_.begin(), tags_.end(),
                         [&](const Tag& t) { return t.offset == offset && t.key == key; });
  if (it == tags_.end()) return false;
  tags_.erase(it);
  return true;
}

void Tags::set_time(int64_t ns, std::string clock) {
  set(std::string(tag_keys::kTime), ns);
  set(std::string(tag_keys::kClock), std::move(clock));
}

void Tags::set_sample_rate(double hz) {
  if (!std::isfinite(hz) || hz <= 0)
    throw ValueError(error_message("tag 'sample_rate'", "value", "a finite rate above 0", hz));
  set(std::string(tag_keys::kSampleRate), hz);
}

bool Tags::operator==(const Tags& other) const {
  return tags_.size() == other.tags_.size() &&
         std::equal(tags_.begin(), tags_.end(), other.tags_.begin(), [](const Tag& a, const Tag& b) {
           return a.key == b.key && a.offset == b.offset && same_value(a.value, b.value);
         });
}

Tags slice_tags(const Tags& tags, int64_t begin, int64_t end) {
  if (begin < 0 || end < begin)
    throw ValueError(
        error_message("slice_tags", "rows", "0 <= begin <= end", fmt::format("[{}, {})", begin, end)));
  Tags out;
  const std::optional<double> rate = tags.sample_rate();
  for (const Tag& t : tags.all()) {
    if (t.offset == Tag::kWhole) {
      if (t.key == tag_keys::kTime && begin > 0) {
        // The first row's time moves with it; without a rate nobody knows where.
        if (!rate || !std::holds_alternative<int64_t>(t.value)) continue;
        out.set(t.key, std::get<int64_t>(t.value) + row_offset_ns(begin, *rate));
        continue;
      }
      out.set(t.key, t.value);
    } else if (t.offset >= begin && t.offset < end) {
      out.set(t.key, t.value, t.offset - begin);
    }
  }
  return out;
}

Tags join_tags(std::span<const Tags> parts, std::span<const int64_t> rows) {
  if (parts.size() != rows.size())
    throw ValueError(error_message("join_tags", "row counts", fmt::format("one per part ({})", parts.size()),
                                   rows.size()));
  Tags out;
  int64_t base = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (rows[i] < 0)
      throw ValueError(error_message("join_tags", fmt::format("part {}'s rows", i), "0 or more", rows[i]));
    for (const Tag& t : parts[i].all()) {
      if (t.offset == Tag::kWhole) {
        if (i == 0) {
          out.set(t.key, t.value);
          continue;
        }
        // What the first part says of the whole holds for this one's rows too.
        const TagValue* first = parts[0].find(t.key);
        if ((first && same_value(*first, t.value)) || out.find(t.key, base)) continue;
        out.set(t.key, t.value, base);
      } else if (!out.find(t.key, base + t.offset)) {
        out.set(t.key, t.value, base + t.offset);
      }
    }
    base += rows[i];
  }
  return out;
}

}  // namespace sluice
