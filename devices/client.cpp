// The client registry: one Client per platform, made on first use, by the
// backend registered for it (registered_backends(), generated from the
// backends' folders).

#include <algorithm>
#include <atomic>

#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <sluice/base/detail/log.h>
#include <sluice/devices/detail/backend_impl.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Client>, std::less<>> clients;
  std::atomic<size_t> made{0};  // clients.size(), read without the mutex
};

Registry& registry() {
  static Registry r;
  return r;
}

const BackendRegistration* find_registration(std::string_view platform) {
  for (const auto& r : registered_backends())
    if (platform == r.platform) return &r;
  return nullptr;
}


// Checked for every platform, also those that ignore the option: a
// negative count is a mistake wherever it is passed.
void check_options(std::string_view platform, const ClientOptions& options) {
  for (auto [name, value] :
       {std::pair{"host_threads", options.host_threads}, std::pair{"blas_threads", options.blas_threads}})
    if (value < 0)
      throw ValueError(error_message(fmt::format("client {}", platform), fmt::format("ClientOptions::{}", name),
                                     ">= 0 (0: the default)", value));
  if (!(options.memory_fraction > 0 && options.memory_fraction <= 1))
    throw ValueError(error_message(fmt::format("client {}", platform), "ClientOptions::memory_fraction",
                                   "a fraction in (0, 1]", options.memory_fraction));
}

}  // namespace

bool Capabilities::supports(Op op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }
bool Capabilities::supports(DType t) const {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}
bool Capabilities::supports(Op op, DType operand) const {
  return supports(op) && supports(operand) &&
         std::find(declined.begin(), declined.end(), std::pair{op, operand}) == declined.end();
}

Client::Client(std::string platform, ClientOptions options, std::unique_ptr<Backend> backend)
    : platform_(std::move(platform)), options_(options), backend_(std::move(backend)) {}
Client::~Client() = default;

int Client::device_count() const { return backend_->device_count(); }

Device Client::device(int id) const {
  if (id < 0 || id >= device_count())
    throw DeviceError(error_message(fmt::format("client {}", platform_), "device id",
                                    fmt::format("an id in [0, {})", device_count()), id));
  return Device(const_cast<Client*>(this), id);
}

Capabilities Client::capabilities() const { return backend_->capabilities(); }
std::string Client::options_str() const { return backend_->options_str(options_); }
std::string Client::plans() const { return backend_->plans(); }
void Client::use_plans(const std::string& text) { backend_->use_plans(text); }

namespace {

// The platform's client, made with `options` if it does not exist yet.
// `asked`: whether the caller chose those options, so that a client made
// with others is an error rather than silently not what was asked.
Client& find_or_make_client(std::string_view platform, const ClientOptions& options, bool asked) {
  check_options(platform, options);
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (auto it = reg.clients.find(platform); it != reg.clients.end()) {
    if (asked && !(it->second->options() == options))
      throw ConfigError(error_message(fmt::format("client {}", platform), "options", "those it was made with",
                                      "others; make the client with its options before anything uses the "
                                      "platform (host(), a compile)"));
    return *it->second;
  }
  const BackendRegistration* r = find_registration(platform);
  if (!r)
    throw DeviceError(error_message("client", "platform", fmt::format("one of {}", fmt::join(known_platforms(), ", ")),
                                    fmt::format("unknown platform '{}'", platform)));
  std::unique_ptr<Backend> backend = r->make(options);
  if (!backend || backend->device_count() == 0)
    throw DeviceError(error_message("client", fmt::format("platform '{}'", platform), "one available on this machine",
                                    fmt::format("not available here (available: {})", fmt::join(platforms(), ", "))));
  auto c = std::make_unique<Client>(std::string(platform), options, std::move(backend));
  if (options.default_device_id < 0 || options.default_device_id >= c->device_count())
    throw DeviceError(error_message(fmt::format("client {}", platform), "default_device_id",
                                    fmt::format("an id in [0, {})", c->device_count()),
                                    options.default_device_id));
  Client& made = *reg.clients.emplace(std::string(platform), std::move(c)).first->second;
  reg.made.store(reg.clients.size(), std::memory_order_release);
  return made;
}

}  // namespace

Client& client(std::string_view platform) { return find_or_make_client(platform, {}, /*asked=*/false); }

Client& client(std::string_view platform, const ClientOptions& options) {
  return find_or_make_client(platform, options, /*asked=*/true);
}

