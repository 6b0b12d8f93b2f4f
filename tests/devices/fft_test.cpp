// fft and ifft on the host through the public API (FFTW along the last
// axis): against numpy.fft (tests/devices/reference/fft.py), against a naive
// DFT in long double for long rows, round trips, donated (in-place) and
// unaligned user buffers.
// Tolerances: c128 within 1e-12 and c64 within 1e-5 of the largest output
// magnitude (FFTW's error grows as log n times the type's epsilon).

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/devices/fft_reference.h"

namespace sluice {
namespace {

using test::kFft2x8;
using test::max_abs;
using test::max_error;
using test::naive_dft;
using test::signal;

enum class Direction { Forward, Inverse };

Executable transform(Direction d, const Spec& spec) {
  return compile(trace({spec}, [d](Expr x) { return d == Direction::Forward ? fft(x) : ifft(x); }));
}

template <typename C>
std::vector<C> values(const Tensor& t) {
  const std::span<const C> v = t.data<C>();
  return {v.begin(), v.end()};
}

template <typename C>
std::vector<C> run(Direction d, const Shape& s, const std::vector<C>& x) {
  return values<C>(transform(d, {dtype_of<C>(), s}).run({tensor(x, s)})[0]);
}

constexpr Direction kFft = Direction::Forward;
constexpr Direction kIfft = Direction::Inverse;

const std::vector<complex128> kIfft2x8{{-0.859375, 0.0},     {-1.050666260736239, -0.06380095501070693},
                                       {-0.578125, 0.6875},  {-0.5506662607362388, -2.3258252147247767},
                                       {-0.734375, -0.5625}, {-0.9180837392637612, 1.438800955010707},
                                       {-0.890625, -1.0},    {-0.4180837392637612, 0.32582521472477666},
                                       {-0.15625, 0.0625},   {0.9337087392637612, 0.34244904498929307},
                                       {1.0, 0.6875},        {0.6212087392637612, -1.9195752147247767},
                                       {0.84375, 0.25},      {1.066291260736239, 1.845050955010707},
                                       {0.6875, -1.0},       {0.7537912607362388, 0.7320752147247767}};

TEST(Fft, RowsMatchNumpyInBothPrecisions) {
  const std::vector<complex128> x = signal(16);
  EXPECT_LT(max_error(run(kFft, {2, 8}, x), kFft2x8), 1e-12 * max_abs(kFft2x8)) << "c128 fft";
  EXPECT_LT(max_error(run(kIfft, {2, 8}, x), kIfft2x8), 1e-12 * max_abs(kIfft2x8))
      << "c128 ifft, scaled by 1/n";
  const std::vector<complex64> x64 = signal<complex64>(16);
  EXPECT_LT(max_error(run(kFft, {2, 8}, x64), kFft2x8), 1e-5 * max_abs(kFft2x8)) << "c64 fft";
  EXPECT_LT(max_error(run(kIfft, {2, 8}, x64), kIfft2x8), 1e-5 * max_abs(kIfft2x8)) << "c64 ifft";
}

TEST(Fft, LengthsThatAreNotPowersOfTwoMatchNumpy) {
  const std::vector<complex128> want{{-6.625, 1.0},
                                     {-14.366583424670756, 2.7676270189221936},
                                     {-3.616347577293367, -10.103443703856346},
                                     {-2.75, -10.375},
                                     {-19.70544919243112, 1.587899247233577},
                                     {8.366583424670754, -5.892627018922193},
                                     {10.124999999999998, -3.4999999999999987},
                                     {8.500558020886318, 5.392627018922193},
                                     {-23.16955080756888, -8.587899247233576},
                                     {-2.249999999999999, 9.874999999999998},
                                     {-14.00865242270663, 3.103443703856344},
                                     {-12.500558020886318, -3.2676270189221928}};
  EXPECT_LT(max_error(run(kFft, {12}, signal(12)), want), 1e-12 * max_abs(want)) << "length 12";
  EXPECT_EQ(run(kFft, {1}, signal(1)), (std::vector<complex128>{{-6.0, -1.5}})) << "length 1 is the identity";
  EXPECT_EQ(run(kIfft, {3, 1}, signal(3)), signal(3)) << "length 1 rows, ifft";
}

TEST(Fft, ManyLongRowsMatchANaiveDft) {
  const int64_t rows = 100, n = 1000;
  const std::vector<complex128> x = signal(rows * n);
  const std::vector<complex128> y = run(kFft, {rows, n}, x);
  const std::vector<complex64> y64 = run(kFft, {rows, n}, std::vector<complex64>(x.begin(), x.end()));
  for (int64_t r : {int64_t{0}, int64_t{37}, rows - 1}) {
    const std::vector<complex128> want = naive_dft(x.data() + r * n, n);
    const std::vector<complex128> got(y.begin() + r * n, y.begin() + (r + 1) * n);
    const std::vector<complex64> got64(y64.begin() + r * n, y64.begin() + (r + 1) * n);
    EXPECT_LT(max_error(got, want), 1e-12 * max_abs(want)) << "c128 row " << r;
    EXPECT_LT(max_error(got64, want), 1e-5 * max_abs(want)) << "c64 row " << r;
  }
}

TEST(Fft, RoundTripsGiveTheInputBack) {
  // Lengths of other tests, so that their plans are reused: measuring a
  // plan takes a good part of a second.
  for (int64_t n : {int64_t{1000}, int64_t{97}}) {
    const int64_t rows = (int64_t{1} << 18) / n;
    const std::vector<complex64> x = signal<complex64>(rows * n);
    const std::vector<complex64> back = run(kIfft, {rows, n}, run(kFft, {rows, n}, x));
    EXPECT_LT(max_error(back, x), 1e-5 * 10) << "c64 round trip of length " << n;
  }
  const std::vector<complex128> x = signal(100 * 1000);
  EXPECT_LT(max_error(run(kFft, {100, 1000}, run(kIfft, {100, 1000}, x)), x), 1e-12 * 10)
      << "c128 round trip";
}

TEST(Fft, DonatedAndUnalignedBuffersGiveTheSameValues) {
  const int64_t rows = 64, n = 9;
  const Shape s{rows, n};
  const std::vector<complex64> x = signal<complex64>(rows * n);
  const Executable e = transform(kFft, c64({rows, n}));
  const std::vector<complex64> want = values<complex64>(e.run({tensor(x, s)})[0]);
  EXPECT_EQ(values<complex64>(e.run({tensor(x, s)}, {.donate = {0}})[0]), want)
      << "the argument's buffer donated to the result";
  // User memory one element in: 8-byte aligned, not 16.
  auto memory = std::make_shared<std::vector<complex64>>(x.size() + 1);
  std::copy(x.begin(), x.end(), memory->begin() + 1);
  const Tensor unaligned = wrap_host(c64({rows, n}), memory->data() + 1, memory);
  EXPECT_LT(max_error(values<complex64>(e.run({unaligned})[0]), want), 1e-5 * 10) << "unaligned";
}

}  // namespace
}  // namespace sluice
