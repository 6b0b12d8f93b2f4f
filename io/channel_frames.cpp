// Moving one wire-format message in and out of a ZeroMQ socket: what plain
// and reliable channels share.

#include <cstring>
#include <random>

#include <sluice/io/detail/channel_impl.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::channel_detail {
namespace {

// Smaller frames are copied into ZeroMQ's message: cheaper than the
// allocation and callback that lending the bytes costs.
constexpr size_t kZeroCopyBytes = 1024;

zmq::message_t message_of(const wire::Frame& f) {
  if (f.size < kZeroCopyBytes) return zmq::message_t(f.data, f.size);
  // Zero copy: ZeroMQ calls back when it is done with the bytes.
  auto* keep = new std::shared_ptr<const void>(f.owner);
  return zmq::message_t(const_cast<void*>(f.data), f.size,
                        [](void*, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }, keep);
}

}  // namespace

bool read_multipart(zmq::socket_ref socket, Incoming& in, int64_t max_bytes, size_t max_frames) {
  zmq::message_t part;
  if (!socket.recv(part, zmq::recv_flags::dontwait)) return false;
  in.parts = std::make_shared<std::vector<zmq::message_t>>();
  in.parts->reserve(3);  // a message of one tensor: header, .npy header, data
  in.total = 0;
  in.frames = 0;
  for (;;) {
    in.total += static_cast<int64_t>(part.size());
    ++in.frames;
    bool more = part.more();
    if (in.total <= max_bytes && in.frames <= max_frames) in.parts->push_back(std::move(part));
    if (!more) return true;
    // The rest of a multipart message is already here: this never waits.
    (void)socket.recv(part, zmq::recv_flags::none);
  }
}

wire::MapShared refuse_shared(const std::string& why) {
  return [why](const SharedHandle&) -> std::shared_ptr<void> { throw WireError(why); };
}

void check_incoming(const Incoming& in, int64_t max_bytes, size_t max_frames, const std::string& where) {
  if (in.total > max_bytes)
    throw WireError(error_message(where, "message size",
                                  fmt::format("at most max_message_bytes = {} bytes", max_bytes), in.total));
  if (in.frames > max_frames)
    throw WireError(error_message(
        where, "frame count",
        fmt::format("at most {} frames within max_message_bytes = {}", max_frames, max_bytes), in.frames));
}

wire::Message decode_incoming(const Incoming& in, size_t skip, int64_t max_bytes, size_t max_frames,
                              const std::string& where, const wire::MapShared& map) {
  check_incoming(in, max_bytes, max_frames, where);
  return wire::decode(received_frames(in, skip), {.max_message_bytes = max_bytes}, where, map);
}

std::vector<wire::ReceivedFrame> received_frames(const Incoming& in, size_t skip) {
  std::vector<wire::ReceivedFrame> frames;
  frames.reserve(in.parts->size() - std::min(skip, in.parts->size()));
  for (size_t i = skip; i < in.parts->size(); ++i) {
    zmq::message_t& p = (*in.parts)[i];
    frames.push_back({{static_cast<const uint8_t*>(p.data()), p.size()}, std::shared_ptr<void>(in.parts, &p)});
  }
  return frames;
}

bool write_frames(zmq::socket_ref socket, const std::vector<wire::Frame>& frames, const std::string* routing_id,
                  bool dont_wait) {
  const zmq::send_flags wait = dont_wait ? zmq::send_flags::dontwait : zmq::send_flags::none;
  // Only the first frame can find no room: ZeroMQ takes the rest of a
  // message it has started.
  if (routing_id) {
    if (!socket.send(zmq::buffer(*routing_id), zmq::send_flags::sndmore | wait)) return false;
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    zmq::send_flags flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    if (i == 0 && !routing_id) flags = flags | wait;
    zmq::message_t msg = message_of(frames[i]);
    if (!socket.send(msg, flags)) return false;
  }
  return true;
}

bool write_batch(zmq::socket_ref socket, uint64_t stream_id, uint64_t first_seq,
                 std::span<const size_t> sizes, const std::function<void(size_t, uint8_t*)>& write,
                 bool dont_wait) {
  size_t bytes = wire::kHeaderBytes;
  for (size_t size : sizes) bytes += wire::batch_entry_bytes(size);
  zmq::message_t batch(bytes);
  auto* out = static_cast<uint8_t*>(batch.data());
  wire::write_header({wire::Kind::Batch, 0, stream_id, first_seq, static_cast<uint32_t>(sizes.size()), 0},
                     out);
  out += wire::kHeaderBytes;
  for (size_t i = 0; i < sizes.size(); ++i) {
    write(i, wire::begin_batch_entry(sizes[i], out));
    out += wire::batch_entry_bytes(sizes[i]);
  }
  return socket.send(batch, dont_wait ? zmq::send_flags::dontwait : zmq::send_flags::none).has_value();
}

bool set_reconnect_backoff(void* socket) {
  const int first_ms = 10, most_ms = 5000;
  return zmq_setsockopt(socket, ZMQ_RECONNECT_IVL, &first_ms, sizeof first_ms) == 0 &&
         zmq_setsockopt(socket, ZMQ_RECONNECT_IVL_MAX, &most_ms, sizeof most_ms) == 0;
}

bool wait_readable(zmq::socket_ref socket, int extra_fd, std::chrono::milliseconds wait, int second_fd) {
  zmq::pollitem_t items[3] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  size_t count = 1;
  for (int fd : {extra_fd, second_fd})
    if (fd >= 0) items[count++] = {nullptr, fd, ZMQ_POLLIN, 0};
  try {
    zmq::poll(items, count, wait);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    return false;
  }
  return extra_fd >= 0 && (items[1].revents & ZMQ_POLLIN) != 0;
}

std::string routing_id_of(uint64_t session) {
  std::string id(9, '\0');
  id[0] = 'S';  // a routing id must not start with a zero byte
  for (int i = 0; i < 8; ++i) id[1 + static_cast<size_t>(i)] = static_cast<char>(session >> (8 * i));
  return id;
}

uint64_t session_of(const zmq::message_t& id) {
  if (id.size() != 9 || static_cast<const uint8_t*>(id.data())[0] != 'S') return 0;
  uint64_t session = 0;
  for (int i = 0; i < 8; ++i)
    session |= uint64_t{static_cast<const uint8_t*>(id.data())[1 + i]} << (8 * i);
  return session;
}

uint64_t new_session() {
  static thread_local std::mt19937_64 random{std::random_device{}() ^
                                             static_cast<uint64_t>(Clock::now().time_since_epoch().count())};
  uint64_t s = 0;
  while (s == 0) s = random();
  return s;
}

}  // namespace sluice::channel_detail
