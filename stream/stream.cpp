#include <sluice/stream/stream.h>

#include <sluice/ops/detail/error_format.h>

#include <sstream>

namespace sluice {

namespace {

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown error";
  }
}

// A chunk between send and recv: waiting for its data (not yet issued), or
// issued with outputs that may still be computing.
struct Pending {
  uint64_t seq = 0;
  Tensors chunk;             // until issued
  Tensors outputs;           // once issued
  Tensor marker;             // one result of its run: ready when the run is done
  std::exception_ptr error;  // a failure known when issuing (the chunk's own data failed)
  bool issued = false;
};

}  // namespace

struct Stream::State : std::enable_shared_from_this<Stream::State> {
  Step step;
  StreamOptions options;

  std::mutex mutex;
  std::condition_variable changed;  // a slot issued or received, or the stream closed
  Tensors acc;                      // the newest accumulator, possibly still computing
  // Sent and not yet received (with discard_outputs: not yet known complete),
  // in sequence order; the last `unissued` wait for their chunk's data.
  std::deque<Pending> slots;
  size_t unissued = 0;
  bool waiting = false;             // a continuation on the first unissued chunk is registered
  uint64_t next_seq = 0, received = 0;
  bool closed = false;
  std::thread::id receiver;         // the thread that must recv: the last to call recv, else the opener
  std::exception_ptr first_error;   // with discard_outputs: reported by done
  uint64_t first_error_seq = 0;

  // Issues every slot whose chunk is ready, in order. When one is not, a
  // continuation on its data resumes issuing later; it is registered with
  // the lock released, since it runs at once if the data became ready.
  void pump(std::unique_lock<std::mutex>& lock) {
    size_t first = slots.size() - unissued;
    EventPtr wait_for;
    while (unissued > 0) {
      Pending& slot = slots[first];
      for (const Tensor& t : slot.chunk)
        if (!t.is_ready()) wait_for = t.buffer()->ready;
      if (wait_for) break;
      issue(slot);
      --unissued;
      ++first;
    }
    if (!wait_for || waiting) return;
    waiting = true;
    lock.unlock();
    wait_for->then([self = shared_from_this()] {
      std::unique_lock relock(self->mutex);
      self->waiting = false;
      self->pump(relock);
    });
    lock.lock();
  }

  void issue(Pending& slot) {
    for (const Tensor& t : slot.chunk)
      if (t.buffer()->ready && t.buffer()->ready->failed()) slot.error = t.buffer()->ready->error();
    if (!slot.error) {
      try {
        slot.outputs = step.run(slot.chunk, acc);
        slot.marker = slot.outputs.empty() ? acc.front() : slot.outputs.front();
      } catch (...) {
        slot.error = std::current_exception();
      }
    }
    if (slot.error) note_error(slot.seq, slot.error);
    slot.chunk.clear();
    slot.issued = true;
    changed.notify_all();
  }

  void note_error(uint64_t seq, std::exception_ptr e) {
    if (options.discard_outputs && !first_error) {
      first_error = std::move(e);
      first_error_seq = seq;
    }
  }

  // With discard_outputs, slots leave once their run is complete; waiting
  // for the oldest bounds the computations in flight to max_pending.
  void retire_completed(std::unique_lock<std::mutex>& lock, size_t keep_at_most) {
    while (!slots.empty() && slots.front().issued) {
      Pending& front = slots.front();
      if (slots.size() <= keep_at_most && front.marker && !front.marker.is_ready()) return;
      Tensor marker = front.marker;
      uint64_t seq = front.seq;
      if (marker && !marker.is_ready()) {
        lock.unlock();
        try {
          marker.wait();
        } catch (...) {
        }
        lock.lock();
        if (slots.empty() || slots.front().seq != seq) continue;  // retired by another sender meanwhile
      }
      if (marker && marker.buffer()->ready && marker.buffer()->ready->failed())
        note_error(seq, marker.buffer()->ready->error());
      slots.pop_front();
    }
  }

  void check_open(const char* what) const {
    if (closed) throw StreamError(error_message(what, "the stream is closed (done was called)", "", ""));
  }
};

Stream::Stream(const Function& f, std::vector<Spec> input_spec, const Tensors& acc_init, Device device,
               StreamOptions options)
    : state_(std::make_shared<State>()) {
  if (options.max_pending == 0)
    throw StreamError(error_message("stream", "max_pending", "at least 1", options.max_pending));
  State& s = *state_;
  s.step = Step(f, std::move(input_spec), acc_init, device, "stream");
  s.options = options;
  s.acc = s.step.initial_acc(acc_init);
  s.receiver = std::this_thread::get_id();
}

