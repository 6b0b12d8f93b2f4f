#include <sluice/ops/detail/builders_common.h>

#include <cstring>
#include <optional>
#include <type_traits>

#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/ops/detail/results.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::detail {
namespace {

bool is_integral_dtype(DType t) { return is_integer(t) || t == DType::Pred; }

template <typename T>
T load(const Literal& l) {
  T v;
  std::memcpy(&v, l.bytes.data(), sizeof(T));
  return v;
}

int64_t read_int(const Literal& l) {
  return visit_dtype(l.spec.dtype, [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(load<T>(l));
    return 0;
  });
}

complex128 read_complex(const Literal& l) {
  return visit_dtype(l.spec.dtype, [&]<typename T>() -> complex128 {
    if constexpr (std::is_same_v<T, half>)
      return f16_to_float(load<uint16_t>(l));
    else if constexpr (std::is_same_v<T, bfloat16>)
      return bf16_to_float(load<uint16_t>(l));
    else if constexpr (std::is_same_v<T, complex64>)
      return complex128(load<complex64>(l));
    else if constexpr (std::is_same_v<T, complex128>)
      return load<complex128>(l);
    else
      return static_cast<double>(load<T>(l));
  });
}

// A scalar literal in another dtype. Integers go to integers without a
// detour through double, so large s64 values stay exact.
Literal recast(const Literal& l, DType to) {
  if (is_integral_dtype(l.spec.dtype) && is_integer(to)) {
    const int64_t v = read_int(l);
    return visit_dtype(to, [&]<typename T>() {
      if constexpr (std::is_integral_v<T>) {
        Literal out{{to, Shape()}, std::vector<uint8_t>(sizeof(T))};
        const T t = static_cast<T>(v);
        std::memcpy(out.bytes.data(), &t, sizeof(T));
        return out;
      }
      return Literal::scalar(to, static_cast<double>(v));
    });
  }
  return Literal::scalar(to, read_complex(l));
}

}  // namespace

void require(const Expr& e, std::string_view op, std::string_view arg) {
  if (!e) throw ValueError(error_message(op, infer::cat("argument ", arg), "a traced Expr", "an empty Expr"));
}

bool is_weak(const Expr& e) { return e.node()->attrs.weak; }

DType merge_types(const std::vector<Expr>& xs) {
  std::optional<DType> strong, weak;
  for (const Expr& x : xs) {
    std::optional<DType>& m = is_weak(x) ? weak : strong;
    m = m ? promote(*m, x.dtype()) : x.dtype();
  }
  if (!strong) return *weak;
  DType t = *strong;
  for (const Expr& x : xs) {
    if (is_weak(x)) t = infer::merge_weak(t, x.dtype());
  }
  return t;
}

Expr convert(const Expr& e, DType dtype) {
  const Node& n = *e.node();
  if (n.attrs.weak && n.op == Op::Constant) {
    Attrs a;
    a.literal = std::make_shared<const Literal>(recast(*n.attrs.literal, dtype));
    return make(Op::Constant, {dtype, Shape()}, {}, std::move(a));
  }
  if (e.dtype() == dtype) return e;
  Attrs a;
  a.dtype = dtype;
  return make(Op::AsType, {dtype, e.shape()}, {e}, std::move(a));
}

Expr broadcast_to(const Expr& e, const Shape& shape) {
  if (e.shape() == shape) return e;
  Attrs a;
  for (int i = 0; i < e.rank(); ++i) a.axes.push_back(shape.rank() - e.rank() + i);
  return make(Op::Broadcast, {e.dtype(), shape}, {e}, std::move(a));
}

Expr to_operand(const Expr& e, DType dtype, const Shape& shape) {
  return broadcast_to(convert(e, dtype), shape);
}

Expr strengthen(const Expr& e) {
  if (!is_weak(e)) return e;
  return convert(e, e.dtype() == DType::F64 ? DType::F32 : e.dtype());
}

Expr make(Op op, Spec spec, const std::vector<Expr>& operands, Attrs attrs) {
  std::vector<NodePtr> nodes;
  nodes.reserve(operands.size());
  for (const Expr& e : operands) nodes.push_back(e.node());
  return Expr(Node::make(op, std::move(spec), std::move(nodes), std::move(attrs)));
}

Expr result_of(const NodePtr& node, int64_t index, const Spec& spec) {
  Attrs a;
  a.index = index;
  return Expr(Node::make(Op::Result, spec, {node}, std::move(a)));
}

Tuple make_results(Op op, const std::vector<Spec>& specs, const std::vector<Expr>& operands, Attrs attrs) {
  const Expr node = make(op, multi_result_spec(), operands, std::move(attrs));
  Tuple results;
  for (size_t i = 0; i < specs.size(); ++i)
    results.push_back(result_of(node.node(), static_cast<int64_t>(i), specs[i]));
  return results;
}

}  // namespace sluice::detail
