// The checkpoint store: durable writes (fsync, then rename), verified reads
// (sizes and BLAKE2b hashes from the manifest), pruning to `retain`.

#include <sluice/pipeline/checkpoint_store.h>

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>

#include <sluice/io/npy.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/detail/durable_files.h>

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Bytes = std::span<const uint8_t>;

constexpr std::string_view kPrefix = "chk-";
constexpr std::string_view kWho = "checkpoint store";
constexpr int kNumberDigits = 8;
constexpr int64_t kManifestLimit = int64_t{64} << 20;  // far above any manifest; bounds a corrupt one

std::string checkpoint_name(int64_t number) {
  return fmt::format("{}{:0{}}", kPrefix, number, kNumberDigits);
}

// "chk-00000042" -> 42; anything else (partial directories included) -> none.
std::optional<int64_t> number_of(const std::string& name) {
  if (!name.starts_with(kPrefix) || name.size() <= kPrefix.size() || name.size() > kPrefix.size() + 18)
    return std::nullopt;
  int64_t n = 0;
  for (char c : std::string_view(name).substr(kPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string errno_text() { return std::strerror(errno); }

std::string blake2b_hex(std::initializer_list<Bytes> parts) {
  crypto_generichash_state state;
  unsigned char digest[crypto_generichash_BYTES];
  crypto_generichash_init(&state, nullptr, 0, sizeof digest);
  for (Bytes p : parts) crypto_generichash_update(&state, p.data(), p.size());
  crypto_generichash_final(&state, digest, sizeof digest);
  char hex[2 * crypto_generichash_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

// The file's bytes if it has exactly `bytes` of them; otherwise what is wrong.
std::optional<std::vector<uint8_t>> read_exactly(const fs::path& path, int64_t bytes, std::string& problem) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    problem = path.filename().string() + ": " + ec.message();
    return std::nullopt;
  }
  if (static_cast<int64_t>(size) != bytes) {
    problem =
        error_message(path.filename().string(), "size", fmt::format("{} bytes (the manifest says)", bytes),
                      fmt::format("{} bytes", size));
    return std::nullopt;
  }
  std::vector<uint8_t> data(size);
  durable::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  size_t done = 0;
  while (fd.get() >= 0 && done < data.size()) {
    const ssize_t n = ::read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (fd.get() < 0 || done != data.size()) {
    problem = path.filename().string() + ": reading failed: " + errno_text();
    return std::nullopt;
  }
  return data;
}

// One file of a manifest's entry ({"file", "bytes", "blake2b"}), checked
// against its size and hash.
std::optional<std::vector<uint8_t>> load_file(const fs::path& dir, const nlohmann::json& entry,
                                              std::string& problem) {
  const std::string file = entry.at("file").get<std::string>();
  if (file.empty() || file.find('/') != std::string::npos || file.starts_with(".")) {
    problem = "the manifest names a file outside its checkpoint: '" + file + "'";
    return std::nullopt;
  }
  auto bytes = read_exactly(dir / file, entry.at("bytes").get<int64_t>(), problem);
  if (!bytes) return std::nullopt;
  if (blake2b_hex({*bytes}) != entry.at("blake2b").get<std::string>()) {
    problem = file + ": its BLAKE2b hash differs from the manifest's (the file is corrupt)";
    return std::nullopt;
  }
  return bytes;
}

// One tensor file of a manifest, checked against its size, hash and spec.
std::optional<Tensor> load_tensor(const fs::path& dir, const nlohmann::json& entry, std::string& problem) {
  const std::string file = entry.at("file").get<std::string>();
  auto bytes = load_file(dir, entry, problem);
  if (!bytes) return std::nullopt;
  size_t header_bytes = 0;
  const Spec spec = npy::parse_header(*bytes, &header_bytes, file);
  const Spec expected{dtype_from_name(entry.at("dtype").get<std::string>(), file),
                      Shape(entry.at("shape").get<std::vector<int64_t>>())};
  if (spec != expected || static_cast<int64_t>(bytes->size() - header_bytes) != spec.bytes()) {
    problem = file + ": holds " + spec.str() + ", the manifest says " + expected.str();
    return std::nullopt;
  }
  return tensor_from_bytes(spec, bytes->data() + header_bytes);
}

// The checkpoint in `dir` if its manifest and every file verify.
std::optional<Checkpoint> load_checkpoint(const fs::path& dir, int64_t number, std::string& problem) {
  const fs::path manifest_path = dir / "manifest.json";
  std::error_code ec;
  const auto size = fs::file_size(manifest_path, ec);
  if (ec) {
    problem = "manifest.json: " + ec.message() + " (a checkpoint torn while being written)";
    return std::nullopt;
  }
  if (static_cast<int64_t>(size) > kManifestLimit) {
    problem =
        error_message("manifest.json", "size", fmt::format("at most {} bytes (the limit)", kManifestLimit),
                      fmt::format("{} bytes, above the limit", size));
    return std::nullopt;
  }
  auto text = read_exactly(manifest_path, static_cast<int64_t>(size), problem);
  if (!text) return std::nullopt;
  try {
    const nlohmann::json m = nlohmann::json::parse(text->begin(), text->end());
    if (m.at("format") != "sluice-checkpoint" || m.at("version") != 1) {
      problem = "manifest.json: not a version 1 sluice checkpoint manifest";
      return std::nullopt;
    }
    Checkpoint c;
    c.number = m.at("checkpoint").get<int64_t>();
    if (c.number != number) {
      problem =
          error_message("manifest.json", "checkpoint number", fmt::format("{} (its directory's)", number),
                        fmt::format("{} (the manifest says)", c.number));
      return std::nullopt;
    }
    c.positions = m.at("sources").get<std::map<std::string, int64_t>>();
    c.states = m.at("states").get<std::map<std::string, std::string>>();
    for (const nlohmann::json& stage : m.at("stages")) {
      Tensors& acc = c.accumulators[stage.at("name").get<std::string>()];
      for (const nlohmann::json& entry : stage.at("tensors")) {
        std::optional<Tensor> t = load_tensor(dir, entry, problem);
        if (!t) return std::nullopt;
        acc.push_back(std::move(*t));
      }
    }
    // Checkpoints written before plans were kept have none.
    if (auto plans = m.find("plans"); plans != m.end()) {
      for (const auto& [platform, entry] : plans->items()) {
        std::optional<std::vector<uint8_t>> plan = load_file(dir, entry, problem);
        if (!plan) return std::nullopt;
        c.plans[platform] = std::string(plan->begin(), plan->end());
      }
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    problem = std::string("manifest.json: ") + e.what();
  } catch (const Error& e) { problem = e.what(); }
  return std::nullopt;
}

}  // namespace

CheckpointStore::CheckpointStore(std::string directory, CheckpointStoreOptions options)
    : directory_(std::move(directory)), options_(options) {
  if (options_.retain < 1)
    throw CheckpointError(
        error_message(fmt::format("checkpoint store '{}'", directory_), "retain", ">= 1", options_.retain));
  if (sodium_init() < 0) throw CheckpointError(error_message(kWho, "libsodium failed to initialise", "", ""));
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec || !fs::is_directory(directory_))
    throw CheckpointError(error_message(
        kWho,
        fmt::format("cannot use '{}' as a directory: {}", directory_, ec ? ec.message() : "it is a file"), "",
        ""));
}

std::vector<int64_t> CheckpointStore::numbers() const {
  std::vector<int64_t> out;
  for (const fs::directory_entry& e : fs::directory_iterator(directory_)) {
    if (auto n = number_of(e.path().filename().string()); n && e.is_directory()) out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t CheckpointStore::write(const Checkpoint& c) {
  if (c.number < 1)
    throw CheckpointError(error_message(fmt::format("checkpoint store '{}'", directory_), "checkpoint number",
                                        ">= 1", c.number));
  const fs::path root(directory_);
  // Partial checkpoints are a crashed writer's (there is one writer).
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".") && name.ends_with(".partial")) fs::remove_all(e.path());
  }
  for (int64_t n : numbers())
    if (n >= c.number) fs::remove_all(root / checkpoint_name(n));
  const fs::path partial = root / ("." + checkpoint_name(c.number) + ".partial");
  const fs::path final_dir = root / checkpoint_name(c.number);
  fs::remove_all(partial);
  fs::create_directory(partial);
  int64_t written = 0;
  try {
    nlohmann::json manifest{
        {"format", "sluice-checkpoint"}, {"version", 1},       {"checkpoint", c.number},
        {"sources", c.positions},        {"states", c.states}, {"stages", nlohmann::json::array()}};
    size_t k = 0;
    for (const auto& [name, tensors] : c.accumulators) {
      nlohmann::json entries = nlohmann::json::array();
      for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor h = tensors[i].to_host();
        const std::string head = npy::header(h.spec());
        const Bytes header_bytes(reinterpret_cast<const uint8_t*>(head.data()), head.size());
        const Bytes data(static_cast<const uint8_t*>(h.host_data()), static_cast<size_t>(h.spec().bytes()));
        const std::string file = fmt::format("acc-{}.{}.npy", k, i);
        durable::write_file(partial / file, {header_bytes, data}, kWho);
        const auto bytes = static_cast<int64_t>(head.size() + data.size());
        written += bytes;
        entries.push_back({{"file", file},
                           {"dtype", dtype_name(h.dtype())},
                           {"shape", std::vector<int64_t>(h.spec().shape.dims())},
                           {"bytes", bytes},
                           {"blake2b", blake2b_hex({header_bytes, data})}});
      }
      manifest["stages"].push_back({{"name", name}, {"tensors", std::move(entries)}});
      ++k;
    }
    nlohmann::json plans = nlohmann::json::object();
    for (const auto& [platform, text] : c.plans) {
      const std::string file = fmt::format("plans-{}.txt", k++);
      const Bytes bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
      durable::write_file(partial / file, {bytes}, kWho);
      written += static_cast<int64_t>(text.size());
      plans[platform] = {{"file", file}, {"bytes", text.size()}, {"blake2b", blake2b_hex({bytes})}};
    }
    manifest["plans"] = std::move(plans);
    const std::string text = manifest.dump(2) + "\n";
    durable::write_file(partial / "manifest.json",
                        {Bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size())}, kWho);
    written += static_cast<int64_t>(text.size());
    durable::sync_directory(partial, kWho);
    std::error_code ec;
    fs::rename(partial, final_dir, ec);
    if (ec)
      throw CheckpointError(error_message(
          kWho,
          fmt::format("renaming '{}' to '{}' failed: {}", partial.string(), final_dir.string(), ec.message()),
          "", ""));
    durable::sync_directory(root, kWho);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    throw;
  }
  const std::vector<int64_t> present = numbers();
  const auto keep = static_cast<size_t>(options_.retain);
  for (size_t i = 0; i + keep < present.size(); ++i) fs::remove_all(root / checkpoint_name(present[i]));
  return written;
}

CheckpointLookup CheckpointStore::latest() const {
  CheckpointLookup found;
  std::vector<int64_t> present = numbers();
  for (auto it = present.rbegin(); it != present.rend(); ++it) {
    const fs::path dir = fs::path(directory_) / checkpoint_name(*it);
    std::string problem;
    if (std::optional<Checkpoint> c = load_checkpoint(dir, *it, problem)) {
      found.checkpoint = std::move(c);
      return found;
    }
    found.skipped.push_back(fmt::format("checkpoint {} ('{}'): {}", *it, dir.string(), problem));
  }
  return found;
}

}  // namespace sluice