Stream::~Stream() = default;
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;

void Stream::send(const Tensors& chunk) {
  if (!state_) throw StreamError(error_message("send", "the stream was moved from", "", ""));
  State& s = *state_;
  Tensors placed = s.step.place(chunk);

  std::unique_lock lock(s.mutex);
  s.check_open("send");
  if (s.options.discard_outputs) {
    s.retire_completed(lock, s.options.max_pending - 1);
    while (s.slots.size() >= s.options.max_pending) {  // the oldest still waits for its data
      s.changed.wait(lock);
      s.retire_completed(lock, s.options.max_pending - 1);
    }
  } else {
    while (s.slots.size() >= s.options.max_pending) {
      if (std::this_thread::get_id() == s.receiver)
        throw StreamError(error_message(
            "send",
            fmt::format(
                "{} outputs wait unreceived (max_pending) and this thread is the one that receives them: "
                "sending more would wait forever; recv first, or open the stream with a larger max_pending",
                s.slots.size()),
            "", ""));
      s.changed.wait(lock);
    }
  }
  s.check_open("send");
  Pending& slot = s.slots.emplace_back();
  slot.seq = s.next_seq++;
  slot.chunk = std::move(placed);
  ++s.unissued;
  s.pump(lock);
}

Tensors Stream::recv() {
  if (!state_) throw StreamError(error_message("recv", "the stream was moved from", "", ""));
  State& s = *state_;
  Pending slot;
  {
    std::unique_lock lock(s.mutex);
    s.check_open("recv");
    if (s.options.discard_outputs)
      throw StreamError(
          error_message("recv", "the stream was opened with discard_outputs: it keeps no outputs", "", ""));
    s.receiver = std::this_thread::get_id();
    s.changed.wait(lock, [&] { return s.closed || (!s.slots.empty() && s.slots.front().issued); });
    s.check_open("recv");
    slot = std::move(s.slots.front());
    s.slots.pop_front();
    ++s.received;
  }
  s.changed.notify_all();  // a sender blocked on max_pending may go on
  std::exception_ptr error = slot.error;
  if (!error) {
    try {
      for (const Tensor& t : slot.outputs) t.wait();
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error)
    throw StreamError(
        error_message("recv", fmt::format("chunk {} failed: {}", slot.seq, what_of(error)), "", ""));
  return std::move(slot.outputs);
}

Tensors Stream::done() {
  if (!state_) throw StreamError(error_message("done", "the stream was moved from", "", ""));
  State& s = *state_;
  Tensors acc;
  {
    std::unique_lock lock(s.mutex);
    s.check_open("done");
    s.changed.wait(lock, [&] { return s.unissued == 0; });
    if (s.options.discard_outputs) s.retire_completed(lock, 0);
    if (!s.options.discard_outputs && !s.slots.empty()) {
      throw StreamError(error_message(
          "done",
          fmt::format(
              "{} outputs were not received (chunks {} to {}); recv them first, or open the stream with "
              "discard_outputs. The stream is still open and nothing was lost",
              s.slots.size(), s.slots.front().seq, s.slots.back().seq),
          "", ""));
    }
    acc = s.acc;
  }
  try {
    for (const Tensor& t : acc) t.wait();
  } catch (...) {
    std::lock_guard lock(s.mutex);
    s.closed = true;
    s.changed.notify_all();
    throw StreamError(
        error_message("done", "the accumulator failed: " + what_of(std::current_exception()), "", ""));
  }
  std::lock_guard lock(s.mutex);
  s.closed = true;
  s.changed.notify_all();
  if (s.first_error)
    throw StreamError(error_message(
        "done", fmt::format("chunk {} failed: {}", s.first_error_seq, what_of(s.first_error)), "", ""));
  return acc;
}

const std::vector<Spec>& Stream::input_spec() const { return state_->step.input_spec(); }
const std::vector<Spec>& Stream::output_spec() const { return state_->step.output_spec(); }
Device Stream::device() const { return state_->step.device(); }
uint64_t Stream::sent() const {
  std::lock_guard lock(state_->mutex);
  return state_->next_seq;
}
uint64_t Stream::received() const {
  std::lock_guard lock(state_->mutex);
  return state_->received;
}

}  // namespace sluice
