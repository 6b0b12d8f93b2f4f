// Executable: the checks every backend's run shares (arguments against the
// compiled inputs, donation), and the compile cache.

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <sluice/devices/detail/backend_impl.h>
#include <sluice/devices/detail/pointers.h>
#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/detail/loop_attrs.h>

namespace sluice {

struct Executable::State {
  std::shared_ptr<ExecutableImpl> impl;
  std::vector<Spec> outputs;
};

Executable::Executable(std::shared_ptr<ExecutableImpl> impl)
    : state_(std::make_shared<State>(State{impl, impl->function().output_specs()})) {}

const std::vector<Spec>& Executable::inputs() const {
  if (!state_)
    throw DeviceError(
        error_message("executable", "empty (default-constructed); use sluice::compile", "", ""));
  return state_->impl->function().inputs();
}

const std::vector<Spec>& Executable::outputs() const {
  if (!state_)
    throw DeviceError(
        error_message("executable", "empty (default-constructed); use sluice::compile", "", ""));
  return state_->outputs;
}

Device Executable::device() const {
  if (!state_)
    throw DeviceError(
        error_message("executable", "empty (default-constructed); use sluice::compile", "", ""));
  return state_->impl->device();
}

namespace {

std::string spec_list(const std::vector<Spec>& specs) {
  std::string s;
  for (const Spec& spec : specs) s += (s.empty() ? "" : ", ") + spec.str();
  return "(" + s + ")";
}

// Says what is wrong with argument i: called only when check_argument
// found it wrong, so that a good call formats nothing (every run passes
// there: its messages cost more than the run of a small function).
[[noreturn, gnu::cold, gnu::noinline]] void refuse_argument(size_t i, const Tensor& arg, const Spec& expected,
                                                            Device device) {
  const std::string what = fmt::format("argument {}", i);
  const std::string live = fmt::format("a live {} tensor", expected);
  if (!arg)
    throw DeviceError(error_message("run", what, fmt::format("a {} tensor", expected), "an empty Tensor"));
  switch (arg.buffer()->state.load(std::memory_order_acquire)) {
    case Buffer::State::Live: break;
    case Buffer::State::Donated:
      throw DeviceError(error_message(
          "run", what, live,
          fmt::format("the {} tensor was donated to an earlier run and is no longer valid", arg.spec())));
    case Buffer::State::Deallocated:
      throw DeviceError(
          error_message("run", what, live, fmt::format("the {} tensor was deallocated", arg.spec())));
  }
  if (arg.dtype() != expected.dtype) throw TypeError(error_message("run", what, expected, arg.spec()));
  if (arg.shape() != expected.shape) throw ShapeError(error_message("run", what, expected, arg.spec()));
  throw DeviceError(error_message(
      "run", what, fmt::format("a tensor on {}", device.str()),
      fmt::format("one on {} (move it with to() or transfer())", arg.buffer()->device.str())));
}

void check_argument(size_t i, const Tensor& arg, const Spec& expected, Device device) {
  if (!arg || arg.buffer()->state.load(std::memory_order_acquire) != Buffer::State::Live ||
      arg.dtype() != expected.dtype || arg.shape() != expected.shape || !(arg.buffer()->device == device))
    refuse_argument(i, arg, expected, device);
}

}  // namespace

std::vector<Tensor> Executable::run(const std::vector<Tensor>& args, const RunOptions& options) const {
  const std::vector<Spec>& specs = inputs();
  if (args.size() != specs.size())
    throw ValueError(error_message("run", "", fmt::format("{} arguments {}", specs.size(), spec_list(specs)),
                                   args.size()));
  Device dev = device();
  for (size_t i = 0; i < args.size(); ++i) check_argument(i, args[i], specs[i], dev);

  // Off the heap for the usual handful of arguments: a small run costs a
  // few hundred nanoseconds, an allocation tens.
  Pointers<bool> donated(args.size()), listed(args.size());
  for (size_t d : options.donate) {
    if (d >= args.size())
      throw ValueError(
          error_message("run", "donate", fmt::format("argument indices below {}", args.size()), d));
    if (listed[d])
      throw ValueError(error_message("run", "donate", "each argument listed once",
                                     fmt::format("argument {} listed twice", d)));
    listed[d] = true;
    donated[d] = !args[d].buffer()->read_only;
  }
  Pointers<BufferPtr> buffers(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const BufferPtr& b = args[i].buffer();
    // A donated buffer is overwritten: it may not also be read as another argument.
    if (donated[i])
      for (size_t j = 0; j < args.size(); ++j)
        if (j != i && args[j].buffer() == b)
          throw ValueError(
              error_message("run", fmt::format("donate: argument {}", i), "a buffer no other argument reads",
                            fmt::format("it shares its buffer with argument {} and cannot be donated", j)));
    buffers[i] = b;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!donated[i]) continue;
    Buffer::State live = Buffer::State::Live;
    if (!buffers[i]->state.compare_exchange_strong(live, Buffer::State::Donated))
      throw DeviceError(error_message("run", fmt::format("argument {}", i), "a live buffer",
                                      "one donated or deallocated by another thread"));
  }

