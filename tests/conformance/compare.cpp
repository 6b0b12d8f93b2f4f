#include "tests/conformance/compare.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>

namespace sluice::conformance {
namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// The real value of a float element, widened to double exactly.
double real_at(DType t, const uint8_t* p) {
  switch (t) {
    case DType::F16: return f16_to_float(load<uint16_t>(p));
    case DType::BF16: return bf16_to_float(load<uint16_t>(p));
    case DType::F32: return load<float>(p);
    default: return load<double>(p);
  }
}

// The bits of a float as a signed count along the number line (-0 and +0
// both 0), so the difference of two is their distance in ulps.
int64_t ordered_bits(DType t, const uint8_t* p) {
  uint64_t bits = 0;
  int width = dtype_bits(t);
  std::memcpy(&bits, p, static_cast<size_t>(width / 8));
  uint64_t sign = uint64_t{1} << (width - 1);
  auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

std::string number_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream s;
  s.precision(std::numeric_limits<double>::max_digits10);
  s << v;
  return s.str();
}

std::string element_str(DType t, const uint8_t* p) {
  switch (t) {
    case DType::Pred:
      return load<uint8_t>(p) == 1   ? "true"
             : load<uint8_t>(p) == 0 ? "false"
                                     : "pred byte " + std::to_string(load<uint8_t>(p));
    case DType::S8: return std::to_string(load<int8_t>(p));
    case DType::S16: return std::to_string(load<int16_t>(p));
    case DType::S32: return std::to_string(load<int32_t>(p));
    case DType::S64: return std::to_string(load<int64_t>(p));
    case DType::U8: return std::to_string(load<uint8_t>(p));
    case DType::U16: return std::to_string(load<uint16_t>(p));
    case DType::U32: return std::to_string(load<uint32_t>(p));
    case DType::U64: return std::to_string(load<uint64_t>(p));
    case DType::C64: {
      auto c = load<complex64>(p);
      return number_str(c.real()) + (std::signbit(c.imag()) ? "" : "+") + number_str(c.imag()) + "i";
    }
    case DType::C128: {
      auto c = load<complex128>(p);
      return number_str(c.real()) + (std::signbit(c.imag()) ? "" : "+") + number_str(c.imag()) + "i";
    }
    default: return number_str(real_at(t, p));
  }
}

// A non-finite expectation must be matched exactly; true when `e` is one.
bool nonfinite_verdict(double e, double f, bool& ok) {
  if (std::isnan(e)) {
    ok = std::isnan(f);
    return true;
  }
  if (std::isinf(e)) {
    ok = f == e;
    return true;
  }
  return false;
}

bool within(double e, double f, const Tolerance& tol) {
  if (!std::isfinite(f)) return false;
  return std::abs(f - e) <= tol.atol + tol.rtol * std::abs(e);
}

bool real_matches(DType t, const uint8_t* e, const uint8_t* f, const Tolerance& tol, int64_t& ulps) {
  double ev = real_at(t, e), fv = real_at(t, f);
  bool ok = false;
  if (nonfinite_verdict(ev, fv, ok)) return ok;
  ulps = std::isfinite(fv) ? std::abs(ordered_bits(t, e) - ordered_bits(t, f)) : -1;
  return within(ev, fv, tol) || (ulps >= 0 && ulps <= tol.ulps);
}

template <typename C>
bool complex_matches(const uint8_t* e, const uint8_t* f, const Tolerance& tol) {
  auto ev = load<C>(e), fv = load<C>(f);
  bool re_ok = false, im_ok = false;
  bool re_special = nonfinite_verdict(ev.real(), fv.real(), re_ok);
  bool im_special = nonfinite_verdict(ev.imag(), fv.imag(), im_ok);
  if (re_special || im_special) {
    if (!re_special) re_ok = within(ev.real(), fv.real(), tol);
    if (!im_special) im_ok = within(ev.imag(), fv.imag(), tol);
    return re_ok && im_ok;
  }
  if (!std::isfinite(fv.real()) || !std::isfinite(fv.imag())) return false;
  double e_abs = std::abs(std::complex<double>(ev)),
         diff = std::abs(std::complex<double>(fv) - std::complex<double>(ev));
  return diff <= tol.atol + tol.rtol * e_abs;
}

std::string index_str(const Shape& shape, int64_t flat) {
  if (shape.rank() == 0) return "scalar";
  std::string s;
  auto strides = shape.strides();
  for (int axis = 0; axis < shape.rank(); ++axis) {
    s += '[';
    s += std::to_string(flat / strides[static_cast<size_t>(axis)]);
    s += ']';
    flat %= strides[static_cast<size_t>(axis)];
  }
  return s;
}

}  // namespace

std::vector<std::string> mismatches(const CaseTensor& expected, const std::vector<uint8_t>& found,
                                    const Tolerance& tolerance, size_t limit) {
  std::vector<std::string> lines;
  DType t = expected.spec.dtype;
  auto size = static_cast<size_t>(dtype_size(t));
  if (found.size() != expected.bytes.size()) {
    lines.push_back("expected " + std::to_string(expected.bytes.size()) + " bytes of data, found " +
                    std::to_string(found.size()));
    return lines;
  }
  size_t bad = 0;
  for (int64_t i = 0; i < expected.spec.size(); ++i) {
    const uint8_t* e = expected.bytes.data() + static_cast<size_t>(i) * size;
    const uint8_t* f = found.data() + static_cast<size_t>(i) * size;
    int64_t ulps = -1;
    bool ok = false;
    if (is_float(t))
      ok = real_matches(t, e, f, tolerance, ulps);
    else if (t == DType::C64)
      ok = complex_matches<complex64>(e, f, tolerance);
    else if (t == DType::C128)
      ok = complex_matches<complex128>(e, f, tolerance);
    else
      ok = std::memcmp(e, f, size) == 0;
    if (ok) continue;
    if (++bad > limit) continue;
    std::string line = "element " + index_str(expected.spec.shape, i) + ": expected " + element_str(t, e) +
                       ", found " + element_str(t, f);
    if (ulps > 0) line += " (" + std::to_string(ulps) + " ulps away)";
    lines.push_back(line);
  }
  if (bad > limit) lines.push_back("... and " + std::to_string(bad - limit) + " more mismatching elements");
  return lines;
}

std::string tensor_str(const CaseTensor& t, size_t limit) {
  std::string s = t.spec.str() + " [";
  auto size = static_cast<size_t>(dtype_size(t.spec.dtype));
  auto n = static_cast<size_t>(t.spec.size());
  for (size_t i = 0; i < n && i < limit; ++i) {
    if (i) s += ", ";
    s += element_str(t.spec.dtype, t.bytes.data() + i * size);
  }
  if (n > limit) s += ", ... (" + std::to_string(n) + " in all)";
  return s + "]";
}

}  // namespace sluice::conformance
