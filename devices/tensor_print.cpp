// Printing tensors as Nx inspects them: the type, then nested rows, elided
// past a limit so that a 16M-element tensor prints in a few lines.

#include <charconv>
#include <cmath>
#include <sstream>

#include <sluice/devices/backend.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {
namespace {

constexpr int64_t kPrintLimit = 50;  // elements shown before "..." (Nx's default limit)

template <typename F>
std::string format_float(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back exactly
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

template <typename T>
std::string format_element(const T& v) {
  if constexpr (std::is_same_v<T, half>) return format_float(f16_to_float(v.bits));
  else if constexpr (std::is_same_v<T, bfloat16>) return format_float(bf16_to_float(v.bits));
  else if constexpr (std::is_floating_point_v<T>) return format_float(v);
  else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    std::string im = format_float(v.imag());
    return format_float(v.real()) + (im[0] == '-' ? "" : "+") + im + "i";
  } else if constexpr (std::is_signed_v<T>)
    return fmt::format("{}", static_cast<int64_t>(v));
  else
    return fmt::format("{}", static_cast<uint64_t>(v));
}

struct Printer {
  const Shape& shape;
  std::vector<std::string> elements;  // the first kPrintLimit elements, formatted
  std::ostringstream out;
  int64_t printed = 0;

  // Prints the sub-tensor at `axis` starting at flat element `offset`.
  void print(int axis, int64_t offset, int indent) {
    std::string pad(static_cast<size_t>(indent), ' ');
    int64_t stride = 1;
    for (int a = axis + 1; a < shape.rank(); ++a) stride *= shape.dim(a);
    bool innermost = axis == shape.rank() - 1;
    out << "[";
    for (int64_t i = 0; i < shape.dim(axis); ++i) {
      if (printed >= kPrintLimit) {
        out << (innermost ? "" : "\n" + pad + "  ") << "...";
        break;
      }
      if (!innermost) out << "\n" << pad << "  ";
      if (innermost) {
        out << elements[static_cast<size_t>(offset + i)];
        ++printed;
      } else {
        print(axis + 1, offset + i * stride, indent + 2);
      }
      if (i + 1 < shape.dim(axis)) out << (innermost ? ", " : ",");
    }
    if (!innermost) out << "\n" << pad;
    out << "]";
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!buffer_) return "Tensor<empty>";
  if (buffer_->state.load() != Buffer::State::Live)
    return spec_.str() + (buffer_->state.load() == Buffer::State::Donated ? " (donated)" : " (deallocated)");
  std::ostringstream head;
  head << spec_.str();
  if (!(device() == host())) head << " on " << device().str();
  Tensor h = to_host();
  int64_t shown = std::min(spec_.size(), kPrintLimit);
  std::vector<std::string> elements;
  visit_dtype(spec_.dtype, [&]<typename T>() {
    const T* p = static_cast<const T*>(h.host_data());
    for (int64_t i = 0; i < shown; ++i) {
      if constexpr (std::is_same_v<T, uint8_t>) {
        if (spec_.dtype == DType::Pred) {
          elements.push_back(p[i] ? "true" : "false");
          continue;
        }
      }
      elements.push_back(format_element(p[i]));
    }
  });
  if (spec_.shape.rank() == 0) return head.str() + "\n" + (elements.empty() ? "" : elements[0]);
  // Elements are visited in row-major order and printing stops at the limit,
  // so only the first kPrintLimit are ever formatted or read.
  Printer p{spec_.shape, std::move(elements), {}};
  p.print(0, 0, 0);
  return head.str() + "\n" + p.out.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace sluice
