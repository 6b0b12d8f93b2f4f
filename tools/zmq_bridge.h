#pragma once
// A pipeline source that receives from a ZeroMQ channel until end of
// stream, and a sink that sends each message then end of stream.
// Stand-ins until pipeline/zmq_nodes.h provides sources::zmq / sinks::zmq.

#include <memory>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"

namespace sluice::tools {

std::shared_ptr<Source> zmq_source(const std::string& endpoint, std::vector<Spec> spec);
std::shared_ptr<Sink> zmq_sink(const std::string& endpoint);

}  // namespace sluice::tools
