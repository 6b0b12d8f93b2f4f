#include <sluice/devices/cpu/kernels/fft_wisdom.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <sluice/base/detail/cache_path.h>
#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

struct State {
  explicit State(std::string p) : path(std::move(p)) {}
  const std::string path;
  std::atomic<int64_t> imported{0}, plans_from_wisdom{0}, plans_measured{0}, exported{0}, warnings{0};
  std::atomic<bool> read_warned{false};
  // After a failed write this process stops writing: one warning, and no
  // retries costing a failed write per plan.
  std::atomic<bool> write_failed{false};
  // A checkpoint's plans were taken (fft_wisdom_pin): the file is neither
  // read nor written, so that no other process's plans mix with them.
  std::atomic<bool> pinned{false};
};

std::string wisdom_path() { return cache_path("SLUICE_FFT_WISDOM", "fftw-wisdom"); }

// Read once, at the first measured plan.
State& state() {
  static State s(wisdom_path());
  return s;
}

void warn_read(State& s, const std::string& what) {
  if (s.read_warned.exchange(true)) return;
  ++s.warnings;
  logger().warn("fft wisdom: {}; ignored, so plans are measured (SLUICE_FFT_WISDOM=off: no wisdom file)",
                what);
}

void warn_write(State& s, const std::string& what) {
  if (s.write_failed.exchange(true)) return;
  ++s.warnings;
  logger().warn(
      "fft wisdom: {}; plans measured in this process are not kept (SLUICE_FFT_WISDOM=off: no wisdom file)",
      what);
}

std::string errno_text(int error) { return std::strerror(error); }

// The whole file; nullopt with errno set when it cannot be read (ENOENT or
// ENOTDIR: there is none).
std::optional<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[1 << 14];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

// One precision's wisdom in the file: `name` is its second word
// ("fftw_wisdom"), `text` the whole parenthesized expression.
struct Section {
  std::string name, text;
};

// The file's sections; nullopt when it is not a series of balanced
// parenthesized expressions each starting "(fftw-<version> <name>" (a torn
// or foreign file).
std::optional<std::vector<Section>> split(const std::string& text) {
  std::vector<Section> sections;
  for (size_t i = 0;;) {
    i = text.find_first_not_of(" \t\r\n", i);
    if (i == std::string::npos) return sections;
    if (text[i] != '(') return std::nullopt;
    size_t end = i;
    for (int depth = 0; end < text.size(); ++end) {
      if (text[end] == '(') ++depth;
      if (text[end] == ')' && --depth == 0) break;
    }
    if (end == text.size()) return std::nullopt;
    std::istringstream words(text.substr(i + 1, 64));
    std::string version, name;
    words >> version >> name;
    if (!version.starts_with("fftw-") || name.empty()) return std::nullopt;
    sections.push_back({name, text.substr(i, end + 1 - i)});
    i = end + 1;
  }
}

std::string quoted_start(const std::string& text) {
  std::string start = text.substr(0, 24);
  for (char& c : start) {
    if (c < ' ' || c > '~') c = '?';
  }
  return "'" + start + (text.size() > start.size() ? "...'" : "'");
}

// Writes `text` to a temporary file beside `path` and renames it over
// `path`, so that readers see the old file or the new, never a torn one.
// Returns an empty string, or what failed.
std::string replace_file(const std::string& path, const std::string& text) {
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return "cannot create " + temp + ": " + errno_text(errno);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t wrote = ::write(fd, p, left);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      const std::string why = "cannot write " + temp + ": " + errno_text(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return why;
    }
    p += wrote;
    left -= static_cast<size_t>(wrote);
  }
  // mkstemp makes the file 0600; wisdom is no secret.
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = "cannot replace " + path + ": " + errno_text(errno);
    ::unlink(temp.c_str());
    return why;
  }
  return "";
}

