// Placements (JSON or compact), their endpoints, and roles from --role or a
// launcher's environment; every refusal names where the text came from.

#include <sluice/pipeline/placement.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr uint16_t kDefaultPort = 47000;
// The keys a JSON process may have; anything else is a typo worth reporting.
constexpr const char* kProcessKeys[] = {"name", "host", "ipc", "port", "curve_secret", "curve_public"};

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// A JSON value as found, cut short so that a message stays one line.
std::string shown(const json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw PipelineError(error_message("placement from " + source, what, "", ""));
}

std::string label(size_t index, const std::string& name) {
  std::string s = fmt::format("process {}", index);
  return name.empty() ? s : s + " (" + in_quotes(name) + ")";
}

std::string names_of(const Placement& p) {
  std::string out;
  for (const ProcessPlace& q : p.processes) out += (out.empty() ? "" : ", ") + q.name;
  return out;
}

std::string trim(const std::string& s) {
  const char* blanks = " \t\r\n";
  size_t b = s.find_first_not_of(blanks);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(blanks) - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits only (no sign, no blanks), fitting an int: nullopt otherwise.
std::optional<int> non_negative(const std::string& s) {
  if (!all_digits(s)) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The checks both forms share, once their processes are read.
void validate(const Placement& p) {
  if (p.processes.empty()) fail(p.source, "expected at least one process, found none");
  std::map<std::string, size_t> seen;
  int with_curve = 0;
  for (size_t i = 0; i < p.processes.size(); ++i) {
    const ProcessPlace& q = p.processes[i];
    if (q.name.empty()) fail(p.source, label(i, "") + ": expected a name, found an empty one");
    if (auto [it, fresh] = seen.emplace(q.name, i); !fresh)
      fail(p.source, error_message(label(i, q.name), "", "a name of its own",
                                   fmt::format("that of process {}", it->second)));
    if (q.host.empty() == q.ipc_dir.empty())
      fail(p.source, label(i, q.name) + ": expected \"host\" or \"ipc\", found " +
                         (q.host.empty() ? "neither" : "both"));
    // One colon is HOST:PORT written where only the address goes (IPv6 has several).
    if (std::count(q.host.begin(), q.host.end(), ':') == 1)
      fail(p.source, label(i, q.name) + ": expected an address without a port (the port goes apart), found " +
                         in_quotes(q.host));
    if (q.curve_secret.empty() != q.curve_public.empty())
      fail(p.source, label(i, q.name) +
                         ": expected both \"curve_secret\" and \"curve_public\" or neither, found " +
                         (q.curve_secret.empty() ? "only \"curve_public\"" : "only \"curve_secret\""));
    if (!q.curve_secret.empty()) ++with_curve;
  }
  // Mixed would leave some edges unencrypted without anyone having asked for that.
  if (with_curve != 0 && with_curve != static_cast<int>(p.processes.size())) {
    size_t i = 0;
    while (!p.processes[i].curve_secret.empty()) ++i;
    fail(p.source, error_message("", "", "CurveZMQ certificates for every process or for none",
                                 fmt::format("them for {} of {}, not for {}", with_curve, p.processes.size(),
                                             label(i, p.processes[i].name))));
  }
}

std::string json_string(const json& value, const std::string& key, const std::string& where,
                        const std::string& source) {
  if (!value.is_string())
    fail(source, where + ": expected a string for " + in_quotes(key) + ", found " + shown(value));
  return value.get<std::string>();
}

Placement parse_json(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(source, std::string("expected JSON, found text that does not parse: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("processes"))
    fail(source, "expected {\"processes\": [...]}, found " + shown(doc));
  for (const auto& [key, value] : doc.items())
    if (key != "processes") fail(source, "unknown key " + in_quotes(key) + "; expected only \"processes\"");
  const json& list = doc["processes"];
  if (!list.is_array()) fail(source, "expected an array for \"processes\", found " + shown(list));

  Placement p;
  p.source = source;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    if (!item.is_object()) fail(source, label(i, "") + ": expected an object, found " + shown(item));
    ProcessPlace q;
    if (item.contains("name")) q.name = json_string(item["name"], "name", label(i, ""), source);
    std::string where = label(i, q.name);
    for (const auto& [key, value] : item.items()) {
      if (std::find(std::begin(kProcessKeys), std::end(kProcessKeys), key) == std::end(kProcessKeys))
        fail(source, where + ": unknown key " + in_quotes(key) +
                         "; expected name, host, ipc, port, curve_secret or curve_public");
      if (key == "host") q.host = json_string(value, key, where, source);
      if (key == "ipc") q.ipc_dir = json_string(value, key, where, source);
      if (key == "curve_secret") q.curve_secret = json_string(value, key, where, source);
      if (key == "curve_public") q.curve_public = json_string(value, key, where, source);
      if (key == "port") {
        // A port given is a port meant: 0 ("the default") is only what leaving it out says.
        if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 65535)
          fail(source, where + ": expected a \"port\" in 1..65535, found " + shown(value));
        q.port = static_cast<uint16_t>(value.get<int64_t>());
      }
    }
    if (item.contains("port") && !item.contains("host"))
      fail(source, where + ": expected \"port\" only with \"host\" (tcp), found it without");
    // Prefixed or empty strings would otherwise reach ZeroMQ as odd endpoints.
    if (item.contains("host") && trim(q.host).empty())
      fail(source, where + ": expected an address for \"host\", found an empty one");
    if (item.contains("ipc") && trim(q.ipc_dir).empty())
      fail(source, where + ": expected a directory for \"ipc\", found an empty one");
    if (q.host.find("://") != std::string::npos || q.ipc_dir.find("://") != std::string::npos)
      fail(source, where + ": expected an address or a directory without a scheme, found " +
                       in_quotes(q.host.empty() ? q.ipc_dir : q.host));
    p.processes.push_back(std::move(q));
  }
  validate(p);
  return p;
}

Placement parse_compact(const std::string& text, const std::string& source) {
  const std::string expected = "NAME=tcp://HOST[:PORT] or NAME=ipc://DIR";
  Placement p;
  p.source = source;
  std::stringstream in(text);
  std::string entry;
  size_t i = 0;
  for (; std::getline(in, entry, ','); ++i) {
    entry = trim(entry);
    size_t eq = entry.find('=');
    if (eq == std::string::npos)
      fail(source, label(i, "") + ": expected " + expected + ", found " + in_quotes(entry));
    ProcessPlace q;
    q.name = trim(entry.substr(0, eq));
    std::string url = trim(entry.substr(eq + 1));
    std::string where = label(i, q.name);
    if (url.rfind("tcp://", 0) == 0) {
      std::string rest = url.substr(6), port;
      if (rest.rfind('[', 0) == 0) {  // [IPv6]
        size_t close = rest.find(']');
        if (close == std::string::npos || (close + 1 < rest.size() && rest[close + 1] != ':'))
          fail(source, where + ": expected tcp://[IPV6][:PORT], found " + in_quotes(url));
        q.host = rest.substr(1, close - 1);
        if (close + 1 < rest.size()) port = rest.substr(close + 2);
        if (close + 1 < rest.size() && port.empty())
          fail(source, where + ": expected a port in 1..65535 after ':', found none in " + in_quotes(url));
      } else {
        size_t colon = rest.find(':');
        q.host = rest.substr(0, colon);
        if (colon != std::string::npos) {
          port = rest.substr(colon + 1);
          if (port.find(':') != std::string::npos)
            fail(source, where + ": expected tcp://HOST[:PORT] (an IPv6 address in brackets), found " +
                             in_quotes(url));
          if (port.empty())
            fail(source, where + ": expected a port in 1..65535 after ':', found none in " + in_quotes(url));
        }
      }
      if (q.host.empty())
        fail(source, where + ": expected an address after tcp://, found none in " + in_quotes(url));
      if (!port.empty()) {
        std::optional<int> n = non_negative(port);
        if (!n || *n < 1 || *n > 65535)
          fail(source, where + ": expected a port in 1..65535, found " + in_quotes(port));
        q.port = static_cast<uint16_t>(*n);
      }
    } else if (url.rfind("ipc://", 0) == 0) {
      q.ipc_dir = url.substr(6);
      if (q.ipc_dir.empty()) fail(source, where + ": expected a directory after ipc://, found none");
    } else {
      fail(source, where + ": expected " + expected + ", found " + in_quotes(entry));
    }
    p.processes.push_back(std::move(q));
  }
  // getline drops a final empty field: "a=ipc://x," would pass for one process.
  if (!text.empty() && trim(text).back() == ',')
    fail(source, label(i, "") + ": expected " + expected + " after the last ',', found nothing");
  validate(p);
  return p;
}

// A compact placement starts with a name, never '{' or '[': either of those is JSON, well formed or not.
bool looks_like_json(const std::string& trimmed) { return trimmed.front() == '{' || trimmed.front() == '['; }

// Edge names come from users; a file name needs none of their '/' or blanks.
std::string file_name(const std::string& edge) {
  std::string out = edge;
  for (char& c : out) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return out;
}

// Whether `host` is an address rather than a name.
bool is_address(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 || inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

std::string endpoint(const Placement& p, const std::string& consumer, int k, const std::string& edge,
                     bool bind) {
  const ProcessPlace& q = p.at(consumer);
  std::string where =
      "placement from " + p.source + ": process " + in_quotes(consumer) + ", edge " + in_quotes(edge);
  if (k < 0) throw PipelineError(error_message(where, "", "an edge index >= 0", k));
  if (!q.ipc_dir.empty()) {
    if (edge.empty())
      throw PipelineError(error_message(where, "", "an edge name for the ipc file", "an empty one"));
    std::string dir = q.ipc_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return "ipc://" + (dir == "/" ? "" : dir) + "/" + file_name(edge) + ".ipc";
  }
  int first = q.port == 0 ? kDefaultPort : q.port;
  if (first + static_cast<int64_t>(k) > 65535)
    throw PipelineError(
        error_message(where, "", "a port up to 65535",
                      fmt::format("{} + {} = {}", first, k, first + static_cast<int64_t>(k))));
  // ZeroMQ binds addresses, not names: a host given by name (a Kubernetes
  // pod's DNS name) is bound on every interface and connected to by name.
  if (bind && !is_address(q.host)) return fmt::format("tcp://*:{}", first + k);
  bool ipv6 = q.host.find(':') != std::string::npos && q.host.front() != '[';
  return ipv6 ? fmt::format("tcp://[{}]:{}", q.host, first + k)
              : fmt::format("tcp://{}:{}", q.host, first + k);
}

std::optional<std::string> first_set(const Environment& env, std::initializer_list<const char*> names,
                                     std::string* which) {
  for (const char* name : names)
    if (auto v = env.get(name)) {
      *which = name;
      return v;
    }
  return std::nullopt;
}

// The trailing "-<n>" of a StatefulSet pod's name ("sensor-2" -> "2"); empty when it has none.
std::string ordinal_of(const std::string& pod) {
  size_t dash = pod.rfind('-');
  if (dash == std::string::npos) return {};
  std::string n = pod.substr(dash + 1);
  return all_digits(n) ? n : std::string{};
}

Role role_at(const Placement& placement, const std::string& rank_text, const std::string& from) {
  std::optional<int> rank = non_negative(rank_text);
  if (!all_digits(rank_text))
    throw PipelineError(error_message(from, "", "a non-negative integer rank", in_quotes(rank_text)));
  // All digits yet no int: a rank beyond any placement, as out of range as 3 of 3.
  if (!rank || *rank >= static_cast<int>(placement.processes.size()))
    throw PipelineError(error_message(fmt::format("{}, but the placement from {} has {} processes", from,
                                                  placement.source, placement.processes.size()),
                                      names_of(placement), "", ""));
  return Role{placement.processes[static_cast<size_t>(*rank)].name, from};
}

}  // namespace

Environment Environment::process() { return Environment{}; }

Environment Environment::of(std::map<std::string, std::string> values) {
  Environment e;
  e.fixed_ = std::move(values);
  return e;
}

std::optional<std::string> Environment::get(const std::string& name) const {
  if (fixed_) {
    auto it = fixed_->find(name);
    if (it == fixed_->end() || it->second.empty()) return std::nullopt;
    return it->second;
  }
  const char* v = std::getenv(name.c_str());
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

const ProcessPlace& Placement::at(const std::string& process) const {
  for (const ProcessPlace& q : processes)
    if (q.name == process) return q;
  throw PipelineError(error_message("placement from " + source, "", "a process named " + in_quotes(process),
                                    "only: " + names_of(*this)));
}

bool Placement::has(const std::string& process) const {
  return std::any_of(processes.begin(), processes.end(),
                     [&](const ProcessPlace& q) { return q.name == process; });
}

int Placement::rank_of(const std::string& process) const {
  return static_cast<int>(&at(process) - processes.data());
}

std::string Placement::bind_endpoint(const std::string& consumer, int k, const std::string& edge) const {
  return "@" + endpoint(*this, consumer, k, edge, /*bind=*/true);
}

std::string Placement::connect_endpoint(const std::string& consumer, int k, const std::string& edge) const {
  return ">" + endpoint(*this, consumer, k, edge, /*bind=*/false);
}

bool Placement::curve() const {
  return !processes.empty() && std::all_of(processes.begin(), processes.end(), [](const ProcessPlace& q) {
    return !q.curve_secret.empty() && !q.curve_public.empty();
  });
}

Placement parse_placement(const std::string& text, const std::string& source) {
  std::string t = trim(text);
  if (t.empty())
    fail(source,
         "expected JSON ({\"processes\": [...]}) or NAME=tcp://HOST[:PORT],NAME=ipc://DIR,..., found " +
             std::string(text.empty() ? "empty text" : "only blanks"));
  return looks_like_json(t) ? parse_json(t, source) : parse_compact(t, source);
}

Placement load_placement(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw PipelineError(error_message("placement file " + path, "", "a file", "a directory"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw PipelineError(error_message("placement file " + path,
                                      fmt::format("cannot be read: {}", std::strerror(errno)), "", ""));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw PipelineError(error_message("placement file " + path,
                                      fmt::format("cannot be read: {}", std::strerror(errno)), "", ""));
  return parse_placement(text.str(), path);
}

std::optional<Placement> find_placement(const std::string& given, const Environment& env) {
  auto from = [](const std::string& text, const std::string& source) {
    std::error_code ec;
    if (fs::exists(text, ec)) return load_placement(text);
    try {
      return parse_placement(text, source);
    } catch (const PipelineError& e) {
      // Text neither JSON nor holding a '=' was most likely meant as a file name.
      std::string t = trim(text);
      if (t.empty() || looks_like_json(t) || t.find('=') != std::string::npos) throw;
      throw PipelineError(std::string(e.what()) + " (nor is it a file that exists)");
    }
  };
  if (!given.empty()) return from(given, "--placement");
  if (auto text = env.get("SLUICE_PLACEMENT")) return from(*text, "SLUICE_PLACEMENT");
  return std::nullopt;
}

Placement local_placement(const std::vector<std::string>& processes, const std::string& dir) {
  Placement p;
  p.source = "default";
  if (dir.empty()) fail(p.source, "expected a directory for the ipc sockets, found an empty path");
  for (const std::string& name : processes) p.processes.push_back(ProcessPlace{name, "", dir, 0, "", ""});
  validate(p);
  return p;
}

std::optional<Role> find_role(const Placement& placement, const std::string& given, const Environment& env) {
  if (!given.empty()) {
    if (!placement.has(given))
      throw PipelineError(error_message(
          "--role " + given, "",
          fmt::format("a process of the placement from {} ({})", placement.source, names_of(placement)),
          "none of that name"));
    return Role{given, "--role"};
  }
  std::string which;
  if (auto rank = first_set(env, {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}, &which))
    return role_at(placement, *rank, which + "=" + *rank);
  // A StatefulSet names its pods NAME-0, NAME-1, ... and each pod's host name is its pod name.
  std::optional<std::string> pod = env.get("POD_NAME");
  std::string how;
  if (!pod && env.get("KUBERNETES_SERVICE_HOST")) {
    pod = env.get("HOSTNAME");
    how = " (HOSTNAME)";
  }
  if (!pod) return std::nullopt;
  std::string n = ordinal_of(*pod);
  if (n.empty()) return std::nullopt;
  return role_at(placement, n, "pod name " + *pod + how);
}

std::optional<int> launcher_size(const Environment& env) {
  std::string which;
  std::optional<std::string> size =
      first_set(env, {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"}, &which);
  if (!size) return std::nullopt;
  std::optional<int> n = non_negative(*size);
  if (!n || *n < 1)
    throw PipelineError(
        error_message(which + "=" + *size, "", "a positive integer world size", in_quotes(*size)));
  return n;
}

}  // namespace sluice
