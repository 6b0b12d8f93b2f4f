#include <sluice/pipeline/run_log.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <sluice/base/detail/error_format.h>

namespace sluice {
namespace {

// A JSON string: quotes, backslashes and control characters escaped.
void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

// The shortest text that reads back as `v` (or `digits` significant ones); JSON has no NaN.
void append_number(std::string& out, double v, int digits = 0) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [end, ec] = digits > 0 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits)
                              : std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

RunRecord::RunRecord(std::string_view type) : type_(type) {}

RunRecord& RunRecord::key(std::string_view key) {
  fields_ += ',';
  append_string(fields_, key);
  fields_ += ':';
  return *this;
}

RunRecord& RunRecord::number(std::string_view k, double value) {
  append_number(key(k).fields_, value);
  return *this;
}

RunRecord& RunRecord::integer(std::string_view k, int64_t value) {
  key(k).fields_ += std::to_string(value);
  return *this;
}

RunRecord& RunRecord::text(std::string_view k, std::string_view value) {
  append_string(key(k).fields_, value);
  return *this;
}

RunRecord& RunRecord::numbers(std::string_view k, std::span<const float> values, int digits) {
  key(k).fields_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) fields_ += ',';
    append_number(fields_, values[i], digits);
  }
  fields_ += ']';
  return *this;
}

RunRecord& RunRecord::json(std::string_view k, std::string_view value) {
  key(k).fields_ += value;
  return *this;
}

RunLog::RunLog(std::string path, std::string process, std::string pipeline) : path_(std::move(path)) {
  if (path_.empty()) throw PipelineError(error_message("run log", "", "a file path", "an empty one"));
  if (!process.empty()) {
    stamp_ += ",\"process\":";
    append_string(stamp_, process);
  }
  if (!pipeline.empty()) {
    stamp_ += ",\"pipeline\":";
    append_string(stamp_, pipeline);
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw PipelineError(error_message("run log '" + path_ + "'",
                                      fmt::format("cannot open for appending: {}", std::strerror(errno)), "",
                                      ""));
}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

void RunLog::write(const RunRecord& record) {
  const double t = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string line = "{\"t\":";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, t, std::chars_format::fixed, 6);
  line.append(buf, end);
  line += stamp_;
  line += ",\"type\":";
  append_string(line, record.type_);
  line += record.fields_;
  line += "}\n";
  // One write(2) a line: appends of several processes then never interleave.
  // A part written is not finished by a second call, which could land
  // after another process's line; the reader reports such a torn line.
  ssize_t n;
  do { n = ::write(fd_, line.data(), line.size()); } while (n < 0 && errno == EINTR);
  if (n < 0)
    throw PipelineError(error_message(
        "run log '" + path_ + "'",
        fmt::format("writing a '{}' record failed: {}", record.type_, std::strerror(errno)), "", ""));
  if (static_cast<size_t>(n) != line.size())
    throw PipelineError(
        error_message("run log '" + path_ + "'",
                      fmt::format("a '{}' record was written only in part (is the disk full?)", record.type_),
                      fmt::format("{} bytes", line.size()), fmt::format("{} bytes", n)));
}

}  // namespace sluice
