#include <sluice/pipeline/detail/durable_files.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::durable {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release_and_close() {
  const int fd = fd_;
  fd_ = -1;
  return ::close(fd);
}

void write_file(const fs::path& path, std::initializer_list<Bytes> parts, std::string_view who) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    throw CheckpointError(
        error_message(who, fmt::format("cannot create '{}': {}", path.string(), errno_text()), "", ""));
  for (Bytes p : parts) {
    size_t done = 0;
    while (done < p.size()) {
      const ssize_t n = ::write(fd.get(), p.data() + done, p.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw CheckpointError(error_message(who,
                                            fmt::format("writing '{}' failed after {} of {} bytes: {}",
                                                        path.string(), done, p.size(), errno_text()),
                                            "", ""));
      done += static_cast<size_t>(n);
    }
  }
  if (::fsync(fd.get()) != 0 || fd.release_and_close() != 0)
    throw CheckpointError(error_message(
        who, fmt::format("flushing '{}' to disk failed: {}", path.string(), errno_text()), "", ""));
}

void sync_directory(const fs::path& dir, std::string_view who) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0)
    throw CheckpointError(error_message(
        who, fmt::format("syncing directory '{}' failed: {}", dir.string(), errno_text()), "", ""));
}

}  // namespace sluice::durable
