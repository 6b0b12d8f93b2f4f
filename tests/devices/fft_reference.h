#pragma once
// What the fft tests check transforms against: the input signal fft.py
// (reference/fft.py) makes, numpy's values for it, and a naive DFT in long
// double for rows too long to list.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <vector>

#include <sluice/ops/ops.h>

namespace sluice::test {

// signal(n)[i] = (((i * 37) % 101) / 8 - 6) + i (((i * 11) % 13) / 4 - 1.5), as fft.py makes it.
template <typename C = complex128>
std::vector<C> signal(int64_t n) {
  std::vector<C> v;
  for (int64_t i = 0; i < n; ++i) {
    v.emplace_back(static_cast<double>((i * 37) % 101) / 8.0 - 6.0,
                   static_cast<double>((i * 11) % 13) / 4.0 - 1.5);
  }
  return v;
}

template <typename C, typename D>
double max_error(const std::vector<C>& got, const std::vector<D>& want) {
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i])));
  }
  return err;
}

inline double max_abs(const std::vector<complex128>& x) {
  double m = 0;
  for (const complex128& v : x) m = std::max(m, std::abs(v));
  return m;
}

// numpy.fft.fft(signal(16).reshape(2, 8)).
inline const std::vector<complex128> kFft2x8{{-6.875, 0.0},  {-3.3446699141100895, 2.6066017177982133},
                                             {-7.125, -8.0}, {-7.3446699141100895, 11.510407640085656},
                                             {-5.875, -4.5}, {-4.4053300858899105, -18.606601717798213},
                                             {-4.625, 5.5},  {-8.405330085889911, -0.5104076400856554},
                                             {-1.25, 0.5},   {6.0303300858899105, 5.856601717798213},
                                             {5.5, -8.0},    {8.530330085889911, 14.760407640085656},
                                             {6.75, 2.0},    {4.9696699141100895, -15.356601717798213},
                                             {8.0, 5.5},     {7.4696699141100895, 2.7395923599143446}};

// The DFT of one row in long double.
inline std::vector<complex128> naive_dft(const complex128* x, int64_t n) {
  std::vector<std::complex<long double>> twiddle;
  for (int64_t j = 0; j < n; ++j) {
    const long double angle =
        -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(j) / static_cast<long double>(n);
    twiddle.emplace_back(std::cos(angle), std::sin(angle));
  }
  std::vector<complex128> y;
  for (int64_t k = 0; k < n; ++k) {
    std::complex<long double> acc = 0;
    for (int64_t j = 0; j < n; ++j)
      acc += std::complex<long double>(x[j]) * twiddle[static_cast<size_t>((j * k) % n)];
    y.emplace_back(static_cast<double>(acc.real()), static_cast<double>(acc.imag()));
  }
  return y;
}

}  // namespace sluice::test
