// A traced run's events (pipeline/detail/trace_recorder.h) and the merge of
// several processes' files (pipeline/trace.h).

#include <sluice/pipeline/trace.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
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

// How a slice binds to its message's flow (flow events v2: the slice
// itself carries the flow, as Perfetto and chrome://tracing read it): the
// text from its bind_id's value to the event's end.
const char* flow_binding(FlowStep step) {
  switch (step) {
    case FlowStep::Start: return ",\"flow_out\":true}";
    case FlowStep::End: return ",\"flow_in\":true}";
    default: return ",\"flow_in\":true,\"flow_out\":true}";
  }
}

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw PipelineError(error_message(where, what, "", ""));
}

// Nanoseconds as microseconds with their three decimals (not negative),
// written at `at` (24 bytes of room): how many bytes.
size_t write_micros(char* at, int64_t ns) {
  char* end = std::to_chars(at, at + 20, ns / 1000).ptr;
  const auto fraction = static_cast<int>(ns % 1000);
  end[0] = '.';
  end[1] = static_cast<char>('0' + fraction / 100);
  end[2] = static_cast<char>('0' + fraction / 10 % 10);
  end[3] = static_cast<char>('0' + fraction % 10);
  return static_cast<size_t>(end + 4 - at);
}

// JSON text appended to a buffer grown ahead: fixed fragments copied, and
// numbers written with to_chars. A trace writes tens of thousands of events
// as its run ends; a format call per event took most of that time.
class JsonText {
 public:
  // A fragment made once and copied at every event, with room past its end
  // so that it is copied as a fixed 64 bytes: a copy of a length known only
  // at run time is a call to memcpy, a fixed one a few moves.
  static constexpr size_t kPadded = 64;
  static std::string padded(std::string s) {
    s.reserve(s.size() + kPadded);
    return s;
  }

  explicit JsonText(size_t expected) : buffer_(new char[expected]), size_(expected) {}
  JsonText& text(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    used_ += s.size();
    return *this;
  }
  // A fragment made by padded().
  JsonText& fragment(const std::string& s) {
    if (s.size() > kPadded) return text(s);
    std::memcpy(room(kPadded), s.data(), kPadded);
    used_ += s.size();
    return *this;
  }
  template <typename Integer>
  JsonText& integer(Integer v) {
    char* at = room(24);
    used_ = static_cast<size_t>(std::to_chars(at, at + 24, v).ptr - buffer_.get());
    return *this;
  }
  // Nanoseconds as microseconds with their three decimals (not negative).
  JsonText& micros(int64_t ns) {
    used_ += write_micros(room(24), ns);
    return *this;
  }
  std::string_view view() const { return {buffer_.get(), used_}; }

 private:
  char* room(size_t bytes) {
    if (used_ + bytes > size_) {
      // Not zeroed: every byte is written before it is read.
      size_ = std::max(2 * size_, used_ + bytes);
      std::unique_ptr<char[]> grown(new char[size_]);
      std::memcpy(grown.get(), buffer_.get(), used_);
      buffer_ = std::move(grown);
    }
    return buffer_.get() + used_;
  }
  std::unique_ptr<char[]> buffer_;
  size_t size_ = 0, used_ = 0;
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
  // The file is opened now: a path that cannot be written fails the start,
  // not the end. Not truncated: cutting the few megabytes of an earlier
  // run's trace frees their blocks, milliseconds of the run; write() writes
  // over them and cuts what is left past its end.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) refuse("trace", fmt::format("cannot create '{}': {}", path_, std::strerror(errno)));
}

TraceRecorder::~TraceRecorder() {
  // A run that never got to write leaves an empty file, not an earlier run's trace.
  if (!written_ && ::ftruncate(fd_, 0) != 0) {
    // Nothing more to tell: the run failed before it could write, or never ran.
  }
  ::close(fd_);
}

NodeTrace TraceRecorder::lane(const std::string& name, const std::string& kind, FlowStep flow, int origin,
                              uint64_t seq_offset) {
  names_.push_back(name);
  kinds_.push_back(kind);
  flows_.push_back(flow);
  return {this, static_cast<uint32_t>(names_.size() - 1),
          (static_cast<uint64_t>(std::max(origin, 0)) << 40) + seq_offset};
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
  events->tid = thread_id();
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
        // Not zeroed: only what is recorded is read.
        list.blocks.push_back({std::unique_ptr<Event[]>(new Event[take]), 0});
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
  Block& block = list.blocks.back();
  block.events[block.size++] = e;
}

void TraceRecorder::slice(const NodeTrace& lane, Clock::time_point start, Clock::time_point end, uint64_t seq,
                          Clock::time_point queued) {
  // steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux): the host's clock.
  const auto ns = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  // A wait shorter than a microsecond is a hand-off (the node before's
  // thread running this node next, most of them), not a queue: written
  // each, they doubled a trace's size and its cost to the run.
  constexpr auto kShortestWait = std::chrono::microseconds(1);
  const bool waited = queued != Clock::time_point{} && start - queued >= kShortestWait;
  record({ns(start), ns(end) - ns(start), waited ? ns(queued) : 0, seq + lane.flow_base, lane.node});
}

void TraceRecorder::barrier(const NodeTrace& lane, int64_t number) {
  record({std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(), -1,
          0, static_cast<uint64_t>(number), lane.node});
}

