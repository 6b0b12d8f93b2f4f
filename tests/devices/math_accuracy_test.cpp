// Accuracy of the host backend's f32 math functions: each op is run through
// the public API over a sweep of the whole f32 range (every 4099th bit
// pattern, ~1M values: both signs, subnormals, huge arguments) plus special
// values, and compared with the double-precision libm result rounded to
// f32. The bound is 4 ulp wherever the reference is finite; where it is NaN
// or infinite the result must be the same. The max ulp error of each op is
// printed (and recorded as a test property).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice {
namespace {

constexpr double kMaxUlp = 4;

std::vector<float> sweep() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    auto u = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (float s : {1.0f, -1.0f}) {
    for (float f : {0.0f, kInf, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                    std::numeric_limits<float>::max(), 1.0f, 0.5f, 2.0f, 1e-30f, 1e30f, 1e38f, 0x1p100f, 3.14159274f,
                    1.57079637f, 88.7228394f, 89.0f, 104.0f, 9.0f, 0.75f, 1.0f - 0x1p-24f, 0x1p-24f}) {
      v.push_back(s * f);
    }
  }
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  return v;
}

// f32 values in an order where neighbours differ by one ulp.
int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? int64_t{INT32_MIN} - i : i;
}

struct UlpError {
  double max_ulp = 0;
  float worst_x = 0;
  int64_t special_mismatches = 0;
  std::string first_special;
};

void account(UlpError& e, float x, float got, double ref, const std::string& what) {
  float want = static_cast<float>(ref);
  if (std::isnan(want) || std::isinf(want)) {
    bool same = std::isnan(want) ? std::isnan(got) : got == want;
    if (!same && e.special_mismatches++ == 0) {
      e.first_special = what + "(" + std::to_string(x) + ") = " + std::to_string(got) + ", expected " +
                        std::to_string(want);
    }
    return;
  }
  double ulp = std::isnan(got) ? 1e30 : static_cast<double>(std::llabs(ordered(got) - ordered(want)));
  if (ulp > e.max_ulp) {
    e.max_ulp = ulp;
    e.worst_x = x;
  }
}

void report(const std::string& op, const UlpError& e) {
  std::cout << "[ accuracy ] " << op << ": max " << e.max_ulp << " ulp (at x = " << e.worst_x << ")\n";
  ::testing::Test::RecordProperty(op + "_max_ulp", std::to_string(e.max_ulp));
  EXPECT_LE(e.max_ulp, kMaxUlp) << op << " at x = " << e.worst_x;
  EXPECT_EQ(e.special_mismatches, 0) << op << ": NaN/infinity differs from libm, first: " << e.first_special;
}

std::vector<float> run_unary(Expr (*op)(Expr), const std::vector<float>& x) {
  auto n = static_cast<int64_t>(x.size());
  Executable e = compile(trace({f32({n})}, [op](Expr v) { return op(v); }));
  return e.run({tensor(x, Shape{n})})[0].to_vector<float>();
}

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double rsqrt_ref(double x) { return 1 / std::sqrt(x); }

// erf^-1 in double: Newton on erf (or on erfc near +-1, where 1 - |x| is
// exact and carries the information), in long double. erf is concave on
// y > 0, so Newton from the left of the root (sqrt(pi)/2 |x|, as
// erf(y) < 2y/sqrt(pi)) approaches it from the left, monotonically.
double erf_inv_ref(double x) {
  if (std::isnan(x) || std::fabs(x) > 1) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(x) == 1) return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (x == 0) return x;
  long double a = std::fabs(x), y = 0.88622692545275801365L * a;
  for (int i = 0; i < 200; ++i) {
    long double f = a < 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y);
    long double step = f / (1.1283791670955125738961589031L * std::exp(-y * y));
    y -= step;
    if (std::fabs(step) <= 1e-19L * std::fabs(y)) break;
  }
  return std::copysign(static_cast<double>(y), x);
}

struct UnaryCase {
  const char* name;
  Expr (*op)(Expr);
  double (*ref)(double);
};

class MathAccuracy : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(MathAccuracy, F32WithinFourUlpOfLibm) {
  const UnaryCase& c = GetParam();
  static const std::vector<float> x = sweep();
  std::vector<float> got = run_unary(c.op, x);
  UlpError e;
  for (size_t i = 0; i < x.size(); ++i) account(e, x[i], got[i], c.ref(x[i]), c.name);
  report(c.name, e);
}

