// The .npy file sink: each message's tensors as files numpy reads, each
// published by a rename, and with checkpoints only once the checkpoint
// holding its message is stored (a two-phase commit on the file system).

#include <filesystem>
#include <mutex>

#include <sluice/io/npy.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/durable_files.h>
#include <sluice/pipeline/sinks.h>

namespace sluice {
namespace {

namespace fs = std::filesystem;

// DIR/.pending/N/ holds the files of the messages before barrier N until
// checkpoint N is stored; then they are renamed into DIR.
class NpyFileSink : public Sink {
 public:
  explicit NpyFileSink(fs::path dir) : dir_(std::move(dir)), pending_(dir_ / ".pending") {
    std::error_code ec;
    fs::create_directories(pending_, ec);
    if (ec)
      throw PipelineError(
          error_message("sinks::npy_files",
                        fmt::format("cannot create '{}': {}", pending_.string(), ec.message()), "", ""));
  }

  void checkpointing(bool stored) override { stored_ = stored; }

  void consume(uint64_t seq, const Tensors& tensors) override {
    std::lock_guard lock(mutex_);
    const fs::path where = stored_ ? epoch_dir(epoch_) : dir_;
    fs::create_directories(where);
    for (size_t k = 0; k < tensors.size(); ++k) {
      const std::string name = file_name(seq, k);
      const Tensor t = tensors[k].to_host();
      const std::string head = npy::header(t.spec());
      const fs::path hidden = where / ("." + name + ".partial");
      durable::write_file(
          hidden,
          {durable::Bytes(reinterpret_cast<const uint8_t*>(head.data()), head.size()),
           durable::Bytes(static_cast<const uint8_t*>(t.host_data()), static_cast<size_t>(t.spec().bytes()))},
          kWho);
      fs::rename(hidden, where / name);
    }
  }

  std::string prepare(int64_t number) override {
    std::lock_guard lock(mutex_);
    if (fs::exists(epoch_dir(number))) durable::sync_directory(epoch_dir(number), kWho);
    epoch_ = number + 1;
    return {};
  }

  void commit(int64_t number) override {
    std::lock_guard lock(mutex_);
    publish_through(number);
  }

  void resume(int64_t number, const std::string&) override {
    std::lock_guard lock(mutex_);
    publish_through(number);  // stored before a crash came between store and commit
    for (const fs::directory_entry& e : fs::directory_iterator(pending_)) fs::remove_all(e.path());
    epoch_ = number + 1;
  }

  void finish() override {
    std::lock_guard lock(mutex_);
    durable::sync_directory(dir_, kWho);
  }

 private:
  static constexpr std::string_view kWho = "sinks::npy_files";

  // 000000000042-0.npy: sorted by name is sorted by message.
  static std::string file_name(uint64_t seq, size_t k) { return fmt::format("{:012}-{}.npy", seq, k); }
  fs::path epoch_dir(int64_t n) const { return pending_ / fmt::format("{}", n); }

  void publish_through(int64_t number) {
    bool moved = false;
    for (const fs::directory_entry& e : fs::directory_iterator(pending_)) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos || std::stoll(name) > number) continue;
      for (const fs::directory_entry& f : fs::directory_iterator(e.path()))
        if (!f.path().filename().string().starts_with(".")) fs::rename(f.path(), dir_ / f.path().filename());
      fs::remove_all(e.path());
      moved = true;
    }
    if (moved) durable::sync_directory(dir_, kWho);
  }

  fs::path dir_, pending_;
  std::mutex mutex_;  // consume and prepare on the pipeline's thread, commit on the store's
  bool stored_ = false;
  int64_t epoch_ = 1;
};

}  // namespace

namespace sinks {
std::shared_ptr<Sink> npy_files(const std::string& directory) {
  if (directory.empty())
    throw PipelineError(error_message("sinks::npy_files", "", "a directory", "an empty path"));
  return std::make_shared<NpyFileSink>(directory);
}
}  // namespace sinks

}  // namespace sluice
