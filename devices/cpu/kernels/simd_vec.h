#pragma once
// Shared by the *_isa.cpp files only: the vector types of the ISA this copy
// is compiled for (chosen by the -m flags devices/CMakeLists.txt passes with
// SLUICE_ISA), SLEEF's entry points for it, and the loop shapes every kernel
// is written in. Plain loops over __restrict pointers are left to the
// compiler to vectorize; SLEEF calls are made on explicit vectors.

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <sluice/devices/cpu/kernels/isa.h>

#ifndef SLUICE_ISA
#error "simd_vec.h is included only by *_isa.cpp files, compiled with -DSLUICE_ISA=<isa>"
#endif

namespace sluice::cpu::SLUICE_ISA {

#if defined(__AVX512F__)
inline constexpr Isa kIsa = Isa::Avx512;
using VecF = __m512;
using VecD = __m512d;
inline VecF load(const float* p) { return _mm512_loadu_ps(p); }
inline VecD load(const double* p) { return _mm512_loadu_pd(p); }
inline void store(float* p, VecF v) { _mm512_storeu_ps(p, v); }
inline void store(double* p, VecD v) { _mm512_storeu_pd(p, v); }
inline VecF broadcast(float v) { return _mm512_set1_ps(v); }
inline VecD broadcast(double v) { return _mm512_set1_pd(v); }
#define SLUICE_SLEEF_F(fn, ulp) VecFn<Sleef_##fn##f16_##ulp##avx512f>
#define SLUICE_SLEEF_D(fn, ulp) VecFn<Sleef_##fn##d8_##ulp##avx512f>
#elif defined(__AVX2__)
inline constexpr Isa kIsa = Isa::Avx2;
using VecF = __m256;
using VecD = __m256d;
inline VecF load(const float* p) { return _mm256_loadu_ps(p); }
inline VecD load(const double* p) { return _mm256_loadu_pd(p); }
inline void store(float* p, VecF v) { _mm256_storeu_ps(p, v); }
inline void store(double* p, VecD v) { _mm256_storeu_pd(p, v); }
inline VecF broadcast(float v) { return _mm256_set1_ps(v); }
inline VecD broadcast(double v) { return _mm256_set1_pd(v); }
#define SLUICE_SLEEF_F(fn, ulp) VecFn<Sleef_##fn##f8_##ulp##avx2>
#define SLUICE_SLEEF_D(fn, ulp) VecFn<Sleef_##fn##d4_##ulp##avx2>
#else
inline constexpr Isa kIsa = Isa::Sse4;
using VecF = __m128;
using VecD = __m128d;
inline VecF load(const float* p) { return _mm_loadu_ps(p); }
inline VecD load(const double* p) { return _mm_loadu_pd(p); }
inline void store(float* p, VecF v) { _mm_storeu_ps(p, v); }
inline void store(double* p, VecD v) { _mm_storeu_pd(p, v); }
inline VecF broadcast(float v) { return _mm_set1_ps(v); }
inline VecD broadcast(double v) { return _mm_set1_pd(v); }
#define SLUICE_SLEEF_F(fn, ulp) VecFn<Sleef_##fn##f4_##ulp##sse4>
#define SLUICE_SLEEF_D(fn, ulp) VecFn<Sleef_##fn##d2_##ulp##sse4>
#endif

// Lanes of 32-bit integers as wide as VecF. VecF and VecI are GCC vector
// types: arithmetic, comparisons (giving VecI masks), `mask ? a : b` and
// casts between them (reinterpreting bits) work with plain operators.
using VecI = int32_t __attribute__((vector_size(sizeof(VecF))));

// x86 min/max: the second operand when the comparison fails, so
// min_ps(c, x) keeps a NaN x and clamps the rest to at most c.
inline VecF min_ps(VecF a, VecF b) {
#if defined(__AVX512F__)
  return _mm512_maskz_min_ps(0xffff, a, b);  // maskz: see f16_from in elementwise_convert_isa.cpp
#elif defined(__AVX2__)
  return _mm256_min_ps(a, b);
#else
  return _mm_min_ps(a, b);
#endif
}
inline VecF max_ps(VecF a, VecF b) {
#if defined(__AVX512F__)
  return _mm512_maskz_max_ps(0xffff, a, b);
#elif defined(__AVX2__)
  return _mm256_max_ps(a, b);
#else
  return _mm_max_ps(a, b);
#endif
}

// The lanes of a comparison's mask as bits, lane i in bit i.
inline int lane_bits(VecI mask) {
#if defined(__AVX512F__)
  return _mm512_movepi32_mask(__m512i(mask));
#elif defined(__AVX2__)
  return _mm256_movemask_ps(VecF(mask));
#else
  return _mm_movemask_ps(VecF(mask));
#endif
}
inline constexpr int kAllLanes = (1 << (sizeof(VecF) / sizeof(float))) - 1;

// 1 / d for finite d >= 1: on AVX-512 rcp14 and one Newton step (relative
// error about 2^-27, a fraction of an ulp more than a division, in a
// fraction of its time); elsewhere a division.
inline VecF reciprocal(VecF d) {
#if defined(__AVX512F__)
  VecF r = _mm512_maskz_rcp14_ps(0xffff, d);  // maskz: see min_ps
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f)), r);
#else
  return 1.0f / d;
