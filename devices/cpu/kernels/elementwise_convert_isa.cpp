// Conversion kernels of one ISA (compiled once per ISA, see simd_vec.h):
// as_type and bitcast between any two of the 15 dtypes, and the f16/bf16
// kernels that move those types between their stored bits and their compute
// representation (f32 holding a value exact in the narrow type).
//
// as_type follows Nx: floats to integers truncate toward zero and saturate,
// NaN becomes 0; anything to pred is x != 0; complex to real keeps the real
// part; real to complex has imaginary part 0; integers wrap to narrower
// integers. Conversions to f16/bf16 round once, to nearest even: a value
// that is not exact in f32 is first rounded to f32 *to odd*, which makes the
// second rounding give the correctly rounded result.

#include <limits>
#include <utility>

#include <sluice/devices/cpu/kernels/simd_vec.h>
#include <sluice/ops/dtype.h>

namespace sluice::cpu::SLUICE_ISA {
namespace {

template <DType D> struct ReprOf;
#define SLUICE_REPR(D, T) \
  template <> struct ReprOf<DType::D> { using type = T; };
SLUICE_REPR(Pred, uint8_t)
SLUICE_REPR(S8, int8_t)
SLUICE_REPR(S16, int16_t)
SLUICE_REPR(S32, int32_t)
SLUICE_REPR(S64, int64_t)
SLUICE_REPR(U8, uint8_t)
SLUICE_REPR(U16, uint16_t)
SLUICE_REPR(U32, uint32_t)
SLUICE_REPR(U64, uint64_t)
SLUICE_REPR(F16, float)
SLUICE_REPR(BF16, float)
SLUICE_REPR(F32, float)
SLUICE_REPR(F64, double)
SLUICE_REPR(C64, Cx<float>)
SLUICE_REPR(C128, Cx<double>)
#undef SLUICE_REPR
template <DType D> using Repr = typename ReprOf<D>::type;

template <typename T> struct IsCx : std::false_type {};
template <typename F> struct IsCx<Cx<F>> : std::true_type {};
template <typename T> inline constexpr bool kIsCx = IsCx<T>::value;

inline constexpr bool is_narrow(DType d) { return d == DType::F16 || d == DType::BF16; }

// ---- f16 and bf16 bits <-> f32

// bf16 is the upper half of an f32: round the lower half away (to nearest
// even). A NaN keeps its upper payload bits, so that a signalling NaN stays
// one (bitcasts through bf16 keep every bit); a NaN whose payload lay only
// in the lower half becomes quiet.
inline uint32_t bf16_round_bits(uint32_t u) {
  bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  uint32_t r = nan ? (u & 0x007f0000u ? u : u | 0x00400000u) : u + 0x7fffu + ((u >> 16) & 1u);
  return r & 0xffff0000u;
}

void round_bf16(void* out, const void* a, const void*, const void*, int64_t n) {
  auto* o = static_cast<uint32_t*>(out);
  auto* x = static_cast<const uint32_t*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = bf16_round_bits(x[i]);
}
void widen_bf16(void* out, const void* a, const void*, const void*, int64_t n) {
  auto* __restrict o = static_cast<uint32_t*>(out);
  auto* __restrict x = static_cast<const uint16_t*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = uint32_t(x[i]) << 16;
}
void narrow_bf16(void* out, const void* a, const void*, const void*, int64_t n) {
  auto* __restrict o = static_cast<uint16_t*>(out);
  auto* __restrict x = static_cast<const uint32_t*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = uint16_t(bf16_round_bits(x[i]) >> 16);
}

#if defined(__AVX512F__)
// The maskz forms: the plain ones start from an undefined register, which
// g++ 12 reports as maybe-uninitialized.
inline constexpr int64_t kF16Lanes = 16;
inline constexpr __mmask16 kAll = 0xffff;
inline __m256i f16_from(__m512 v) { return _mm512_maskz_cvtps_ph(kAll, v, _MM_FROUND_TO_NEAREST_INT); }
inline __m512 f16_to(__m256i h) { return _mm512_maskz_cvtph_ps(kAll, h); }
inline void f16_round_lanes(float* o, const float* x) { _mm512_storeu_ps(o, f16_to(f16_from(_mm512_loadu_ps(x)))); }
inline void f16_widen_lanes(float* o, const uint16_t* x) {
  _mm512_storeu_ps(o, f16_to(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))));
}
inline void f16_narrow_lanes(uint16_t* o, const float* x) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), f16_from(_mm512_loadu_ps(x)));
}
#elif defined(__F16C__)
inline constexpr int64_t kF16Lanes = 8;
inline void f16_round_lanes(float* o, const float* x) {
  _mm256_storeu_ps(o, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x), _MM_FROUND_TO_NEAREST_INT)));
}
inline void f16_widen_lanes(float* o, const uint16_t* x) {
  _mm256_storeu_ps(o, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))));
}
inline void f16_narrow_lanes(uint16_t* o, const float* x) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm256_cvtps_ph(_mm256_loadu_ps(x), _MM_FROUND_TO_NEAREST_INT));
}
#else
// No F16C before AVX2: the scalar conversions of ops/dtype.h, a lane at a time.
inline constexpr int64_t kF16Lanes = 1;
inline void f16_round_lanes(float* o, const float* x) { *o = f16_to_float(float_to_f16(*x)); }
inline void f16_widen_lanes(float* o, const uint16_t* x) { *o = f16_to_float(*x); }
inline void f16_narrow_lanes(uint16_t* o, const float* x) { *o = float_to_f16(*x); }
#endif

