#pragma once
// Files that survive a crash: written whole and fsynced before anything
// points at them, and their directory synced after a rename. Shared by the
// checkpoint store and the .npy file sink; internal to pipeline/.

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string_view>

namespace sluice::durable {

using Bytes = std::span<const uint8_t>;

// A file descriptor closed with its owner.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // close(2)'s own error matters: NFS and some full disks report there.
  int release_and_close();

 private:
  int fd_;
};

// Writes the parts to a new file and fsyncs it. CheckpointError naming
// `who`, the file and the system's reason (ENOSPC on a full disk) otherwise.
void write_file(const std::filesystem::path& path, std::initializer_list<Bytes> parts, std::string_view who);

// A rename or a new file is durable once its directory is synced.
void sync_directory(const std::filesystem::path& dir, std::string_view who);

}  // namespace sluice::durable
