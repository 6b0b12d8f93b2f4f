#include <sluice/ops/random.h>

#include <array>
#include <cmath>
#include <limits>

#include <sluice/ops/detail/shape_inference.h>

namespace sluice {
namespace {

void check_key(std::string_view op, const Expr& key) {
  if (!key) infer::shape_error(op, "key", "a u32[2] key", "none");
  if (key.dtype() != DType::U32) infer::type_error(op, "key", "a u32[2] key", key.spec().str());
  if (key.shape() != Shape{2}) infer::shape_error(op, "key", "a u32[2] key", key.spec().str());
}

Expr element(const Expr& v, int64_t i) { return reshape(slice(v, {i}, {1}), Shape{}); }

Expr rotate_left(const Expr& x, int bits) { return (x << bits) | (x >> (32 - bits)); }

// n u32 values: threefry2x32 of the counters 0 .. n-1 (an odd count padded
// with a 0), first halves then second halves, as JAX's threefry_2x32 lays them.
Expr random_bits32(const Expr& key, int64_t n) {
  const int64_t half = (n + 1) / 2;
  Expr counts = iota(Spec{DType::U32, {n}});
  if (n % 2 == 1) counts = concatenate({counts, constant(std::vector<uint32_t>{0}, Shape{1})});
  Tuple y = threefry2x32(key, slice(counts, {0}, {half}), slice(counts, {half}, {half}));
  return slice(concatenate({y[0], y[1]}), {0}, {n});
}

// A float in [1, 2) from the top mantissa bits of `bits`, minus 1.
Expr unit_interval(const Expr& key, int64_t n, DType dtype) {
  if (dtype == DType::F64) {
    // 64-bit draws: the first n words high, the next n low (JAX's split of 2n).
    Expr words = as_type(random_bits32(key, 2 * n), DType::U64);
    Expr bits = (slice(words, {0}, {n}) << 32) | slice(words, {n}, {n});
    return bitcast((bits >> 12) | int64_t{0x3FF0000000000000}, DType::F64) - 1.0;
  }
  if (dtype == DType::F32) return bitcast((random_bits32(key, n) >> 9) | int64_t{0x3F800000}, DType::F32) - 1.0;
  // 16-bit floats as JAX draws them: `width` random bits per value, 16 for
  // f16 and 8 for bf16 (JAX draws 8 bits for a mantissa under 8 bits),
  // packed in the 32-bit words from their low end (value i is bits
  // width * (i % k) of word i / k, k values a word); the top mantissa bits
  // of each make a float in [1, 2). Never 1.0, as rounding an f32 draw could.
  const int width = dtype == DType::F16 ? 16 : 8, mantissa = dtype == DType::F16 ? 10 : 7;
  const int64_t per_word = 32 / width, words = (n + per_word - 1) / per_word;
  const int64_t one = dtype == DType::F16 ? 0x3C00 : 0x3F80;
  Expr packed = broadcast(random_bits32(key, words), Shape{words, per_word}, {0});
  Expr shifts = iota(Spec{DType::U32, Shape{words, per_word}}, 1) * int64_t{width};
  Expr lanes = slice(reshape((packed >> shifts) & int64_t{(1 << width) - 1}, Shape{words * per_word}), {0}, {n});
  return bitcast(as_type((lanes >> (width - mantissa)) | one, DType::U16), dtype) - 1.0;
}

// The largest value of `dtype` below `x` (x itself representable or not), as
// an expression: a uniform draw that rounds up to its bound is moved there.
Expr below(double x, DType dtype) {
  const Expr at = constant(x, dtype);  // the nearest value of dtype
  const DType bits = dtype == DType::F64 ? DType::U64 : dtype == DType::F32 ? DType::U32 : DType::U16;
  // One step towards -infinity in the bits: down for a positive value, up for
  // a negative one; below 0 is the negative value nearest 0.
  Expr b = bitcast(at, bits);
  Expr down = x > 0 ? b - 1 : x < 0 ? b + 1 : b | int64_t{1} << (dtype_bits(dtype) - 1) | int64_t{1};
  Expr step = bitcast(down, dtype);
  return select(as_type(at, DType::F64) < x, at, step);
}

void check_float(std::string_view op, DType dtype) {
  if (!is_float(dtype))
    infer::type_error(op, "dtype", "a real floating type (f16, bf16, f32, f64)", dtype_name(dtype));
}

}  // namespace

Tuple threefry2x32(Expr key, Expr x0, Expr x1) {
  check_key("threefry2x32", key);
  if (x0.dtype() != DType::U32 || x1.dtype() != DType::U32 || x0.shape() != x1.shape())
    infer::type_error("threefry2x32", "x0, x1", "two u32 tensors of one shape",
                      infer::cat(x0.spec().str(), ", ", x1.spec().str()));
  constexpr std::array<int, 8> kRotations = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::array<Expr, 3> ks = {element(key, 0), element(key, 1),
                                  element(key, 0) ^ element(key, 1) ^ int64_t{0x1BD11BDA}};
  x0 = x0 + ks[0];
  x1 = x1 + ks[1];
  for (int round = 0; round < 20; ++round) {
    x0 = x0 + x1;
    x1 = rotate_left(x1, kRotations[static_cast<size_t>(round % 8)]) ^ x0;
    if (round % 4 == 3) {  // the key injected every four rounds
      const int s = (round + 1) / 4;
      x0 = x0 + ks[static_cast<size_t>(s % 3)];
      x1 = x1 + ks[static_cast<size_t>((s + 1) % 3)] + s;
    }
  }
  return {x0, x1};
}

Expr random_key(uint64_t seed) {
  return constant(std::vector<uint32_t>{static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed)}, Shape{2});
}