#endif
}

// Forces v to be computed (rounded) here: the compiler may not fuse the
// multiply that made it with the add that uses it into one FMA.
template <typename V> inline V rounded(V v) {
  asm("" : "+v"(v));
  return v;
}

inline VecF fmadd(VecF a, VecF b, VecF c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;  // no FMA before AVX2: two roundings
#endif
}

template <typename T> struct VecOf;
template <> struct VecOf<float> { using type = VecF; };
template <> struct VecOf<double> { using type = VecD; };
template <typename T> using Vec = typename VecOf<T>::type;
template <typename T> inline constexpr int64_t kLanes = sizeof(Vec<T>) / sizeof(T);

// A vector function (a SLEEF entry point) as a functor type: SLEEF declares
// its functions with attributes that a function-pointer template parameter
// of a plain type would not accept.
template <auto F>
struct VecFn {
  template <typename... V> auto operator()(V... v) const { return F(v...); }
};

// out[i] = f(a[i]) (and f(a[i], b[i])) for a vector functor f; the tail is
// padded through a local vector so that every lane f sees is initialised.
template <typename T, typename F>
void vmap(T* out, const T* a, int64_t n, F f = {}) {
  constexpr int64_t w = kLanes<T>;
  int64_t i = 0;
  for (; i + w <= n; i += w) store(out + i, f(load(a + i)));
  if (i < n) {
    alignas(64) T in[w] = {}, res[w];
    std::memcpy(in, a + i, static_cast<size_t>(n - i) * sizeof(T));
    store(res, f(load(in)));
    std::memcpy(out + i, res, static_cast<size_t>(n - i) * sizeof(T));
  }
}

template <typename T, typename F>
void vmap(T* out, const T* a, const T* b, int64_t n) {
  constexpr int64_t w = kLanes<T>;
  int64_t i = 0;
  for (; i + w <= n; i += w) store(out + i, F{}(load(a + i), load(b + i)));
  if (i < n) {
    alignas(64) T in_a[w] = {}, in_b[w] = {}, res[w];
    std::memcpy(in_a, a + i, static_cast<size_t>(n - i) * sizeof(T));
    std::memcpy(in_b, b + i, static_cast<size_t>(n - i) * sizeof(T));
    store(res, F{}(load(in_a), load(in_b)));
    std::memcpy(out + i, res, static_cast<size_t>(n - i) * sizeof(T));
  }
}

// Complex values as interleaved parts (layout of std::complex), with no
// operators: std::complex's are out-of-line templates (see isa.h).
template <typename F> struct Cx { F re, im; };

template <typename T> inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <typename T> inline constexpr bool kIsInt = std::is_integral_v<T>;

// Plain elementwise loops the compiler vectorizes; f is a stateless functor.
template <typename O, typename A, typename F>
void loop1(void* out, const void* a, int64_t n) {
  O* __restrict o = static_cast<O*>(out);
  const A* __restrict x = static_cast<const A*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = F{}(x[i]);
}

template <typename O, typename A, typename F>
void loop2(void* out, const void* a, const void* b, int64_t n) {
  O* __restrict o = static_cast<O*>(out);
  const A* __restrict x = static_cast<const A*>(a);
  const A* __restrict y = static_cast<const A*>(b);
  for (int64_t i = 0; i < n; ++i) o[i] = F{}(x[i], y[i]);
}

// Kernel-shaped wrappers (isa.h's Kernel signature) around the loops above.
template <typename O, typename A, typename F>
void loop3(void* out, const void* a, const void* b, const void* c, int64_t n) {
  O* __restrict o = static_cast<O*>(out);
  const A* __restrict x = static_cast<const A*>(a);
  const A* __restrict y = static_cast<const A*>(b);
  const A* __restrict z = static_cast<const A*>(c);
  for (int64_t i = 0; i < n; ++i) o[i] = F{}(x[i], y[i], z[i]);
}

template <typename O, typename A, typename F>
void unary_kernel(void* out, const void* a, const void*, const void*, int64_t n) {
  loop1<O, A, F>(out, a, n);
}
template <typename O, typename A, typename F>
void binary_kernel(void* out, const void* a, const void* b, const void*, int64_t n) {
  loop2<O, A, F>(out, a, b, n);
}

template <typename O, typename A, typename F>
void ternary_kernel(void* out, const void* a, const void* b, const void* c, int64_t n) {
  loop3<O, A, F>(out, a, b, c, n);
}

inline void set(KernelTable& t, Op op, DType d, Kernel k) {
  t.op[static_cast<int>(op)][static_cast<int>(d)] = k;
}

// The parts of this ISA's table, one per file.
void fill_arith_kernels(KernelTable& t);    // elementwise_isa.cpp
void fill_math_kernels(KernelTable& t);     // elementwise_math_isa.cpp
void fill_convert_kernels(KernelTable& t);  // elementwise_convert_isa.cpp
void fill_block_kernels(KernelTable& t);    // blocks_isa.cpp (after the math: it uses exp)

}  // namespace sluice::cpu::SLUICE_ISA
