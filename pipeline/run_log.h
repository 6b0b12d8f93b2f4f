#pragma once
// A run log: JSON Lines that a running pipeline appends to
// (PipelineOptions::run_log), and that application code may add records of
// its own to; `sluice report` draws one as an HTML page (README, "A run
// report").
//
//   {"t":1718000000.125,"process":"compute","type":"metrics","nodes":[...]}
//   {"t":1718000000.131,"process":"sink","type":"scores","chunk":12,...}
//
// Every record is one JSON object on one line with `t` (seconds since the
// Unix epoch, the wall clock, so that processes of one machine agree),
// `process` (when the log has one: the partition's process) and `type`.
// Several processes may append to one file: it is opened with O_APPEND and
// each line is written by one write(2), so lines never interleave.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sluice {

// One record: a type and its fields, each written as JSON as it is added.
class RunRecord {
 public:
  explicit RunRecord(std::string_view type);
  RunRecord& number(std::string_view key, double value);  // NaN and infinities as null
  RunRecord& integer(std::string_view key, int64_t value);
  RunRecord& text(std::string_view key, std::string_view value);
  // An array of numbers, each rounded to `digits` significant digits (a
  // log of spectra stays small).
  RunRecord& numbers(std::string_view key, std::span<const float> values, int digits = 4);
  // A value already written as JSON elsewhere (metrics_json's array, say), as it is.
  RunRecord& json(std::string_view key, std::string_view value);
  const std::string& type() const { return type_; }

 private:
  friend class RunLog;
  RunRecord& key(std::string_view key);
  std::string type_;
  std::string fields_;  // `,"key":value` each
};

// An open run log. Thread safety: write() may be called from any thread.
class RunLog {
 public:
  // Opens `path` for appending, creating it. PipelineError naming the path
  // and the system's reason when it cannot.
  explicit RunLog(std::string path, std::string process = {}, std::string pipeline = {});
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Appends the record as one line, stamped with the time and this log's
  // process and pipeline names. PipelineError naming the path, the record's
  // type and the system's reason when the line was not written whole (a
  // full disk: ENOSPC).
  void write(const RunRecord& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string stamp_;  // `,"process":...,"pipeline":...` for every line
  int fd_ = -1;
};

}  // namespace sluice
