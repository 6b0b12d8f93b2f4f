#pragma once
// sluice's exceptions. Every message says what failed, where (op, argument,
// stage, endpoint, sequence number), what was expected and what was found.
// Every error sluice throws is one of the typed subclasses, never a plain Error.

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sluice {

// The one shape of every message: "<where>: <what>: expected <expected>,
// found <found>", each empty part left out with its separator:
//   error_message("call", "argument 2", "f32[3]", "f32[4]") -> "call: argument 2: expected f32[3], found
//   f32[4]" error_message("call", "", "3 arguments", "2")          -> "call: expected 3 arguments, found 2"
//   error_message("recv", "chunk 3 failed", "", "")        -> "recv: chunk 3 failed"
//   error_message("npy", "header", "", "42 stray bytes")   -> "npy: header: found 42 stray bytes"
// `where` names the op, argument, stage or endpoint; `what`, what failed.
std::string error_message(std::string_view where, std::string_view what, std::string_view expected,
                          std::string_view found);

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
