#pragma once
// The conformance cases of reference_cases.json, written by make_reference.py
// (which documents the encoding): an op, its builder's static arguments, the
// inputs, the expected output and a tolerance.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <sluice/ops/shape.h>

namespace sluice::conformance {

// A tensor's spec and its elements, laid out as sluice stores them.
struct CaseTensor {
  Spec spec;
  std::vector<uint8_t> bytes;
};

// An element passes when |found - expected| <= atol + rtol * |expected| or
// when it is at most `ulps` units in the last place away; all zero: exact.
// Non-finite expectations always have to match exactly.
struct Tolerance {
  double atol = 0, rtol = 0;
  int64_t ulps = 0;
  std::string str() const;
};

// A builder's static arguments, read by name. Absent keys read as the stated
// fallback; a present key of the wrong kind throws.
class CaseAttrs {
 public:
  CaseAttrs();
  explicit CaseAttrs(std::shared_ptr<const nlohmann::json> attrs);

  bool has(std::string_view key) const;
  std::vector<int64_t> ints(std::string_view key) const;               // {} when absent
  std::vector<std::vector<int64_t>> rows(std::string_view key) const;  // {} when absent
  int64_t integer(std::string_view key, int64_t fallback) const;
  bool flag(std::string_view key) const;  // false when absent
  std::string text(std::string_view key, std::string_view fallback) const;
  DType dtype(std::string_view key) const;
  // A plain number, and whether it was written as an integer (a weak int).
  struct Number {
    bool is_integer = false;
    int64_t i = 0;
    double d = 0;
  };
  Number number(std::string_view key) const;
  CaseTensor tensor(std::string_view key) const;

 private:
  std::shared_ptr<const nlohmann::json> attrs_;
};

struct Case {
  std::string op;
  std::string name;
  CaseAttrs attrs;
  std::vector<CaseTensor> inputs;
  CaseTensor expected;
  Tolerance tolerance;
};

// Every case of the file, in its order; throws std::runtime_error naming the
// file and the case on a malformed entry.
const std::vector<Case>& reference_cases();

}  // namespace sluice::conformance