// An exclusive flock on `path`.lock for as long as it lives: the rename
// alone would let two writers each drop the other's new plans. Holders keep
// it for milliseconds; a holder stopped (in a debugger, say) costs this
// process its writes after kLockWait, not its planning.
class FileLock {
 public:
  static constexpr std::chrono::seconds kLockWait{10};

  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) {
      error_ = "cannot open " + path + ": " + errno_text(errno);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + kLockWait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        error_ = "cannot lock " + path + ": " + errno_text(errno);
        return;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        error_ = fmt::format("cannot lock {}: held by another process for {} s", path, kLockWait.count());
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  const std::string& error() const { return error_; }

 private:
  int fd_;
  std::string error_;
};

}  // namespace

FftWisdomStatus fft_wisdom_status() {
  State& s = state();
  return {s.path, s.imported, s.plans_from_wisdom, s.plans_measured, s.exported, s.warnings};
}

void fft_wisdom_count(bool from_wisdom) {
  ++(from_wisdom ? state().plans_from_wisdom : state().plans_measured);
}

void fft_wisdom_import(const FftwWisdomApi& api) {
  State& s = state();
  if (s.path.empty() || s.pinned) return;
  const std::optional<std::string> text = read_file(s.path);
  if (!text) {
    if (errno != ENOENT && errno != ENOTDIR) warn_read(s, "cannot read " + s.path + ": " + errno_text(errno));
    return;
  }
  const std::optional<std::vector<Section>> sections = split(*text);
  if (!sections) {
    warn_read(s, s.path + ": expected FFTW wisdom, found " + quoted_start(*text));
    return;
  }
  for (const Section& section : *sections) {
    if (section.name != api.name) continue;
    if (!api.import_text(section.text.c_str())) {
      warn_read(s, s.path + ": FFTW refused its " + section.name + " (corrupt, or from another FFTW build)");
      return;
    }
    ++s.imported;
    logger().debug("fft wisdom: imported {} from {}", api.name, s.path);
    return;
  }
}

void fft_wisdom_pin(const std::string& text, std::initializer_list<const FftwWisdomApi*> apis) {
  const std::optional<std::vector<Section>> sections = split(text);
  if (!sections) throw ConfigError(error_message("fft plans", "", "FFTW wisdom", quoted_start(text)));
  for (const FftwWisdomApi* api : apis)
    for (const Section& section : *sections)
      if (section.name == api->name && !api->import_text(section.text.c_str()))
        throw ConfigError(error_message("fft plans", section.name, "wisdom this FFTW takes",
                                        "wisdom it refuses (corrupt, or from another FFTW build)"));
  state().pinned = true;
  logger().debug("fft wisdom: {} section(s) of a checkpoint's plans taken; the file is no longer used",
                 sections->size());
}

void fft_wisdom_export(const FftwWisdomApi& api) {
  State& s = state();
  if (s.path.empty() || s.write_failed || s.pinned) return;
  const std::filesystem::path parent = std::filesystem::path(s.path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return warn_write(s, "cannot create " + parent.string() + ": " + ec.message());
  const FileLock lock(s.path + ".lock");
  if (!lock.error().empty()) return warn_write(s, lock.error());

  // Read-modify-write: other processes may have added plans since this one
  // imported, of this precision (merged into FFTW's, then exported with
  // them) or of the other (kept as they are).
  std::vector<Section> sections;
  if (const std::optional<std::string> text = read_file(s.path)) {
    if (std::optional<std::vector<Section>> found = split(*text)) {
      sections = std::move(*found);
    } else {
      warn_read(s, s.path + ": expected FFTW wisdom, found " + quoted_start(*text) + "; it is rewritten");
    }
  }
  bool placed = false;
  for (Section& section : sections) {
    if (section.name != api.name) continue;
    // A section FFTW refuses is replaced all the same.
    if (!placed) api.import_text(section.text.c_str());
    section.text = placed ? "" : api.export_text();
    placed = true;
  }
  if (!placed) sections.push_back({api.name, api.export_text()});

  std::string text;
  for (const Section& section : sections) {
    if (!section.text.empty()) text += section.text + (section.text.ends_with('\n') ? "" : "\n");
  }
  if (std::string error = replace_file(s.path, text); !error.empty()) return warn_write(s, error);
  ++s.exported;
  logger().debug("fft wisdom: wrote {} to {}", api.name, s.path);
}

}  // namespace sluice::cpu
