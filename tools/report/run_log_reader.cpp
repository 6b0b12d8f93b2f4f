#include "tools/report/run_log_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include <sluice/base/error.h>

namespace sluice::tools::report {
namespace {

using nlohmann::json;

// Where a record is, for every message about it.
struct Where {
  const std::string& path;
  int64_t line;
  std::string at() const { return path + ":" + std::to_string(line); }
};

std::string kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

const json& field(const json& record, const char* key, const Where& w, const std::string& what) {
  auto it = record.find(key);
  if (it == record.end())
    throw ValueError(error_message(w.at(), what, "a field '" + std::string(key) + "'", "none"));
  return *it;
}

double number(const json& record, const char* key, const Where& w, const std::string& what) {
  const json& v = field(record, key, w, what);
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();  // the log writes NaN as null
  if (!v.is_number())
    throw ValueError(error_message(w.at(), what, "'" + std::string(key) + "' to be a number", kind_of(v)));
  return v.get<double>();
}

std::string text(const json& record, const char* key, const Where& w, const std::string& what) {
  const json& v = field(record, key, w, what);
  if (!v.is_string())
    throw ValueError(error_message(w.at(), what, "'" + std::string(key) + "' to be a string", kind_of(v)));
  return v.get<std::string>();
}

std::vector<double> numbers(const json& record, const char* key, const Where& w, const std::string& what) {
  const json& v = field(record, key, w, what);
  if (!v.is_array())
    throw ValueError(
        error_message(w.at(), what, "'" + std::string(key) + "' to be an array of numbers", kind_of(v)));
  std::vector<double> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v[i].is_number()) {
      out.push_back(v[i].get<double>());
    } else {
      throw ValueError(error_message(w.at(), what, "'" + std::string(key) + "' to be an array of numbers",
                                     kind_of(v[i]) + " at index " + std::to_string(i)));
    }
  }
  return out;
}

class Reader {
 public:
  explicit Reader(RunData& data) : d_(data) {}

  void add(const json& r, const Where& w) {
    const double t = number(r, "t", w, "a record");
    if (!std::isfinite(t)) throw ValueError(error_message(w.at(), "a record", "'t' to be a time", "null"));
    const std::string type = text(r, "type", w, "a record");
    std::string process;
    if (r.contains("process")) process = text(r, "process", w, "a record");
    if (std::find(d_.processes.begin(), d_.processes.end(), process) == d_.processes.end())
      d_.processes.push_back(process);
    first_ = std::min(first_, t);
    last_ = std::max(last_, t);
    const std::string what = "a '" + type + "' record";
    if (type == "metrics") {
      metrics(r, w, t, process, what);
    } else if (type == "scores") {
      ScoredChunk c{t, numbers(r, "scores", w, what), numbers(r, "labels", w, what),
                    number(r, "accuracy", w, what), number(r, "recent_accuracy", w, what)};
      if (c.scores.size() != c.labels.size())
        throw ValueError(error_message(w.at(), what,
                                       "as many labels as scores (" + std::to_string(c.scores.size()) + ")",
                                       std::to_string(c.labels.size())));
      d_.scores.push_back(std::move(c));
    } else if (type == "spectrogram") {
      spectrogram(r, w, t, what);
    } else if (type == "graph") {
      PipelineGraph g = graph(r, w, what);
      if (!d_.graph) d_.graph = std::move(g);
    } else {
      ++unknown_[type];  // an application's own: kept in the log, not drawn
    }
    ++d_.records;
  }

  // Times from the first record; the kinds of records not drawn named once.
  void finish() {
    auto from_start = [this](double& t) { t -= first_; };
    for (NodeSeries& n : d_.nodes)
      for (double& t : n.t) from_start(t);
    for (ScoredChunk& c : d_.scores) from_start(c.t);
    for (SpectrumChunk& c : d_.spectrogram) from_start(c.t);
    // Processes append in their own order: each kind of record by time.
    auto by_time = [](const auto& a, const auto& b) { return a.t < b.t; };
    std::stable_sort(d_.scores.begin(), d_.scores.end(), by_time);
    std::stable_sort(d_.spectrogram.begin(), d_.spectrogram.end(), by_time);
    d_.duration_s = d_.records ? last_ - first_ : 0;
    for (const auto& [type, count] : unknown_)
      d_.warnings.push_back(std::to_string(count) + " record(s) of type '" + type + "' are not drawn");
  }

 private:
  // nodes [{name, kind, process}], edges [{from, to, specs}] with from and
  // to indices of nodes.
  static PipelineGraph graph(const json& r, const Where& w, const std::string& what) {
    PipelineGraph g;
    const json& nodes = field(r, "nodes", w, what);
    const json& edges = field(r, "edges", w, what);
    if (!nodes.is_array() || !edges.is_array())
      throw ValueError(error_message(w.at(), what, "'nodes' and 'edges' to be arrays",
                                     kind_of(nodes.is_array() ? edges : nodes)));
    for (const json& n : nodes) {
      if (!n.is_object()) throw ValueError(error_message(w.at(), what, "each node an object", kind_of(n)));
      g.nodes.push_back({text(n, "name", w, what), text(n, "kind", w, what), text(n, "process", w, what)});
    }
    for (const json& e : edges) {
      if (!e.is_object()) throw ValueError(error_message(w.at(), what, "each edge an object", kind_of(e)));
      const double from = number(e, "from", w, what), to = number(e, "to", w, what);
      const double count = static_cast<double>(g.nodes.size());
      if (!(from >= 0 && from < count && to >= 0 && to < count) || from != std::floor(from) ||
          to != std::floor(to))
        throw ValueError(error_message(w.at(), what,
                                       "edges between the " + std::to_string(g.nodes.size()) + " nodes",
                                       "one from " + json(from).dump() + " to " + json(to).dump()));
      g.edges.push_back({static_cast<size_t>(from), static_cast<size_t>(to), text(e, "specs", w, what)});
    }
    return g;
  }