// Runs `lanes` over whole vectors, then over a zero-padded copy of the tail.
template <typename O, typename A, void (*Lanes)(O*, const A*)>
void f16_map(void* out, const void* a, const void*, const void*, int64_t n) {
  O* o = static_cast<O*>(out);
  const A* x = static_cast<const A*>(a);
  int64_t i = 0;
  for (; i + kF16Lanes <= n; i += kF16Lanes) Lanes(o + i, x + i);
  if (i < n) {
    A in[kF16Lanes] = {};
    O res[kF16Lanes];
    std::memcpy(in, x + i, static_cast<size_t>(n - i) * sizeof(A));
    Lanes(res, in);
    std::memcpy(o + i, res, static_cast<size_t>(n - i) * sizeof(O));
  }
}

// f16 <-> f32 of whole arrays. The hardware conversions quiet a signalling
// NaN; its bits are carried over instead (payload shifted, quiet bit
// included), so that a bitcast through f16 never changes a bit. A NaN whose
// payload lies only in the lower 13 bits of an f32 becomes a quiet f16 NaN.
void widen_f16(void* out, const void* a, const void*, const void*, int64_t n) {
  f16_map<float, uint16_t, f16_widen_lanes>(out, a, nullptr, nullptr, n);
  auto* __restrict o = static_cast<uint32_t*>(out);
  auto* __restrict x = static_cast<const uint16_t*>(a);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = x[i];
    const uint32_t nan = (h & 0x8000u) << 16 | 0x7f800000u | (h & 0x3ffu) << 13;
    o[i] = (h & 0x7fffu) > 0x7c00u ? nan : o[i];
  }
}
void narrow_f16(void* out, const void* a, const void*, const void*, int64_t n) {
  f16_map<uint16_t, float, f16_narrow_lanes>(out, a, nullptr, nullptr, n);
  auto* __restrict o = static_cast<uint16_t*>(out);
  auto* __restrict x = static_cast<const uint32_t*>(a);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = x[i], payload = (u >> 13) & 0x3ffu;
    const auto nan = static_cast<uint16_t>((u >> 16 & 0x8000u) | 0x7c00u | (payload != 0 ? payload : 0x200u));
    o[i] = (u & 0x7fffffffu) > 0x7f800000u ? nan : o[i];
  }
}

// ---- as_type

inline float bits_to_float(uint32_t u) { return __builtin_bit_cast(float, u); }
inline uint32_t float_to_bits(float f) { return __builtin_bit_cast(uint32_t, f); }

// The f32 nearest x rounded to odd (see the file comment). Integers of up
// to 24 significant bits and f32 values are exact already.
template <typename S>
float to_f32_odd(S x) {
  if constexpr (std::is_same_v<S, double>) {
    float f = float(x);
    bool inexact = double(f) != x && f - f == 0;  // f - f == 0: finite
    uint32_t u = float_to_bits(f);
    u -= (inexact && __builtin_fabs(double(f)) > __builtin_fabs(x)) ? 1u : 0u;
    return bits_to_float(inexact ? (u | 1u) : u);
  } else if constexpr (kIsInt<S> && sizeof(S) >= 4) {
    uint64_t m = x < 0 ? uint64_t(0) - uint64_t(x) : uint64_t(x);
    if (m < (uint64_t(1) << 24)) return float(x);
    int shift = 40 - __builtin_clzll(m);  // bit length - 24
    uint64_t top = (m >> shift) | ((m & ((uint64_t(1) << shift) - 1)) != 0);
    float r = float(top) * float(uint64_t(1) << shift);
    return x < 0 ? -r : r;
  } else {
    return float(x);
  }
}

// Float to integer: truncate toward zero, saturate, NaN to 0. The bounds
// converted to S are exact or (for the maximum) rounded up to a power of
// two, so the comparisons decide the saturating cases exactly.
template <typename D, typename S>
D float_to_int(S x) {
  constexpr S lo = S(std::numeric_limits<D>::min());
  constexpr S hi = S(std::numeric_limits<D>::max());
  D r = x <= lo ? std::numeric_limits<D>::min() : x >= hi ? std::numeric_limits<D>::max() : D(x);
  return x != x ? D(0) : r;
}

