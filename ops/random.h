#pragma once
// Counter-based random numbers, as JAX and Nx.Random make them: threefry2x32
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011) over
// a key, a u32[2] tensor. A draw is a pure function of its key and shape:
// keys, splits and uniform draws are the same bits on every device, kernel
// table and thread count; a normal draw is erf_inv of a uniform one, whose
// last bits follow the device's vector math (ops/ops.h: within 4 ulps from
// one host kernel table to another, as JAX's differ between its CPU and GPU).
// A stage keeps its key in its accumulator, splitting it every chunk:
//
//   auto step = [](sluice::Expr x, sluice::Expr key) {
//     sluice::Expr keys = sluice::random_split(key, 2);            // u32[2][2]
//     sluice::Expr noise = sluice::random_normal(sluice::random_key_at(keys, 0), x.shape(), x.dtype());
//     return sluice::tuple(x + 0.1 * noise, sluice::random_key_at(keys, 1));
//   };
//
// Everything here is composed from ops (integer adds, shifts and xors), so
// any backend runs it and CSE shares a key's work. The bits follow JAX's
// classic threefry scheme (jax_threefry_partitionable off): random_key,
// random_split, and the bits under random_uniform and random_normal give
// JAX's values for the same key. A key that is not u32[2] is a TypeError or
// ShapeError naming the function. Thread safety: as tracing.

#include <cstdint>

#include <sluice/ops/ops.h>

namespace sluice {

// The key of a seed, as jax.random.PRNGKey: u32[2] {seed >> 32, seed & 0xffffffff}.
Expr random_key(uint64_t seed);

// n new keys from `key`, u32[n][2] (jax.random.split); n >= 1.
Expr random_split(Expr key, int64_t n);
// Key i of random_split's result, u32[2].
Expr random_key_at(Expr keys, int64_t i);

// Uniform floats in [min, max) of `shape` and `dtype` (f16, bf16, f32, f64):
// the top mantissa bits of threefry's output, as jax.random.uniform (16
// random bits per f16 value, 8 per bf16 one, as JAX draws them). A draw
// that rounds up to max (JAX would return it) is the largest value below.
Expr random_uniform(Expr key, const Shape& shape, DType dtype = DType::F32, double min = 0, double max = 1);

// Normal floats of mean `mean` and standard deviation `std`: sqrt(2) *
// erf_inv(u) of a u uniform in (-1, 1) (open at -1 in dtype's own
// precision, so never -inf), as jax.random.normal.
Expr random_normal(Expr key, const Shape& shape, DType dtype = DType::F32, double mean = 0, double std = 1);

// The threefry2x32 block cipher with 20 rounds: (x0, x1), u32 tensors of one
// shape, encrypted under `key`. What everything above is built on; exposed
// for its known-answer tests and for users of their own counters.
Tuple threefry2x32(Expr key, Expr x0, Expr x1);

}  // namespace sluice
