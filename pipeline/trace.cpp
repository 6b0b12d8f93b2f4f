// A traced run's events (pipeline/detail/trace_recorder.h) and the merge of
// several processes' files (pipeline/trace.h).

#include <sluice/pipeline/trace.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/trace_recorder.h>

namespace sluice {
namespace {

int64_t clock_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

uint32_t thread_id() {
  thread_local const auto tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tid;
}

const char* flow_phase(FlowStep step) {
  switch (step) {
    case FlowStep::Start: return "s";
    case FlowStep::End: return "f";
    default: return "t";
  }
}

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw PipelineError(error_message(where, what, "", ""));
}

}  // namespace

TraceRecorder::TraceRecorder(std::string path, std::string process, size_t max_events)
    : path_(std::move(path)), process_(std::move(process)), max_events_(max_events) {
  monotonic_ns_ = clock_ns(CLOCK_MONOTONIC);
  realtime_ns_ = clock_ns(CLOCK_REALTIME);
  // What a short run records, without growing the list while it runs.
  events_.reserve(std::min<size_t>(max_events_, 64 * 1024));
  // The file is made now: a path that cannot be written fails the start, not the end.
  std::ofstream probe(path_, std::ios::trunc);
  if (!probe) refuse("trace", fmt::format("cannot create '{}': {}", path_, std::strerror(errno)));
}

NodeTrace TraceRecorder::lane(const std::string& name, const std::string& kind, FlowStep flow,
                              uint64_t seq_offset) {
  names_.push_back(name);
  kinds_.push_back(kind);
  flows_.push_back(flow);
  return {this, static_cast<uint32_t>(names_.size() - 1), seq_offset};
}

void TraceRecorder::record(const Event& e) {
  {
    std::lock_guard lock(mutex_);
    if (events_.size() < max_events_) {
      events_.push_back(e);
      return;
    }
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
}

void TraceRecorder::slice(const NodeTrace& lane, Clock::time_point start, Clock::time_point end,
                          uint64_t seq) {
  // steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux): the host's clock.
  record({std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
          std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count(), seq + lane.seq_offset,
          lane.node, thread_id()});
}

void TraceRecorder::barrier(const NodeTrace& lane, int64_t number) {
  record({std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(), -1,
          static_cast<uint64_t>(number), lane.node, thread_id()});
}

void TraceRecorder::write() const {
  const int pid = static_cast<int>(getpid());
  std::vector<std::string> names, kinds;  // as JSON strings
  for (size_t i = 0; i < names_.size(); ++i) {
    names.push_back(nlohmann::json(names_[i]).dump());
    kinds.push_back(nlohmann::json(kinds_[i]).dump());
  }
  std::string out = "{\"traceEvents\":[\n";
  auto it = std::back_inserter(out);
  const std::string process = nlohmann::json(process_.empty() ? std::string("sluice") : process_).dump();
  fmt::format_to(it, R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":{}}}}})", pid,
                 process);
  std::vector<Event> events;
  {
    std::lock_guard lock(mutex_);
    events = events_;
  }
  for (const Event& e : events) {
    const double ts = static_cast<double>(e.ts_ns) / 1e3;
    if (e.dur_ns < 0) {
      fmt::format_to(
          it,
          ",\n{{\"name\":\"barrier {}\",\"cat\":\"checkpoint\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{:.3f},"
          "\"pid\":{},\"tid\":{},\"args\":{{\"node\":{}}}}}",
          e.seq, ts, pid, e.tid, names[e.node]);
      continue;
    }
    fmt::format_to(
        it,
        ",\n{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"ts\":{:.3f},\"dur\":{:.3f},\"pid\":{},\"tid\":{},"
        "\"args\":{{\"seq\":{}}}}}",
        names[e.node], kinds[e.node], ts, static_cast<double>(e.dur_ns) / 1e3, pid, e.tid, e.seq);
    // Bound to the slice it falls in ("bp":"e"): its start.
    fmt::format_to(
        it,
        ",\n{{\"name\":\"message\",\"cat\":\"flow\",\"ph\":\"{}\",\"id\":{},\"ts\":{:.3f},\"pid\":{},"
        "\"tid\":{},\"bp\":\"e\"}}",
        flow_phase(flows_[e.node]), e.seq, ts, pid, e.tid);
  }
  fmt::format_to(
      it,
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"process\":{},\"host\":{},\"pid\":{},"
      "\"clock_monotonic_ns\":{},\"clock_realtime_ns\":{},\"events\":{},\"events_dropped\":{}}}}}\n",
      nlohmann::json(process_).dump(), nlohmann::json(host_name()).dump(), pid, monotonic_ns_, realtime_ns_,
      events.size(), dropped_.load());
  std::ofstream file(path_, std::ios::trunc | std::ios::binary);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) refuse("trace", fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

std::vector<TraceFile> merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) refuse("trace merge", "no trace files given");
  nlohmann::json merged = {{"traceEvents", nlohmann::json::array()}, {"displayTimeUnit", "ms"}};
  std::vector<TraceFile> files;
  // The first file's wall clock less its monotonic clock: the others'
  // timestamps are moved by the difference of theirs from it.
  double reference_us = 0;
  for (const std::string& path : inputs) {
    std::ifstream in(path);
    if (!in) refuse("trace merge", fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    nlohmann::json trace;
    try {
      trace = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      refuse("trace merge", fmt::format("'{}' is not JSON: {}", path, e.what()));
    }
    const auto& other = trace.contains("otherData") ? trace["otherData"] : nlohmann::json();
    if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array() ||
        !other.contains("clock_monotonic_ns") || !other.contains("clock_realtime_ns") ||
        !other.contains("host"))
      refuse("trace merge",
             fmt::format(
                 "'{}' is no sluice trace (expected traceEvents and otherData with the host and its clocks)",
                 path));
    TraceFile f{path, other.value("process", ""), other["host"].get<std::string>()};
    const double wall_less_monotonic_us =
        (other["clock_realtime_ns"].get<double>() - other["clock_monotonic_ns"].get<double>()) / 1e3;
    if (files.empty()) reference_us = wall_less_monotonic_us;
    f.clock_difference_us = wall_less_monotonic_us - reference_us;
    if (!files.empty() && f.host != files.front().host) f.offset_us = f.clock_difference_us;
    for (auto& e : trace["traceEvents"]) {
      if (f.offset_us != 0 && e.contains("ts")) e["ts"] = e["ts"].get<double>() + f.offset_us;
      merged["traceEvents"].push_back(std::move(e));
    }
    files.push_back(f);
  }
  nlohmann::json list = nlohmann::json::array();
  for (const TraceFile& f : files)
    list.push_back({{"path", f.path},
                    {"process", f.process},
                    {"host", f.host},
                    {"clock_difference_us", f.clock_difference_us},
                    {"offset_us", f.offset_us}});
  merged["otherData"] = {{"merged", list}};
  std::ofstream out(output, std::ios::trunc | std::ios::binary);
  out << merged.dump() << "\n";
  out.close();
  if (!out) refuse("trace merge", fmt::format("cannot write '{}': {}", output, std::strerror(errno)));
  return files;
}

}  // namespace sluice
