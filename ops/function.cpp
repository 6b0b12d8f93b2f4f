#include <sluice/ops/function.h>

#include <iterator>
#include <sstream>
#include <string>
#include <unordered_map>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/detail/hash.h>

namespace sluice {
namespace {

// Nodes reachable from `outputs`, operands before users, each once.
std::vector<const Node*> topological_order(const std::vector<Expr>& outputs) {
  std::vector<const Node*> order;
  std::unordered_map<const Node*, bool> done;  // false: on the stack, true: emitted
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const Expr& out : outputs) {
    if (done.count(out.node().get())) continue;
    stack.emplace_back(out.node().get(), 0);
    done[out.node().get()] = false;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands.size()) {
        const Node* operand = node->operands[next++].get();
        if (!done.count(operand)) {
          done[operand] = false;
          stack.emplace_back(operand, 0);
        }
        continue;
      }
      done[node] = true;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) fmt::format_to(std::back_inserter(s), "{}{}", i ? "," : "", v[i]);
  s += ']';
  return s;
}

// The attributes worth reading in a dump: those that differ from defaults.
std::string attrs_str(const Node& n) {
  const Attrs& a = n.attrs;
  const Attrs none;
  std::string s;
  auto list = [&s](const char* name, const std::vector<int64_t>& v) {
    if (v.empty()) return;
    s += ' ';
    s += name;
    s += '=';
    s += join(v);
  };
  list("axes", a.axes);
  list("dims", a.dims);
  list("starts", a.starts);
  list("lengths", a.lengths);
  list("strides", a.strides);
  if (!a.padding.empty()) {
    s += " padding=[";
    for (size_t i = 0; i < a.padding.size(); ++i) {
      const PadDim& p = a.padding[i];
      fmt::format_to(std::back_inserter(s), "{}{}:{}:{}", i ? "," : "", p.low, p.high, p.interior);
    }
    s += "]";
  }
  list("contract_a", a.contract_a);
  list("batch_a", a.batch_a);
  list("contract_b", a.contract_b);
  list("batch_b", a.batch_b);
  if (a.axis != none.axis) fmt::format_to(std::back_inserter(s), " axis={}", a.axis);
  if (a.keep_axes) s += " keep_axes";
  if (a.reverse) s += " reverse";
  if (a.weak) s += " weak";
  if (a.tie_break != none.tie_break) s += " tie_break=high";
  return s;
}

std::string constant_str(const Literal& l) {
  std::ostringstream os;
  if (l.spec.shape.rank() != 0) {
    os << '<' << l.spec.str() << '>';
    return os.str();
  }
  const void* p = l.bytes.data();
  switch (l.spec.dtype) {
    case DType::Pred: os << int{*static_cast<const uint8_t*>(p)}; break;
    case DType::S8: os << int{*static_cast<const int8_t*>(p)}; break;
    case DType::S16: os << *static_cast<const int16_t*>(p); break;
    case DType::S32: os << *static_cast<const int32_t*>(p); break;
    case DType::S64: os << *static_cast<const int64_t*>(p); break;
    case DType::U8: os << unsigned{*static_cast<const uint8_t*>(p)}; break;
    case DType::U16: os << *static_cast<const uint16_t*>(p); break;
    case DType::U32: os << *static_cast<const uint32_t*>(p); break;
    case DType::U64: os << *static_cast<const uint64_t*>(p); break;
    case DType::F16: os << f16_to_float(*static_cast<const uint16_t*>(p)); break;
    case DType::BF16: os << bf16_to_float(*static_cast<const uint16_t*>(p)); break;
    case DType::F32: os << *static_cast<const float*>(p); break;
    case DType::F64: os << *static_cast<const double*>(p); break;
    case DType::C64: os << *static_cast<const complex64*>(p); break;
    case DType::C128: os << *static_cast<const complex128*>(p); break;
  }
  return os.str();
}

}  // namespace

Function::Function(std::vector<Spec> inputs, std::vector<Expr> outputs)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (!outputs_[i]) {
      throw ValueError(error_message("Function", fmt::format("output {}", i), "an Expr", "an empty Expr"));
    }
  }
  for (const Node* n : topological_order(outputs_)) {
    if (n->op != Op::Parameter) continue;
    const int64_t i = n->attrs.index;
    if (i < 0 || static_cast<size_t>(i) >= inputs_.size()) {
      throw ValueError(error_message("Function", "parameter index",
                                     fmt::format("an index below {} (the input count)", inputs_.size()),
                                     fmt::format("parameter {}", i)));
    }
    if (n->spec != inputs_[static_cast<size_t>(i)]) {
      throw TypeError(error_message("Function", fmt::format("parameter {}", i),
                                    inputs_[static_cast<size_t>(i)], n->spec));
    }
  }
  detail::Hasher h;
  h.add(inputs_.size());
  for (const Spec& s : inputs_) {
    h.add(static_cast<uint64_t>(s.dtype)).add(static_cast<uint64_t>(s.shape.rank()));
    for (int64_t d : s.shape.dims()) h.add(static_cast<uint64_t>(d));
  }
  h.add(outputs_.size());
  for (const Expr& e : outputs_) h.add(e.node()->hash);
  hash_ = h.value();
}

std::vector<Spec> Function::output_specs() const {
  std::vector<Spec> specs;
  specs.reserve(outputs_.size());
  for (const Expr& e : outputs_) specs.push_back(e.spec());
  return specs;
}

bool Function::operator==(const Function& o) const {
  if (hash_ != o.hash_ || inputs_ != o.inputs_ || outputs_.size() != o.outputs_.size()) return false;
  std::vector<NodePtr> a, b;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    a.push_back(outputs_[i].node());
    b.push_back(o.outputs_[i].node());
  }
  return structurally_equal(a, b);
}

std::string Function::str() const {
  std::unordered_map<const Node*, size_t> id;
  std::string s;
  for (const Node* n : topological_order(outputs_)) {
    const size_t k = id.size();
    id[n] = k;
    fmt::format_to(std::back_inserter(s), "%{} = {}(", k, op_name(n->op));
    if (n->op == Op::Parameter) fmt::format_to(std::back_inserter(s), "{}", n->attrs.index);
    if (n->op == Op::Constant && n->attrs.literal) s += constant_str(*n->attrs.literal);
    for (size_t i = 0; i < n->operands.size(); ++i)
      fmt::format_to(std::back_inserter(s), "{}%{}", i ? ", " : "", id.at(n->operands[i].get()));
    s += ')';
    s += attrs_str(*n);
    s += " : ";
    s += n->spec.str();
    s += '\n';
  }
  s += "return";
  for (size_t i = 0; i < outputs_.size(); ++i)
    fmt::format_to(std::back_inserter(s), "{}%{}", i ? ", " : " ", id.at(outputs_[i].node().get()));
  s += '\n';
  return s;
}

Expr parameter(int64_t index, const Spec& spec) {
  if (index < 0) throw ValueError(error_message("parameter", "argument index", ">= 0", index));
  Attrs attrs;
  attrs.index = index;
  return Expr(Node::make(Op::Parameter, spec, {}, std::move(attrs)));
}

namespace detail {

Tuple as_tuple(Expr e) { return Tuple{std::move(e)}; }
Tuple as_tuple(Tuple t) { return t; }

void check_trace_arity(size_t params, size_t specs) {
  if (params != specs) {
    throw ValueError(
        error_message("trace", "", fmt::format("{} input specs (one per parameter of f)", params), specs));
  }
}

}  // namespace detail
}  // namespace sluice