Expr random_split(Expr key, int64_t n) {
  check_key("random_split", key);
  if (n < 1) infer::shape_error("random_split", "n", "at least 1 key", infer::cat(n));
  return reshape(random_bits32(key, 2 * n), Shape{n, 2});
}

Expr random_key_at(Expr keys, int64_t i) {
  if (keys.dtype() != DType::U32 || keys.rank() != 2 || keys.shape()[1] != 2)
    infer::type_error("random_key_at", "keys", "u32[n][2] (random_split's result)", keys.spec().str());
  if (i < 0 || i >= keys.shape()[0])
    infer::shape_error("random_key_at", "i", infer::cat("an index in [0, ", keys.shape()[0], ")"), infer::cat(i));
  return reshape(slice(keys, {i, 0}, {1, 2}), Shape{2});
}

Expr random_uniform(Expr key, const Shape& shape, DType dtype, double low, double high) {
  check_key("random_uniform", key);
  check_float("random_uniform", dtype);
  Expr u = unit_interval(key, shape.size(), dtype);
  Expr lo = constant(low, dtype);
  // u * (high - low) + low can round up to high (in f32 over [1e6, 1e6 + 1),
  // 3% of draws): those become the largest value below high, so that every
  // draw is in [low, high) as promised.
  Expr r = max(u * (high - low) + lo, lo);
  return reshape(select(as_type(r, DType::F64) >= high, below(high, dtype), r), shape);
}

Expr random_normal(Expr key, const Shape& shape, DType dtype, double mean, double deviation) {
  check_key("random_normal", key);
  check_float("random_normal", dtype);
  // Open at -1, where erf_inv is -infinity: the value of dtype after -1
  // towards 0, -(1 - 2^-p) for p significand bits (as JAX's nextafter in the
  // dtype; one taken in f32 would round back to -1 in f16 and bf16).
  const int p = dtype == DType::F64 ? 53 : dtype == DType::F32 ? 24 : dtype == DType::F16 ? 11 : 8;
  const double lo = -(1.0 - std::ldexp(1.0, -p));
  Expr u = random_uniform(key, shape, dtype, lo, 1.0);
  return erf_inv(u) * (deviation * std::sqrt(2.0)) + mean;
}

}  // namespace sluice