double ref_exp(double x) { return std::exp(x); }
double ref_expm1(double x) { return std::expm1(x); }
double ref_log(double x) { return std::log(x); }
double ref_log1p(double x) { return std::log1p(x); }
double ref_sqrt(double x) { return std::sqrt(x); }
double ref_cbrt(double x) { return std::cbrt(x); }
double ref_sin(double x) { return std::sin(x); }
double ref_cos(double x) { return std::cos(x); }
double ref_tan(double x) { return std::tan(x); }
double ref_asin(double x) { return std::asin(x); }
double ref_acos(double x) { return std::acos(x); }
double ref_atan(double x) { return std::atan(x); }
double ref_sinh(double x) { return std::sinh(x); }
double ref_cosh(double x) { return std::cosh(x); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_asinh(double x) { return std::asinh(x); }
double ref_acosh(double x) { return std::acosh(x); }
double ref_atanh(double x) { return std::atanh(x); }
double ref_erf(double x) { return std::erf(x); }
double ref_erfc(double x) { return std::erfc(x); }

INSTANTIATE_TEST_SUITE_P(
    Ops, MathAccuracy,
    ::testing::Values(UnaryCase{"exp", sluice::exp, ref_exp}, UnaryCase{"expm1", sluice::expm1, ref_expm1},
                      UnaryCase{"log", sluice::log, ref_log}, UnaryCase{"log1p", sluice::log1p, ref_log1p},
                      UnaryCase{"sqrt", sluice::sqrt, ref_sqrt}, UnaryCase{"rsqrt", sluice::rsqrt, rsqrt_ref},
                      UnaryCase{"cbrt", sluice::cbrt, ref_cbrt}, UnaryCase{"sin", sluice::sin, ref_sin},
                      UnaryCase{"cos", sluice::cos, ref_cos}, UnaryCase{"tan", sluice::tan, ref_tan},
                      UnaryCase{"asin", sluice::asin, ref_asin}, UnaryCase{"acos", sluice::acos, ref_acos},
                      UnaryCase{"atan", sluice::atan, ref_atan}, UnaryCase{"sinh", sluice::sinh, ref_sinh},
                      UnaryCase{"cosh", sluice::cosh, ref_cosh}, UnaryCase{"tanh", sluice::tanh, ref_tanh},
                      UnaryCase{"asinh", sluice::asinh, ref_asinh}, UnaryCase{"acosh", sluice::acosh, ref_acosh},
                      UnaryCase{"atanh", sluice::atanh, ref_atanh}, UnaryCase{"sigmoid", sluice::sigmoid, sigmoid_ref},
                      UnaryCase{"erf", sluice::erf, ref_erf}, UnaryCase{"erfc", sluice::erfc, ref_erfc},
                      UnaryCase{"erf_inv", sluice::erf_inv, erf_inv_ref}),
    [](const ::testing::TestParamInfo<UnaryCase>& p) { return std::string(p.param.name); });

// Binary functions over a grid: 1500 x 700 values spread over the range.
std::vector<float> grid_axis(size_t n) {
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    auto u = static_cast<uint32_t>((uint64_t{1} << 32) / n * i + 12345);
    float f;
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -2.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    v.push_back(f);
  return v;
}

void check_binary(const char* name, Expr (*op)(Expr, Expr), double (*ref)(double, double)) {
  std::vector<float> xs = grid_axis(1500), ys = grid_axis(700), a, b;
  for (float x : xs) {
    for (float y : ys) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  auto n = static_cast<int64_t>(a.size());
  Executable e = compile(trace({f32({n}), f32({n})}, [op](Expr x, Expr y) { return op(x, y); }));
  std::vector<float> got = e.run({tensor(a, Shape{n}), tensor(b, Shape{n})})[0].to_vector<float>();
  UlpError err;
  for (size_t i = 0; i < a.size(); ++i) account(err, a[i], got[i], ref(a[i], b[i]), name);
  report(name, err);
}

double ref_pow(double x, double y) { return std::pow(x, y); }
double ref_atan2(double y, double x) { return std::atan2(y, x); }
double ref_fmod(double x, double y) { return std::fmod(x, y); }
double ref_divide(double x, double y) { return x / y; }

TEST(MathAccuracy, PowWithinFourUlp) { check_binary("pow", sluice::pow, ref_pow); }
TEST(MathAccuracy, Atan2WithinFourUlp) { check_binary("atan2", sluice::atan2, ref_atan2); }
TEST(MathAccuracy, RemainderIsExact) { check_binary("remainder", sluice::remainder, ref_fmod); }
TEST(MathAccuracy, DivideIsCorrectlyRounded) { check_binary("divide", sluice::divide, ref_divide); }

// erf_inv of f64 has its own implementation (Halley steps in double):
// within a few ulp of a long-double reference across (-1, 1).
TEST(MathAccuracy, ErfInvF64) {
  std::vector<double> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(i / 100000.0 * 0.999999);
  for (int k = 1; k <= 52; ++k) {
    x.push_back(1 - std::ldexp(1.0, -k));
    x.push_back(-1 + std::ldexp(1.0, -k));
    x.push_back(std::ldexp(1.0, -20 * k));
  }
  auto n = static_cast<int64_t>(x.size());
  Executable e = compile(trace({f64({n})}, [](Expr v) { return sluice::erf_inv(v); }));
  std::vector<double> got = e.run({tensor(x, Shape{n})})[0].to_vector<double>();
  double max_ulp = 0, worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = erf_inv_ref(x[i]);
    double ulp = std::fabs(got[i] - want) / (std::nextafter(std::fabs(want), INFINITY) - std::fabs(want));
    if (ulp > max_ulp) {
      max_ulp = ulp;
      worst = x[i];
    }
  }
  std::cout << "[ accuracy ] erf_inv f64: max " << max_ulp << " ulp (at x = " << worst << ")\n";
  EXPECT_LE(max_ulp, 8) << "erf_inv f64 at x = " << worst;
}

}  // namespace
}  // namespace sluice
