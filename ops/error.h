#pragma once
// sluice's exceptions. Every message says what failed, where (op, argument,
// stage, endpoint, sequence number), what was expected and what was found.

#include <stdexcept>
#include <string>

namespace sluice {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShapeError : public Error { using Error::Error; };     // dims, ranks, axes
class TypeError : public Error { using Error::Error; };      // dtypes
class DeviceError : public Error { using Error::Error; };    // clients, buffers, backends
class StreamError : public Error { using Error::Error; };    // send / recv / done
class WireError : public Error { using Error::Error; };      // frames on the wire
class PipelineError : public Error { using Error::Error; };  // stages and edges
class CheckpointError : public Error { using Error::Error; };  // checkpoint stores, restores
class ConfigError : public Error {
  using Error::Error;
};  // environment variables, settings

}  // namespace sluice