  // values [windows][bands], flattened, and a label a window.
  void spectrogram(const json& r, const Where& w, double t, const std::string& what) {
    const double bands = number(r, "bands", w, what);
    std::vector<double> values = numbers(r, "values", w, what);
    SpectrumChunk c{
        t, static_cast<int64_t>(number(r, "channel", w, what)), {}, numbers(r, "labels", w, what)};
    if (!(bands >= 1) || values.size() != c.labels.size() * static_cast<size_t>(bands))
      throw ValueError(error_message(w.at(), what,
                                     "'values' to hold 'bands' (" + std::to_string(bands) +
                                         ") numbers for each of the " + std::to_string(c.labels.size()) +
                                         " labels",
                                     std::to_string(values.size())));
    if (!d_.spectrogram.empty() &&
        d_.spectrogram.front().windows.front().size() != static_cast<size_t>(bands))
      throw ValueError(error_message(
          w.at(), what,
          std::to_string(d_.spectrogram.front().windows.front().size()) + " bands as the records before it",
          std::to_string(bands)));
    const size_t n = static_cast<size_t>(bands);
    for (size_t i = 0; i < c.labels.size(); ++i)
      c.windows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(i * n),
                             values.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    if (c.windows.empty()) throw ValueError(error_message(w.at(), what, "at least one window", "none"));
    d_.spectrogram.push_back(std::move(c));
  }

  void metrics(const json& r, const Where& w, double t, const std::string& process, const std::string& what) {
    const json& nodes = field(r, "nodes", w, what);
    if (!nodes.is_array())
      throw ValueError(error_message(w.at(), what, "'nodes' to be an array", kind_of(nodes)));
    for (size_t i = 0; i < nodes.size(); ++i) {
      const json& n = nodes[i];
      const std::string node_what = what + ", node " + std::to_string(i);
      if (!n.is_object()) throw ValueError(error_message(w.at(), node_what, "an object", kind_of(n)));
      const std::string name = text(n, "name", w, node_what);
      auto [it, fresh] = index_.try_emplace(process + '\n' + name, d_.nodes.size());
      if (fresh)
        d_.nodes.push_back({.process = process, .name = name, .kind = text(n, "kind", w, node_what)});
      NodeSeries& s = d_.nodes[it->second];
      s.t.push_back(t);
      s.rate.push_back(number(n, "messages_out_per_s", w, node_what));
      s.p50_ms.push_back(number(n, "latency_p50_us", w, node_what) / 1e3);
      s.p99_ms.push_back(number(n, "latency_p99_us", w, node_what) / 1e3);
      s.queue_depth.push_back(number(n, "queue_depth", w, node_what));
      s.messages_in = number(n, "messages_in", w, node_what);
      s.messages_out = number(n, "messages_out", w, node_what);
      s.errors = number(n, "errors", w, node_what);
    }
  }

  RunData& d_;
  std::map<std::string, size_t> index_;  // process and node name -> d_.nodes
  std::map<std::string, int64_t> unknown_;
  double first_ = std::numeric_limits<double>::infinity(), last_ = -std::numeric_limits<double>::infinity();
};

}  // namespace

RunData read_run_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ValueError(
        error_message("sluice report", "cannot open '" + path + "': " + std::strerror(errno), "", ""));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string content = buffer.str();
  if (in.bad())
    throw ValueError(
        error_message("sluice report", "reading '" + path + "' failed: " + std::strerror(errno), "", ""));

  RunData data;
  data.path = path;
  Reader reader(data);
  int64_t line_number = 0;
  for (size_t at = 0; at < content.size();) {
    size_t end = content.find('\n', at);
    const bool torn = end == std::string::npos;  // no newline: the writer may have died mid-line
    if (torn) end = content.size();
    const std::string line = content.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Where w{path, line_number};
    json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      if (torn) {
        data.warnings.push_back("line " + std::to_string(line_number) +
                                ": the last line is cut short (a process killed while writing it?), skipped");
        break;
      }
      std::string shown = line.size() > 60 ? line.substr(0, 60) + "..." : line;
      throw ValueError(error_message(w.at(), "", "a JSON object on one line", "'" + shown + "'"));
    }
    if (!record.is_object())
      throw ValueError(error_message(w.at(), "", "a JSON object on one line", kind_of(record)));
    reader.add(record, w);
  }
  if (data.records == 0)
    throw ValueError(
        error_message("sluice report", "'" + path + "' has no records",
                      "JSON Lines of a run log (PipelineOptions::run_log, sluice demo --run-log)",
                      content.empty() ? "an empty file" : "none"));
  reader.finish();
  return data;
}

}  // namespace sluice::tools::report
