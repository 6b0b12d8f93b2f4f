#include "tools/zmq_bridge.h"

#include "io/channel.h"

namespace sluice::tools {
namespace {

// A few messages queued at each end: enough to keep both sides busy, few
// enough that a slow receiver slows the sender instead of queueing seconds
// of data (ZeroMQ's default is 1000 messages at each end).
ChannelOptions shallow() {
  ChannelOptions o;
  o.send_high_water_mark = 4;
  o.recv_high_water_mark = 4;
  return o;
}

class ChannelSource : public Source {
 public:
  ChannelSource(const std::string& endpoint, std::vector<Spec> spec)
      : channel_(Pattern::Pull, endpoint, shallow()), spec_(std::move(spec)) {}
  std::vector<Spec> spec() const override { return spec_; }
  std::optional<Tensors> next() override {
    wire::Message m = *channel_.recv();
    if (m.header.kind == wire::Kind::EndOfStream) return std::nullopt;
    if (m.header.kind == wire::Kind::Error)
      throw PipelineError(channel_.endpoint() + ": the sender failed: " + m.error);
    return std::move(m.tensors);
  }

 private:
  Channel channel_;
  std::vector<Spec> spec_;
};

class ChannelSink : public Sink {
 public:
  explicit ChannelSink(const std::string& endpoint) : channel_(Pattern::Push, endpoint, shallow()) {}
  void consume(uint64_t seq, const Tensors& tensors) override {
    channel_.send(tensors, seq);
    next_ = seq + 1;
  }
  void finish() override { channel_.send_end_of_stream(next_); }

 private:
  Channel channel_;
  uint64_t next_ = 0;
};

}  // namespace

std::shared_ptr<Source> zmq_source(const std::string& endpoint, std::vector<Spec> spec) {
  return std::make_shared<ChannelSource>(endpoint, std::move(spec));
}
std::shared_ptr<Sink> zmq_sink(const std::string& endpoint) {
  return std::make_shared<ChannelSink>(endpoint);
}

}  // namespace sluice::tools