namespace {

// The text of a trace's events that stays the same from event to event:
// made once, so that an event is a few copies and three numbers.
struct Fragments {
  std::vector<std::string> slice_head;  // per node, up to its slice's timestamp
  std::vector<std::string> flow_tail;   // per node, from its flow's id to the event's end
  std::vector<std::string> node_name;   // per node, as a JSON string
  std::vector<std::string> queue_head;  // per node, its queue wait's, up to its id
};

// One thread's events [begin, end), as text.
void render(JsonText& out, const Fragments& f, const std::string& pid_tid, const auto* begin,
            const auto* end) {
  for (const auto* e = begin; e != end; ++e) {
    if (e->dur_ns < 0) {
      out.text(",\n{\"name\":\"barrier ")
          .integer(e->seq)
          .text("\",\"cat\":\"checkpoint\",\"ph\":\"i\",\"s\":\"t\",\"ts\":")
          .micros(e->ts_ns)
          .text(pid_tid)
          .text(",\"args\":{\"node\":")
          .text(f.node_name[e->node])
          .text("}}");
      continue;
    }
    if (e->queued_ns > 0) {
      // The wait, as an async slice (begin and end, by id): waits in one
      // queue overlap, which a thread's slices may not. Its id: the
      // node's, then the message's flow.
      for (const auto& [phase, ts] : {std::pair{"b", e->queued_ns}, std::pair{"e", e->ts_ns}}) {
        out.fragment(f.queue_head[e->node])
            .integer(e->seq)
            .text("\",\"ph\":\"")
            .text(phase)
            .text("\",\"ts\":")
            .micros(ts)
            .fragment(pid_tid)
            .text("}");
      }
    }
    out.fragment(f.slice_head[e->node])
        .micros(e->ts_ns)
        .text(",\"dur\":")
        .micros(e->dur_ns)
        .fragment(pid_tid)
        .text(",\"args\":{\"seq\":")
        .integer(e->seq)
        .text("},\"bind_id\":")
        .integer(e->seq)
        .fragment(f.flow_tail[e->node]);
  }
}

}  // namespace

void TraceRecorder::write() {
  const int pid = static_cast<int>(getpid());
  Fragments f;
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string name = nlohmann::json(names_[i]).dump();
    f.node_name.push_back(name);
    f.slice_head.push_back(JsonText::padded(
        ",\n{\"name\":" + name + ",\"cat\":" + nlohmann::json(kinds_[i]).dump() + ",\"ph\":\"X\",\"ts\":"));
    f.flow_tail.push_back(JsonText::padded(flow_binding(flows_[i])));
    f.queue_head.push_back(JsonText::padded(",\n{\"name\":" + nlohmann::json(names_[i] + " queue").dump() +
                                            ",\"cat\":\"queue\",\"id\":\"" + std::to_string(i) + "."));
  }
  const std::string head = fmt::format(
      "{{\"traceEvents\":[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{"
      "\"name\":{}}}}}",
      pid, nlohmann::json(process_.empty() ? std::string("sluice") : process_).dump());
  auto put = [this](std::string_view text, off_t at) {
    while (!text.empty()) {
      const ssize_t n = ::pwrite(fd_, text.data(), text.size(), at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        refuse("trace", fmt::format("cannot write '{}': {}", path_, std::strerror(n < 0 ? errno : ENOSPC)));
      text.remove_prefix(static_cast<size_t>(n));
      at += n;
    }
  };
  put(head, 0);
  // The run is over: no thread records any more. Each block of events is
  // made text on its own, side by side on the run's idle workers, and
  // written where the file has come to as it is done: the events of a trace
  // may come in any order. A block's text is small enough to come from the
  // heap and stay in the cache.
  struct Part {
    const Events* list;
    const Block* block;
  };
  std::vector<Part> parts;
  size_t events = 0;
  uint64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    for (const auto& list : threads_) {
      for (const Block& block : list->blocks) {
        parts.push_back({list.get(), &block});
        events += block.size;
      }
      dropped += list->dropped;
    }
  }
  std::atomic<off_t> written{static_cast<off_t>(head.size())};
  tbb::parallel_for(size_t{0}, parts.size(), [&](size_t i) {
    const Part& p = parts[i];
    const std::string pid_tid = JsonText::padded(fmt::format(",\"pid\":{},\"tid\":{}", pid, p.list->tid));
    JsonText text(p.block->size * 240);
    render(text, f, pid_tid, p.block->events.get(), p.block->events.get() + p.block->size);
    put(text.view(), written.fetch_add(static_cast<off_t>(text.view().size())));
  });
  const std::string tail = fmt::format(
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"process\":{},\"host\":{},\"pid\":{},"
      "\"clock_monotonic_ns\":{},\"clock_realtime_ns\":{},\"events\":{},\"events_dropped\":{}}}}}\n",
      nlohmann::json(process_).dump(), nlohmann::json(host_name()).dump(), pid, monotonic_ns_, realtime_ns_,
      events, dropped);
  put(tail, written);
  if (::ftruncate(fd_, written + static_cast<off_t>(tail.size())) != 0)
    refuse("trace", fmt::format("cannot cut '{}' to its length: {}", path_, std::strerror(errno)));
  written_ = true;
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
