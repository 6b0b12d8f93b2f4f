#include "tests/conformance/cases.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace sluice::conformance {
namespace {

using nlohmann::json;

double float_value(const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("expected a number or \"nan\"/\"inf\"/\"-inf\", found \"" + s + "\"");
  }
  return v.get<double>();
}

template <typename T>
void put(std::vector<uint8_t>& bytes, T v) {
  size_t at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

// One JSON element to its bytes. Integers go through the type they are
// stored as, so u64 above 2^63 and s64 below -2^53 stay exact.
void put_element(std::vector<uint8_t>& bytes, DType t, const json& v) {
  switch (t) {
    case DType::Pred: put<uint8_t>(bytes, v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0); break;
    case DType::S8: put(bytes, v.get<int8_t>()); break;
    case DType::S16: put(bytes, v.get<int16_t>()); break;
    case DType::S32: put(bytes, v.get<int32_t>()); break;
    case DType::S64: put(bytes, v.get<int64_t>()); break;
    case DType::U8: put(bytes, v.get<uint8_t>()); break;
    case DType::U16: put(bytes, v.get<uint16_t>()); break;
    case DType::U32: put(bytes, v.get<uint32_t>()); break;
    case DType::U64: put(bytes, v.get<uint64_t>()); break;
    case DType::F16: put(bytes, float_to_f16(static_cast<float>(float_value(v)))); break;
    case DType::BF16: put(bytes, float_to_bf16(static_cast<float>(float_value(v)))); break;
    case DType::F32: put(bytes, static_cast<float>(float_value(v))); break;
    case DType::F64: put(bytes, float_value(v)); break;
    case DType::C64:
      put(bytes,
          complex64(static_cast<float>(float_value(v.at(0))), static_cast<float>(float_value(v.at(1)))));
      break;
    case DType::C128: put(bytes, complex128(float_value(v.at(0)), float_value(v.at(1)))); break;
  }
}

CaseTensor parse_tensor(const json& j) {
  CaseTensor t;
  t.spec.dtype = dtype_from_name(j.at("dtype").get<std::string>(), "reference case dtype");
  t.spec.shape = Shape(j.at("shape").get<std::vector<int64_t>>());
  const json& values = j.at("values");
  if (static_cast<int64_t>(values.size()) != t.spec.size())
    throw std::runtime_error("expected " + std::to_string(t.spec.size()) + " values for " + t.spec.str() +
                             ", found " + std::to_string(values.size()));
  t.bytes.reserve(static_cast<size_t>(t.spec.bytes()));
  for (const json& v : values) put_element(t.bytes, t.spec.dtype, v);
  return t;
}

Tolerance parse_tolerance(const json& j) {
  Tolerance t;
  t.atol = j.value("atol", 0.0);
  t.rtol = j.value("rtol", 0.0);
  t.ulps = j.value("ulps", int64_t{0});
  return t;
}

std::vector<Case> load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path + " (regenerate it with make_reference.py)");
  json file = json::parse(in);
  std::vector<Case> cases;
  for (const json& j : file.at("cases")) {
    Case c;
    c.op = j.at("op").get<std::string>();
    c.name = j.at("name").get<std::string>();
    try {
      c.attrs = CaseAttrs(std::make_shared<const json>(j.at("attrs")));
      for (const json& input : j.at("inputs")) c.inputs.push_back(parse_tensor(input));
      c.expected = parse_tensor(j.at("expected"));
      c.tolerance = parse_tolerance(j.at("tol"));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": case " + c.op + " '" + c.name + "': " + e.what());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

std::string Tolerance::str() const {
  if (atol == 0 && rtol == 0 && ulps == 0) return "exact";
  std::ostringstream s;
  if (ulps) s << ulps << " ulps";
  if (ulps && (atol || rtol)) s << " or ";
  if (atol || rtol) s << "atol " << atol << " + rtol " << rtol;
  return s.str();
}

CaseAttrs::CaseAttrs() : attrs_(std::make_shared<const json>(json::object())) {}
CaseAttrs::CaseAttrs(std::shared_ptr<const json> attrs) : attrs_(std::move(attrs)) {}

bool CaseAttrs::has(std::string_view key) const { return attrs_->contains(key); }

std::vector<int64_t> CaseAttrs::ints(std::string_view key) const {
  return has(key) ? attrs_->at(key).get<std::vector<int64_t>>() : std::vector<int64_t>{};
}

std::vector<std::vector<int64_t>> CaseAttrs::rows(std::string_view key) const {
  return has(key) ? attrs_->at(key).get<std::vector<std::vector<int64_t>>>()
                  : std::vector<std::vector<int64_t>>{};
}

int64_t CaseAttrs::integer(std::string_view key, int64_t fallback) const {
  return has(key) ? attrs_->at(key).get<int64_t>() : fallback;
}

bool CaseAttrs::flag(std::string_view key) const { return has(key) && attrs_->at(key).get<bool>(); }

std::string CaseAttrs::text(std::string_view key, std::string_view fallback) const {
  return has(key) ? attrs_->at(key).get<std::string>() : std::string(fallback);
}

DType CaseAttrs::dtype(std::string_view key) const {
  return dtype_from_name(attrs_->at(key).get<std::string>(), "reference case attribute");
}

CaseAttrs::Number CaseAttrs::number(std::string_view key) const {
  const json& v = attrs_->at(key);
  Number n;
  n.is_integer = v.is_number_integer();
  n.d = v.get<double>();
  if (n.is_integer) n.i = v.get<int64_t>();
  return n;
}

CaseTensor CaseAttrs::tensor(std::string_view key) const { return parse_tensor(attrs_->at(key)); }

const std::vector<Case>& reference_cases() {
  static const std::vector<Case> cases = load(SLUICE_CONFORMANCE_CASES);
  return cases;
}

}  // namespace sluice::conformance