std::vector<std::string> known_platforms() {
  std::vector<std::string> out;
  for (const auto& r : registered_backends()) out.emplace_back(r.platform);
  return out;
}

Capabilities platform_capabilities(std::string_view platform) {
  const BackendRegistration* r = find_registration(platform);
  if (!r)
    throw DeviceError(error_message("platform_capabilities", "platform",
                                    fmt::format("one of {}", fmt::join(known_platforms(), ", ")),
                                    fmt::format("unknown platform '{}'", platform)));
  return r->capabilities();
}

std::vector<std::string> platforms() {
  std::vector<std::string> out;
  // Asked without making clients: making one reserves its memory, with
  // options the application may still mean to choose.
  for (const auto& r : registered_backends())
    if (r.devices() > 0) out.emplace_back(r.platform);
  return out;
}

std::map<std::string, std::string> plans_in_use() {
  std::vector<Client*> made;
  {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    for (const auto& [platform, c] : reg.clients) made.push_back(c.get());
  }
  std::map<std::string, std::string> out;
  for (Client* c : made)
    if (std::string text = c->plans(); !text.empty()) out.emplace(std::string(c->platform()), std::move(text));
  return out;
}

std::vector<IpcDeviceId> ipc_devices_here() {
  // Asked with every control message a channel's receiver sends: worked
  // out again only when a client was made since (clients are never removed).
  thread_local size_t seen = 0;
  thread_local std::vector<IpcDeviceId> known;
  Registry& reg = registry();
  const size_t clients = reg.made.load(std::memory_order_acquire);
  if (clients == seen) return known;
  std::vector<Client*> made;
  {
    std::lock_guard lock(reg.mutex);
    for (const auto& [platform, c] : reg.clients) made.push_back(c.get());
  }
  std::vector<IpcDeviceId> out;
  for (Client* c : made)
    for (int id = 0; id < c->device_count(); ++id)
      if (std::optional<IpcDeviceId> named = c->backend().ipc_device(id)) out.push_back(*named);
  seen = made.size();
  known = out;
  return out;
}

void use_plans(const std::map<std::string, std::string>& plans) {
  for (const auto& [platform, text] : plans) client(platform).use_plans(text);
}

namespace {

template <typename Platforms>
Device first_available(const Platforms& preference, const ClientOptions& options) {
  for (std::string_view p : preference) {
    // A platform this build has no backend for is simply not available here.
    const BackendRegistration* r = find_registration(p);
    if (!r || r->devices() == 0) continue;
    try {
      return find_or_make_client(p, options, /*asked=*/false).default_device();
    } catch (const DeviceError&) {
      continue;
    }
  }
  throw DeviceError(error_message("default_device", "",
                                  fmt::format("one of the platforms [{}] available", fmt::join(preference, ", ")),
                                  fmt::format("none (available here: {})", fmt::join(platforms(), ", "))));
}

}  // namespace

Device default_device(std::initializer_list<std::string_view> preference) {
  return first_available(preference, ClientOptions{});
}

Device default_device(const std::vector<std::string>& preference, const ClientOptions& options) {
  return first_available(preference, options);
}

DevicePreference DevicePreference::accelerator_or_host(const ClientOptions& options) {
  std::vector<std::string> order;
  for (const auto& r : registered_backends())
    if (std::string_view(r.platform) != "host") order.emplace_back(r.platform);
  order.emplace_back("host");
  return {std::move(order), options};
}

Device DevicePreference::resolve() const {
  if (device_) return *device_;
  Device d = default_device(platforms_, options_);
  // Said once per process and preference: a stage on the host where a GPU
  // was first asked for is slower, not wrong.
  if (!platforms_.empty() && d.platform() != platforms_.front()) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (said.insert(str()).second)
      logger().info("device {}: no {} device here, running on {}", str(), platforms_.front(), d.str());
  }
  return d;
}

std::string DevicePreference::str() const {
  return device_ ? device_->str() : fmt::format("{}", fmt::join(platforms_, ", else "));
}

Device host() {
  static Device d = client("host").default_device();
  return d;
}

Client& Device::client() const {
  if (!client_) throw DeviceError(error_message("device", "", "a device of a client", "an empty Device (default-constructed)"));
  return *client_;
}
Backend& Device::backend() const { return client().backend(); }
bool Device::host_memory() const { return backend().host_memory(); }
std::string_view Device::platform() const { return client().platform(); }
std::string Device::str() const { return fmt::format("{}:{}", platform(), id_); }

}  // namespace sluice