  std::vector<BufferPtr> out = state_->impl->run(buffers.span(), donated.span(), options.output_memory);
  std::vector<Tensor> result;
  result.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) result.emplace_back(state_->outputs[i], std::move(out[i]));
  return result;
}

// ---------------------------------------------------------------- compile cache
namespace {

struct CacheKey {
  uint64_t hash;
  const Client* client;
  int device_id;
  bool operator==(const CacheKey&) const = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return static_cast<size_t>(k.hash ^ (reinterpret_cast<uintptr_t>(k.client) * 0x9e3779b97f4a7c15ULL) ^
                               static_cast<uint64_t>(k.device_id));
  }
};

struct CompileCache {
  std::mutex mutex;
  // Functions with equal hashes are told apart by structural equality.
  std::unordered_multimap<CacheKey, std::pair<Function, Executable>, CacheKeyHash> entries;

  const Executable* find(const CacheKey& key, const Function& f) {
    auto [lo, hi] = entries.equal_range(key);
    for (auto it = lo; it != hi; ++it)
      if (it->second.first == f) return &it->second.second;
    return nullptr;
  }
};

CompileCache& cache() {
  static CompileCache c;
  return c;
}

CacheKey key_of(const Function& f, Device device) { return {f.hash(), &device.client(), device.id()}; }

// The dtype an op is asked about: its (selected) operand's; a leaf's own.
DType operand_dtype(const Node& n) {
  if (n.operands.empty()) return n.spec.dtype;
  return n.operands[n.op == Op::Select ? 1 : 0]->spec.dtype;
}

// Why `backend` cannot run node n, or nothing.
std::optional<std::string> missing(const Node& n, const Capabilities& caps, const Backend& backend,
                                   std::string_view platform) {
  const std::string_view op = op_name(n.op);
  if (!caps.supports(n.op)) return fmt::format("op {} is not implemented on backend {}", op, platform);
  // A node with several results has a placeholder spec: its results have theirs.
  if (!has_several_results(n.op) && !caps.supports(n.spec.dtype))
    return fmt::format("dtype {} (in op {}) is not supported on backend {}", dtype_name(n.spec.dtype), op, platform);
  const DType operand = operand_dtype(n);
  if (!caps.supports(n.op, operand))
    return fmt::format("op {} on {} operands is not implemented on backend {}", op, dtype_name(operand), platform);
  if (std::optional<std::string> why = backend.declines(n))
    return fmt::format("op {} ({}) is not implemented on backend {}: {}", op, n.spec, platform, *why);
  return std::nullopt;
}

}  // namespace

std::vector<std::string> unsupported(const Function& f, Device device) {
  const Capabilities caps = device.client().capabilities();
  const Backend& backend = device.backend();
  std::vector<std::string> found;
  std::vector<const Node*> stack;
  std::unordered_set<const Node*> seen;
  for (const Expr& e : f.outputs()) stack.push_back(e.node().get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (std::optional<std::string> why = missing(*n, caps, backend, device.platform()))
      if (std::find(found.begin(), found.end(), *why) == found.end()) found.push_back(std::move(*why));
    for (const NodePtr& o : n->operands) stack.push_back(o.get());
    if (n->attrs.loop)  // a loop's bodies run on the backend too
      for (const Function* body : {&n->attrs.loop->body, &n->attrs.loop->cond})
        for (const Expr& e : body->outputs()) stack.push_back(e.node().get());
    if (n->attrs.block)  // and a block's fallback, wherever it has no native kernel
      for (const Expr& e : n->attrs.block->fallback.outputs()) stack.push_back(e.node().get());
  }
  return found;
}

namespace {

// Every node of f must be one the backend runs: an op a backend lacks fails
// here, at compile time, never at run time.
void check_capabilities(const Function& f, Device device) {
  const std::vector<std::string> lacking = unsupported(f, device);
  if (lacking.empty()) return;
  std::string all;
  for (const std::string& why : lacking) all += (all.empty() ? "" : "; ") + why;
  throw DeviceError(error_message("compile", all, "", ""));
}

}  // namespace

Executable compile(const Function& f, Device device) {
  if (f.outputs().empty())
    throw ValueError(error_message("compile", "", "a function with at least one output", "none"));
  CacheKey key = key_of(f, device);
  CompileCache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    if (const Executable* e = c.find(key, f)) return *e;
  }
  check_capabilities(f, device);
  Executable compiled(std::shared_ptr<ExecutableImpl>(device.backend().compile(f, device)));
  std::lock_guard lock(c.mutex);
  // Another thread may have compiled the same function meanwhile: keep one.
  if (const Executable* e = c.find(key, f)) return *e;
  c.entries.emplace(key, std::make_pair(f, compiled));
  return compiled;
}

bool jit_cached(const Function& f, Device device) {
  CompileCache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.find(key_of(f, device), f) != nullptr;
}

}  // namespace sluice
