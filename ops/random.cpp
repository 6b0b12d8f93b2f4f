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
  Expr bits = random_bits32(key, n);
  if (dtype == DType::F32) return bitcast((bits >> 9) | int64_t{0x3F800000}, DType::F32) - 1.0;
  // 16-bit floats from the top bits of the same words (rounding an f32
  // draw could reach 1.0): a 10-bit (f16) or 7-bit (bf16) mantissa.
  const int mantissa = dtype == DType::F16 ? 10 : 7;
  const int64_t one = dtype == DType::F16 ? 0x3C00 : 0x3F80;
  return bitcast(as_type((bits >> (32 - mantissa)) | one, DType::U16), dtype) - 1.0;
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
  return reshape(max(u * (high - low) + lo, lo), shape);
}

Expr random_normal(Expr key, const Shape& shape, DType dtype, double mean, double deviation) {
  check_key("random_normal", key);
  check_float("random_normal", dtype);
  // Open at -1, where erf_inv is -infinity: the float after -1 towards 0.
  const double lo = dtype == DType::F64 ? std::nextafter(-1.0, 0.0) : std::nextafter(-1.0f, 0.0f);
  Expr u = random_uniform(key, shape, dtype, lo, 1.0);
  return erf_inv(u) * (deviation * std::sqrt(2.0)) + mean;
}

}  // namespace sluice
