#pragma once
// sluice's exceptions. Every message says what failed, where (op, argument,
// stage, endpoint, sequence number), what was expected and what was found.
// Every error sluice throws is one of the typed subclasses, never a plain Error.

#include <exception>
#include <stdexcept>
#include <string>

namespace sluice {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// clang-format off
class ShapeError : public Error { using Error::Error; };       // dims, ranks, axes
class TypeError : public Error { using Error::Error; };        // dtypes
class ValueError : public Error { using Error::Error; };       // an argument's value: empty, out of range, miscounted
class DeviceError : public Error { using Error::Error; };      // clients, buffers, backends, kernels
class StreamError : public Error { using Error::Error; };      // send / recv / done
class WireError : public Error { using Error::Error; };        // frames on the wire
class CheckpointError : public Error { using Error::Error; };  // checkpoint stores, restores
class ConfigError : public Error { using Error::Error; };      // environment variables, settings
class InternalError : public Error { using Error::Error; };    // a broken invariant of sluice itself: a bug
// clang-format on

// Stages and edges. A run that failed because a node threw keeps what it
// threw as cause(), so that its type stays reachable:
//   catch (const PipelineError& e) { if (e.cause()) std::rethrow_exception(e.cause()); }
class PipelineError : public Error {
 public:
  using Error::Error;
  PipelineError(const std::string& what, std::exception_ptr cause) : Error(what), cause_(std::move(cause)) {}
  std::exception_ptr cause() const { return cause_; }

 private:
  std::exception_ptr cause_;
};

}  // namespace sluice
