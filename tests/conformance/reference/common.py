"""What every op family of the reference shares: sluice's dtypes held in
numpy, rounding once to a dtype, the JSON encoding of values (described in
make_reference.py's docstring), the list of cases, and the inputs' sources.

Every random input comes from the one generator RNG, drawn by the families in
make_reference.py's order: that order is part of the checked-in values.
"""

import math

import numpy as np

RNG = np.random.default_rng(20240611)

INT_BITS = {"s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
SIGNED = {"s8", "s16", "s32", "s64"}
FLOATS = {"f16", "bf16", "f32", "f64"}
COMPLEX = {"c64", "c128"}
NP_TYPE = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
}
REAL_OF = {"c64": "f32", "c128": "f64"}

# Tolerances (see make_reference.py's docstring).
EXACT = {}
ULP_TRANSCENDENTAL = {"f32": 4, "f64": 8, "f16": 1, "bf16": 1}  # f64: numpy's own libm is ~1 ulp off
COMPLEX_FN = {"atol": 1e-6, "rtol": 2e-6}
COMPLEX_FN_C128 = {"atol": 1e-14, "rtol": 1e-13}


def int_min(dt):
    return -(1 << (INT_BITS[dt] - 1)) if dt in SIGNED else 0


def int_max(dt):
    return (1 << (INT_BITS[dt] - 1)) - 1 if dt in SIGNED else (1 << INT_BITS[dt]) - 1


def wrap(dt, v):
    """Two's complement wrap of a Python int into dt."""
    bits = INT_BITS[dt]
    v &= (1 << bits) - 1
    if dt in SIGNED and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def to_bf16(x):
    """float64 -> the nearest bf16 value (ties to even), held in float32.
    bf16 subnormals are not needed by any case and are not modelled."""
    x = np.asarray(x, np.float64)
    out = x.copy()
    finite = np.isfinite(x) & (x != 0)
    m, e = np.frexp(x[finite])
    r = np.ldexp(np.round(np.ldexp(m, 8)), e - 8)  # np.round: ties to even
    r[np.abs(r) > 3.3895313892515355e38] *= np.inf
    out[finite] = r
    return out.astype(np.float32)


def round_to(dt, x):
    """Rounds float64 (or complex128) values once to dt's nearest value."""
    if dt == "bf16":
        return to_bf16(x)
    with np.errstate(over="ignore"):  # overflow to infinity is the expected rounding
        if dt in FLOATS:
            return np.asarray(x, np.float64).astype(NP_TYPE[dt])
        if dt in COMPLEX:
            return np.asarray(x, np.complex128).astype(NP_TYPE[dt])
    raise ValueError(dt)


def parse_float(v):
    return float(v) if not isinstance(v, str) else {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]


class T:
    """A tensor of one sluice dtype held in numpy (bf16 as float32 values)."""

    def __init__(self, dtype, values, shape=None):
        self.dtype = dtype
        if dtype == "pred":
            a = np.array(values, dtype=np.bool_)
        elif dtype in INT_BITS:
            ints = np.array(values, dtype=object).reshape(-1)
            for v in ints:
                assert int_min(dtype) <= v <= int_max(dtype), (dtype, v)
            a = np.array(values, dtype=NP_TYPE[dtype])
        elif dtype in FLOATS:
            flat = [parse_float(v) for v in np.array(values, dtype=object).reshape(-1)]
            a = round_to(dtype, np.array(flat, np.float64)).reshape(np.shape(values))
        else:
            a = round_to(dtype, np.array(values, np.complex128))
        self.a = a.reshape(shape) if shape is not None else a

    @property
    def shape(self):
        return list(self.a.shape)

    def f64(self):
        return self.a.astype(np.complex128 if self.dtype in COMPLEX else np.float64)

    def ints(self):
        """Exact Python ints, for integer arithmetic without numpy's overflow rules."""
        return np.array([int(v) for v in self.a.reshape(-1)], dtype=object).reshape(self.a.shape)

    def encode(self):
        return {"dtype": self.dtype, "shape": self.shape, "values": [enc(self.dtype, v) for v in self.a.reshape(-1)]}


def enc_float(v, dt="f64"):
    """f32: the shortest decimal that reads back (as a double narrowed to
    float, as cases.cpp reads it) as exactly v; other types: v itself."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if dt == "f32":
        for digits in range(1, 10):
            d = float(f"{v:.{digits}g}")
            if float(np.float32(d)) == v and math.copysign(1, d) == math.copysign(1, v):
                return d
    return v


def enc(dt, v):
    if dt == "pred":
        return int(bool(v))
    if dt in INT_BITS:
        return int(v)
    if dt in COMPLEX:
        part = REAL_OF[dt]
        return [enc_float(v.real, part), enc_float(v.imag, part)]
    return enc_float(v, dt)


def from_ints(dt, obj):
    """Python-int array -> T of dt, wrapping as two's complement."""
    obj = np.asarray(obj, dtype=object)
    return T(dt, [wrap(dt, int(v)) for v in obj.reshape(-1)], list(obj.shape))


def from_f64(dt, x):
    x = np.asarray(x)
    return T(dt, round_to(dt, x).astype(np.complex128 if dt in COMPLEX else np.float64), list(x.shape))


CASES = []


def case(op, name, inputs, expected, attrs=None, tol=None):
    CASES.append({
        "op": op, "name": name, "attrs": attrs or {},
        "inputs": [t.encode() for t in inputs], "expected": expected.encode(), "tol": tol or EXACT,
    })


def rand(shape, lo=-1.0, hi=1.0):
    """Uniform values on a grid of 1/64: short to write, exact in every float type."""
    return np.round(RNG.uniform(lo, hi, size=shape) * 64) / 64


def normal(shape):
    return np.round(RNG.normal(size=shape) * 16) / 16


def rand_ints(shape, lo, hi):
    return RNG.integers(lo, hi, size=shape, endpoint=True).tolist()


# The length of the cases meant to reach vector code: two full AVX-512 vectors
# of 16 f32 lanes and a tail, so that vector and tail code both run.
SIMD_SPAN = 36


def spread(specials, fill):
    """A SIMD_SPAN-long list: `specials` spread over every vector and the
    tail (vector code and tail code each meet them), `fill` elsewhere."""
    out = [float(v) for v in fill[:SIMD_SPAN]]
    for k, v in enumerate(specials):
        out[(k * SIMD_SPAN) // len(specials) + 1] = v
    return out


def typed(dt, shape, seed_lo=-50, seed_hi=50):
    """Random values of dt from RNG, exact in dt: eighths (quarters for
    complex), integers in [seed_lo, seed_hi]."""
    n = int(np.prod(shape)) if shape else 1
    if dt == "pred":
        return T("pred", RNG.integers(0, 2, n).astype(bool).tolist(), shape)
    if dt in INT_BITS:
        lo, hi = max(seed_lo, int_min(dt)), min(seed_hi, int_max(dt))
        return T(dt, rand_ints([n], lo, hi), shape)
    if dt in COMPLEX:
        return T(dt, (RNG.integers(-8, 9, n) + 1j * RNG.integers(-8, 9, n)) / 4, shape)
    return T(dt, (RNG.integers(-64, 65, n) / 8).tolist(), shape)


def same(dt, a):
    """numpy array of a shape op's result -> T (values unchanged)."""
    return T(dt, a.astype(np.complex128) if dt in COMPLEX else a, list(a.shape))
