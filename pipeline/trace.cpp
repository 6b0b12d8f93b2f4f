// A traced run's events (pipeline/detail/trace_recorder.h) and the merge of
// several processes' files (pipeline/trace.h).

#include <sluice/pipeline/trace.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
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

// JSON text appended to a buffer grown ahead: fixed fragments copied, and
// numbers written with to_chars. A trace writes tens of thousands of events
// as its run ends; a format call per event took most of that time.
class JsonText {
 public:
  explicit JsonText(size_t expected) { buffer_.resize(expected); }
  JsonText& text(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    used_ += s.size();
    return *this;
  }
  template <typename Integer>
  JsonText& integer(Integer v) {
    char* at = room(24);
    used_ = static_cast<size_t>(std::to_chars(at, at + 24, v).ptr - buffer_.data());
    return *this;
  }
  // Nanoseconds as microseconds with their three decimals (not negative).
  JsonText& micros(int64_t ns) {
    integer(ns / 1000);
    const auto fraction = static_cast<int>(ns % 1000);
    char* at = room(4);
    at[0] = '.';
    at[1] = static_cast<char>('0' + fraction / 100);
    at[2] = static_cast<char>('0' + fraction / 10 % 10);
    at[3] = static_cast<char>('0' + fraction % 10);
    used_ += 4;
    return *this;
  }
  std::string_view view() const { return {buffer_.data(), used_}; }

 private:
  char* room(size_t bytes) {
    if (used_ + bytes > buffer_.size()) buffer_.resize(std::max(2 * buffer_.size(), used_ + bytes));
    return buffer_.data() + used_;
  }
  std::string buffer_;
  size_t used_ = 0;
};

std::atomic<uint64_t> recorders{0};

}  // namespace

TraceRecorder::TraceRecorder(std::string path, std::string process, size_t max_events)
    : path_(std::move(path)),
      process_(std::move(process)),
      max_events_(max_events),
      generation_(++recorders) {
  monotonic_ns_ = clock_ns(CLOCK_MONOTONIC);
  realtime_ns_ = clock_ns(CLOCK_REALTIME);
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

TraceRecorder::Events& TraceRecorder::own_events() {
  // This thread's lists, by recorder: a worker may run the nodes of two
  // traced pipelines in turn. A recorder gone leaves an entry no later one matches.
  thread_local std::vector<std::pair<uint64_t, Events*>> lists;
  for (const auto& [generation, events] : lists)
    if (generation == generation_) return *events;
  Events* events = nullptr;
  {
    std::lock_guard lock(mutex_);
    threads_.push_back(std::make_unique<Events>());
    events = threads_.back().get();
  }
  events->events.reserve(1024);
  if (lists.size() == 8) lists.erase(lists.begin());
  lists.emplace_back(generation_, events);
  return *events;
}

void TraceRecorder::record(const Event& e) {
  Events& list = own_events();
  if (list.room == 0) {
    // A block of at most an eighth of what is left: near the bound a list
    // takes one event at a time, so that room another thread holds and
    // never uses does not leave the trace short while this one drops.
    uint64_t granted = granted_.load(std::memory_order_relaxed);
    while (granted < max_events_) {
      const uint64_t take = std::min<uint64_t>(kBlock, std::max<uint64_t>(1, (max_events_ - granted) / 8));
      if (granted_.compare_exchange_weak(granted, granted + take, std::memory_order_relaxed)) {
        list.room = take;
        break;
      }
    }
  }
  if (list.room == 0) {
    ++list.dropped;
    return;
  }
  --list.room;
  list.events.push_back(e);
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
  std::vector<Event> events;
  uint64_t dropped = 0;
  {
    // The run is over: no thread records any more.
    std::lock_guard lock(mutex_);
    for (const auto& list : threads_) {
      events.insert(events.end(), list->events.begin(), list->events.end());
      dropped += list->dropped;
    }
  }
  const std::string process = nlohmann::json(process_.empty() ? std::string("sluice") : process_).dump();
  JsonText out(events.size() * 260 + 1024);
  out.text("{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":")
      .integer(pid)
      .text(",\"tid\":0,\"args\":{\"name\":")
      .text(process)
      .text("}}");
  for (const Event& e : events) {
    if (e.dur_ns < 0) {
      out.text(",\n{\"name\":\"barrier ")
          .integer(e.seq)
          .text("\",\"cat\":\"checkpoint\",\"ph\":\"i\",\"s\":\"t\",\"ts\":")
          .micros(e.ts_ns)
          .text(",\"pid\":")
          .integer(pid)
          .text(",\"tid\":")
          .integer(e.tid)
          .text(",\"args\":{\"node\":")
          .text(names[e.node])
          .text("}}");
      continue;
    }
    out.text(",\n{\"name\":")
        .text(names[e.node])
        .text(",\"cat\":")
        .text(kinds[e.node])
        .text(",\"ph\":\"X\",\"ts\":")
        .micros(e.ts_ns)
        .text(",\"dur\":")
        .micros(e.dur_ns)
        .text(",\"pid\":")
        .integer(pid)
        .text(",\"tid\":")
        .integer(e.tid)
        .text(",\"args\":{\"seq\":")
        .integer(e.seq)
        .text("}}");
    // Bound to the slice it falls in ("bp":"e"): its start.
    out.text(",\n{\"name\":\"message\",\"cat\":\"flow\",\"ph\":\"")
        .text(flow_phase(flows_[e.node]))
        .text("\",\"id\":")
        .integer(e.seq)
        .text(",\"ts\":")
        .micros(e.ts_ns)
        .text(",\"pid\":")
        .integer(pid)
        .text(",\"tid\":")
        .integer(e.tid)
        .text(",\"bp\":\"e\"}");
  }
  out.text(fmt::format(
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"process\":{},\"host\":{},\"pid\":{},"
      "\"clock_monotonic_ns\":{},\"clock_realtime_ns\":{},\"events\":{},\"events_dropped\":{}}}}}\n",
      nlohmann::json(process_).dump(), nlohmann::json(host_name()).dump(), pid, monotonic_ns_, realtime_ns_,
      events.size(), dropped));
  const std::string_view text = out.view();
  std::ofstream file(path_, std::ios::trunc | std::ios::binary);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
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