template <typename D, typename S>
D convert_real(S x) {
  if constexpr (kIsFloat<S> && kIsInt<D>) return float_to_int<D>(x); else return D(x);
}

template <DType From, DType To>
Repr<To> convert(Repr<From> x) {
  using S = Repr<From>;
  using D = Repr<To>;
  if constexpr (To == DType::Pred) {
    if constexpr (kIsCx<S>) return (x.re != 0) | (x.im != 0); else return x != 0;
  } else if constexpr (kIsCx<S> && kIsCx<D>) {
    return {decltype(D::re)(x.re), decltype(D::im)(x.im)};
  } else if constexpr (kIsCx<S>) {
    return convert<DType::F64, To>(double(x.re));
  } else if constexpr (kIsCx<D>) {
    using F = decltype(D::re);
    return {convert_real<F>(x), F(0)};
  } else if constexpr (is_narrow(To)) {
    return to_f32_odd(x);  // rounded to the narrow type by the kernel
  } else {
    return convert_real<D>(x);
  }
}

template <int From, int To>
void as_type_kernel(void* out, const void* a, const void*, const void*, int64_t n) {
  constexpr DType from = DType(From), to = DType(To);
  Repr<to>* __restrict o = static_cast<Repr<to>*>(out);
  const Repr<from>* __restrict x = static_cast<const Repr<from>*>(a);
  for (int64_t i = 0; i < n; ++i) o[i] = convert<from, to>(x[i]);
  if constexpr (to == DType::F16) f16_map<float, float, f16_round_lanes>(out, out, nullptr, nullptr, n);
  if constexpr (to == DType::BF16) round_bf16(out, out, nullptr, nullptr, n);
}

// ---- bitcast (between dtypes of one width)

// 16-bit values pass through their bits, so f16/bf16 (held as f32) are
// narrowed first and widened after.
template <int From, int To>
void bitcast16_kernel(void* out, const void* a, const void*, const void*, int64_t n) {
  constexpr DType from = DType(From), to = DType(To);
  constexpr int64_t kBlock = 256;
  uint16_t bits[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    int64_t m = n - i0 < kBlock ? n - i0 : kBlock;
    const void* src = static_cast<const uint8_t*>(a) + i0 * (is_narrow(from) ? 4 : 2);
    if constexpr (from == DType::F16) narrow_f16(bits, src, nullptr, nullptr, m);
    else if constexpr (from == DType::BF16) narrow_bf16(bits, src, nullptr, nullptr, m);
    else std::memcpy(bits, src, static_cast<size_t>(m) * 2);
    void* dst = static_cast<uint8_t*>(out) + i0 * (is_narrow(to) ? 4 : 2);
    if constexpr (to == DType::F16) widen_f16(dst, bits, nullptr, nullptr, m);
    else if constexpr (to == DType::BF16) widen_bf16(dst, bits, nullptr, nullptr, m);
    else std::memcpy(dst, bits, static_cast<size_t>(m) * 2);
  }
}

template <int Bytes>
void copy_kernel(void* out, const void* a, const void*, const void*, int64_t n) {
  std::memcpy(out, a, static_cast<size_t>(n) * Bytes);
}

struct NonZero {
  uint8_t operator()(uint8_t a) const { return a != 0; }
};

template <int From, int To>
Kernel bitcast_entry() {
  constexpr DType from = DType(From), to = DType(To);
  constexpr int bits_from = sizeof(Repr<from>) * 8 / (is_narrow(from) ? 2 : 1);
  constexpr int bits_to = sizeof(Repr<to>) * 8 / (is_narrow(to) ? 2 : 1);
  if constexpr (bits_from != bits_to) return nullptr;
  else if constexpr (to == DType::Pred) return unary_kernel<uint8_t, uint8_t, NonZero>;
  else if constexpr (bits_from == 16) return bitcast16_kernel<From, To>;
  else return copy_kernel<bits_from / 8>;
}

template <int From, int... To>
void fill_row(KernelTable& t, std::integer_sequence<int, To...>) {
  ((t.as_type[From][To] = as_type_kernel<From, To>), ...);
  ((t.bitcast[From][To] = bitcast_entry<From, To>()), ...);
}
template <int... From>
void fill_rows(KernelTable& t, std::integer_sequence<int, From...> all) {
  (fill_row<From>(t, all), ...);
}

}  // namespace

void fill_convert_kernels(KernelTable& t) {
  fill_rows(t, std::make_integer_sequence<int, kDTypeCount>{});
  constexpr int f16 = static_cast<int>(DType::F16), bf16 = static_cast<int>(DType::BF16);
  t.widen[f16] = widen_f16;
  t.narrow[f16] = narrow_f16;
  t.round[f16] = f16_map<float, float, f16_round_lanes>;
  t.widen[bf16] = widen_bf16;
  t.narrow[bf16] = narrow_bf16;
  t.round[bf16] = round_bf16;
}

}  // namespace sluice::cpu::SLUICE_ISA
