#!/usr/bin/python3
"""Writes reference_cases.json: the op-conformance cases of sluice.

Run with /usr/bin/python3 (it has numpy, and scipy for the linear algebra
cases) from anywhere:
    /usr/bin/python3 tests/conformance/make_reference.py

Each case names an op (a name of ops/op_list.def, or a builder of ops/ops.h
such as squeeze and stack), the builder's static arguments (attrs), the
inputs, the expected output and a tolerance. conformance_test.cpp builds the
case with sluice's public API, runs it on every device and compares.

The expectations follow Nx's semantics, with numpy as the calculator. Where
numpy's own semantics differ from Nx's, the reference says so in a comment
marked "Nx:". Floats are computed in float64 from the exact input values and
rounded once to the output type, so an expectation is the correctly rounded
result (for + - * / sqrt fmod a float32 or narrower computation rounds to the
same value: double rounding through a format with >= 2p+2 bits is harmless).

Encoding: values are flat, row-major; NaN and infinities are the strings
"nan", "inf", "-inf"; complex values are [re, im]; f16/bf16 values are floats
exactly representable in that type; pred values are 1/0.
Tolerances: {} exact; {"ulps": n} distance in units in the last place of the
output type; {"atol": a, "rtol": r} |found - expected| <= a + r*|expected|
(modulus for complex). A non-finite expectation must always match exactly.
"""

import json
import math
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).with_name("reference_cases.json")
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

# Tolerances (see the module comment).
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


# ------------------------------------------------------------ unary, float functions
def spread(specials, fill):
    """A SIMD_SPAN-long list: `specials` spread over every vector and the
    tail (vector code and tail code each meet them), `fill` elsewhere."""
    out = [float(v) for v in fill[:SIMD_SPAN]]
    for k, v in enumerate(specials):
        out[(k * SIMD_SPAN) // len(specials) + 1] = v
    return out


def erfinv(y):
    """Inverse of math.erf by Newton's method from a rough start (numpy has none)."""
    if y <= -1.0:
        return -math.inf if y == -1.0 else math.nan
    if y >= 1.0:
        return math.inf if y == 1.0 else math.nan
    if math.isnan(y):
        return math.nan
    w = -math.log((1.0 - y) * (1.0 + y))
    x = math.copysign(math.sqrt(max(w - math.log(w + 1e-300) * 0.5, 0.0)), y) if w > 1 else y * math.sqrt(math.pi) / 2
    for _ in range(100):
        step = (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) <= 1e-17 * max(abs(x), 1e-300):
            break
    return x


def vec(f):
    return lambda x: np.array([f(float(v)) for v in x.reshape(-1)]).reshape(x.shape)


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# name: (numpy float64 function, sample inputs including the domain's edges)
FLOAT_FUNCS = {
    "exp": (np.exp, [-10, -1, -0.5, 0, 0.5, 1, 10, 80, "-inf", "inf", "nan"]),
    "expm1": (np.expm1, [-20, -1, -1e-5, 0, 1e-5, 0.1, 1, 5]),
    "log": (np.log, [1e-3, 0.5, 1, 2, 10, 1e4, 0, -1, "inf", "nan"]),
    "log1p": (np.log1p, [-0.5, -1e-5, 0, 1e-5, 0.5, 1, 100, -1, -2]),
    "sqrt": (np.sqrt, [0, 0.25, 2, 10, 1e4, -1, "inf"]),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), [0.25, 2, 3, 10, 1e4, 0, "inf"]),
    "cbrt": (np.cbrt, [-27, -2, 0, 1e-3, 2, 1000]),
    "sin": (np.sin, [-3, -1, 0, 0.5, 1, 2, 3, 10, 100]),
    "cos": (np.cos, [-3, -1, 0, 0.5, 1, 2, 3, 10, 100]),
    "tan": (np.tan, [-1.5, -1, 0, 0.5, 1, 1.5, 3]),
    "asin": (np.arcsin, [-1, -0.5, 0, 0.3, 0.9, 1, 1.5]),
    "acos": (np.arccos, [-1, -0.5, 0, 0.3, 0.9, 1, 1.5]),
    "atan": (np.arctan, [-100, -1, 0, 0.5, 1, 100, "inf"]),
    "sinh": (np.sinh, [-5, -1, -0.1, 0, 0.1, 1, 5]),
    "cosh": (np.cosh, [-5, -1, -0.1, 0, 0.1, 1, 5]),
    "tanh": (np.tanh, [-20, -1, -0.1, 0, 0.1, 0.5, 1, 20, "-inf", "inf"]),
    "asinh": (np.arcsinh, [-10, -1, 0, 0.5, 1, 100]),
    "acosh": (np.arccosh, [1, 1.5, 2, 10, 100, 0.5]),
    "atanh": (np.arctanh, [-0.9, -0.5, 0, 0.3, 0.9, 1, -1]),
    "sigmoid": (sigmoid, [-20, -5, -1, 0, 1, 5, 20]),
    "erf": (vec(math.erf), [-3, -1, -0.5, -1e-3, 0, 0.2, 1, 2, 5]),
    "erfc": (vec(math.erfc), [-2, -1, 0, 0.5, 1, 2, 4, 9]),
    "erf_inv": (vec(erfinv), [-0.999, -0.9, -0.5, 0, 0.1, 0.5, 0.9, 0.999, 1, -1]),
}
# Complex inputs where Nx defines the function on complex numbers.
COMPLEX_FUNCS = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh}


# Where each function's f32/f64 cases draw more inputs from, so that a case
# spans several full SIMD vectors (16 f32 lanes at AVX-512) and a tail.
FILL_DOMAIN = {
    "exp": (-20, 20), "expm1": (-2, 2), "log": (0.01, 100), "log1p": (-0.9, 10), "sqrt": (0, 100),
    "rsqrt": (0.01, 100), "cbrt": (-100, 100), "sin": (-10, 10), "cos": (-10, 10), "tan": (-1.5, 1.5),
    "asin": (-1, 1), "acos": (-1, 1), "atan": (-10, 10), "sinh": (-10, 10), "cosh": (-10, 10),
    "tanh": (-5, 5), "asinh": (-100, 100), "acosh": (1, 100), "atanh": (-0.99, 0.99), "sigmoid": (-30, 30),
    "erf": (-4, 4), "erfc": (-3, 10), "erf_inv": (-0.999, 0.999),
}
SIMD_SPAN = 36


def float_funcs():
    for name, (fn, samples) in FLOAT_FUNCS.items():
        for dt in ("f32", "f64", "f16", "bf16"):
            values = list(samples)
            if dt in ("f32", "f64"):  # f64 vectors hold half as many lanes
                span = SIMD_SPAN if dt == "f32" else SIMD_SPAN // 2
                values += rand(span - len(samples), *FILL_DOMAIN[name]).tolist()
            x = T(dt, values)
            with np.errstate(all="ignore"):
                y = fn(x.f64())
            tol = {"ulps": ULP_TRANSCENDENTAL[dt]}
            if name == "erf_inv" and dt == "f64":
                tol = {"rtol": 1e-13, "atol": 0}  # the Newton reference is good to ~1e-15, not to ulps
            case(name, f"{dt} domain and edges", [x], from_f64(dt, y), tol=tol)
        # Nx: float functions compute integers in f32 (Nx.Type.to_floating).
        ints = [int(v) for v in map(parse_float, samples) if math.isfinite(v) and v == int(v)]
        for dt in ("s32", "u8"):
            vals = [v for v in ints if int_min(dt) <= v <= int_max(dt)]
            if len(vals) < 2:
                continue
            x = T(dt, vals)
            with np.errstate(all="ignore"):
                y = fn(x.a.astype(np.float32).astype(np.float64))
            case(name, f"{dt} computes in f32", [x], from_f64("f32", y), tol={"ulps": 4})
        if name in COMPLEX_FUNCS:
            z = T("c64", [1 + 1j, -0.5 + 2j, 3 - 0.25j, -2 - 1j])
            case(name, "c64", [z], from_f64("c64", COMPLEX_FUNCS[name](z.f64())), tol=COMPLEX_FN)
            z = T("c128", [0.5 - 1j, -3 + 0.5j])
            case(name, "c128", [z], from_f64("c128", COMPLEX_FUNCS[name](z.f64())), tol=COMPLEX_FN_C128)


# ------------------------------------------------------------ unary, exact ones
def round_half_away(x):
    # Nx: round half away from zero; numpy's round is half to even.
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


EDGE_FLOATS = [-2.5, -1.5, -0.5, -0.0, 0.0, 0.49999997, 0.5, 1.5, 2.5, 2.4, -7.75, "inf", "-inf", "nan"]


def exact_unary():
    for dt in ("f32", "f64", "f16", "bf16"):
        x = T(dt, EDGE_FLOATS)
        v = x.f64()
        case("negate", dt, [x], from_f64(dt, -v))
        case("abs", dt, [x], from_f64(dt, np.abs(v)))
        case("sign", f"{dt} incl. NaN", [x], from_f64(dt, np.sign(v)))
        case("floor", dt, [x], from_f64(dt, np.floor(v)))
        case("ceil", dt, [x], from_f64(dt, np.ceil(v)))
        # 0.49999997 (f32) + 0.5 rounds to 1 in f32: round must not add 0.5 in f32.
        case("round", f"{dt} half away from zero", [x], from_f64(dt, round_half_away(v)))
        case("stop_gradient", f"{dt} identity", [x], x)
        case("is_nan", dt, [x], T("pred", np.isnan(v)))
        case("is_infinity", dt, [x], T("pred", np.isinf(v)))
    for dt in ("f32", "f64"):
        x = T(dt, spread(EDGE_FLOATS, rand(SIMD_SPAN, -8, 8)))
        v = x.f64()
        tag = f"{dt} [{SIMD_SPAN}] edges across SIMD vectors"
        case("negate", tag, [x], from_f64(dt, -v))
        case("abs", tag, [x], from_f64(dt, np.abs(v)))
        case("sign", tag, [x], from_f64(dt, np.sign(v)))
        case("floor", tag, [x], from_f64(dt, np.floor(v)))
        case("ceil", tag, [x], from_f64(dt, np.ceil(v)))
        case("round", tag, [x], from_f64(dt, round_half_away(v)))
        case("is_nan", tag, [x], T("pred", np.isnan(v)))
        case("is_infinity", tag, [x], T("pred", np.isinf(v)))
    for dt in ("s8", "s32", "s64", "u8", "u32"):
        lo, hi = int_min(dt), int_max(dt)
        vals = [lo, lo + 1, -7, -1, 0, 1, 5, hi] if dt in SIGNED else [0, 1, 5, 128, hi - 1, hi]
        x = T(dt, vals)
        iv = x.ints()
        # Two's complement: negate and abs of the minimum wrap to the minimum.
        case("negate", f"{dt} wraps", [x], from_ints(dt, -iv))
        case("abs", f"{dt} wraps at min", [x], from_ints(dt, np.abs(iv)))
        case("sign", dt, [x], from_ints(dt, [(v > 0) - (v < 0) for v in iv]))
        case("bitwise_not", dt, [x], from_ints(dt, [~v for v in iv]))
        bits = INT_BITS[dt]
        case("count_leading_zeros", dt, [x],
             from_ints(dt, [bits - (v & ((1 << bits) - 1)).bit_length() for v in iv]))
        case("population_count", dt, [x], from_ints(dt, [bin(v & ((1 << bits) - 1)).count("1") for v in iv]))
        # Nx: is_nan/is_infinity of integers are all false.
        case("is_nan", f"{dt} never", [x], T("pred", [False] * len(vals)))
        case("is_infinity", f"{dt} never", [x], T("pred", [False] * len(vals)))
    # Nx: floor, ceil and round return integers unchanged (same type).
    x = T("s32", [-3, 0, 7, 2147483647])
    for name in ("floor", "ceil", "round"):
        case(name, "s32 unchanged", [x], x)
    x = T("s16", [-32768, -1, 0, 255])
    case("count_leading_zeros", "s16", [x], from_ints("s16", [0, 0, 16, 8]))
    case("population_count", "s16", [x], from_ints("s16", [1, 16, 0, 8]))
    for dt in ("c64", "c128"):
        z = T(dt, [3 + 4j, -1.5 + 0j, 0 - 2j, -0.5 - 0.25j])
        v = z.f64()
        real = REAL_OF[dt]
        case("negate", dt, [z], from_f64(dt, -v))
        case("abs", f"{dt} -> {real}", [z], from_f64(real, np.abs(v)), tol={"ulps": 2})
        case("sign", f"{dt} z/|z|", [z], from_f64(dt, v / np.abs(v)), tol=COMPLEX_FN if dt == "c64" else COMPLEX_FN_C128)
        case("real", f"{dt} -> {real}", [z], from_f64(real, v.real))
        case("imag", f"{dt} -> {real}", [z], from_f64(real, v.imag))
        case("conjugate", dt, [z], from_f64(dt, np.conj(v)))
        zn = T(dt, [complex(math.nan, 0), complex(0, math.nan), 1 + 1j, complex(math.inf, 0)])
        case("is_nan", f"{dt} either part", [zn], T("pred", [True, True, False, False]))
        case("is_infinity", f"{dt} either part", [zn], T("pred", [False, False, False, True]))
    x = T("f32", [1.5, -2.0, 0.0])
    case("real", "f32 unchanged", [x], x)
    case("imag", "f32 is zeros", [x], T("f32", [0.0, 0.0, 0.0]))
    # Nx: conjugate of a real tensor returns complex (f32 -> c64).
    case("conjugate", "f32 -> c64", [x], T("c64", [1.5, -2.0, 0.0]))
    x = T("f64", [2.5, -1.0])
    case("real", "f64 unchanged", [x], x)
    case("conjugate", "f64 -> c128", [x], T("c128", [2.5, -1.0]))
    x = T("s32", [1, -2])
    case("imag", "s32 is zeros", [x], T("s32", [0, 0]))


# ------------------------------------------------------------ binary
def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_binary(op, dt, a, b):
    """Nx integer semantics on Python ints (numpy differs; see each line)."""
    bits = INT_BITS[dt]
    if op == "add":
        return a + b
    if op == "subtract":
        return a - b
    if op == "multiply":
        return a * b
    if op == "quotient":
        # Nx: truncates toward zero (numpy floors); x / 0 has all bits set;
        # INT_MIN / -1 wraps to INT_MIN.
        return -1 if b == 0 else trunc_div(a, b)
    if op == "remainder":
        # Nx: the sign follows the dividend (C's %, np.fmod; numpy's
        # remainder follows the divisor); x rem 0 = x; INT_MIN rem -1 = 0.
        return a if b == 0 else a - b * trunc_div(a, b)
    if op == "pow":
        return a ** b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "bitwise_and":
        return a & b
    if op == "bitwise_or":
        return a | b
    if op == "bitwise_xor":
        return a ^ b
    if op == "left_shift":
        # Nx (XLA): a shift by the bit width or more gives 0 (numpy: undefined).
        return 0 if b >= bits else a << b
    if op == "right_shift":
        # Arithmetic for signed types: a shift by the width or more fills with the sign.
        if b >= bits:
            return -1 if a < 0 else 0
        return a >> b
    raise ValueError(op)


def binary_int_case(op, dt, name, av, bv, shape_a=None, shape_b=None):
    a, b = T(dt, av, shape_a), T(dt, bv, shape_b)
    ia, ib = np.broadcast_arrays(a.ints(), b.ints())
    out = np.array([int_binary(op, dt, x, y) for x, y in zip(ia.reshape(-1), ib.reshape(-1))], dtype=object)
    case(op, f"{dt} {name}", [a, b], from_ints(dt, out.reshape(ia.shape)))


def binary_ints():
    for dt in ("s8", "s32", "s64", "u8", "u16", "u32", "u64"):
        lo, hi = int_min(dt), int_max(dt)
        if dt in SIGNED:
            a = [7, -7, 7, -7, lo, lo, 5, -5, 0, hi, 13, -13]
            b = [2, 2, -2, -2, -1, 1, 0, 0, 3, 1, 5, 5]
        else:
            a = [7, 7, 0, hi, hi, 5, 0, 200 % (hi + 1), 13, 1]
            b = [2, 3, 3, 1, hi, 0, 0, 7, 5, hi]
        for op in ("quotient", "remainder"):
            binary_int_case(op, dt, "signs, zero divisor, min/-1" if dt in SIGNED else "zero divisor", a, b)
        for op in ("add", "subtract", "multiply"):
            b = [-1, 1, hi, -4, lo, 2] if dt in SIGNED else [1, 1, hi, 4, hi, 2]
            binary_int_case(op, dt, "wraps", [lo, hi, hi, 3, 0, hi // 2 + 1], b)
        for op in ("min", "max"):
            binary_int_case(op, dt, "extremes", [lo, hi, 0, 5], [hi, lo, 0, 3])
        bits = INT_BITS[dt]
        pat = [0x5A % (hi + 1), lo, hi, 0, 1 if dt not in SIGNED else -1, 12]
        for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            binary_int_case(op, dt, "patterns", pat, [0x0F, hi, lo if dt in SIGNED else 0x33, 0x33, 0x7, 10])
        one = 1
        neg = -1 if dt in SIGNED else hi
        binary_int_case("left_shift", dt, "in and out of range", [one, one, one, neg, 5, 3],
                        [0, bits - 1, bits, bits + 1, 1, bits + 7])
        binary_int_case("right_shift", dt, "in and out of range" + (" (sign fill)" if dt in SIGNED else ""),
                        [-8 if dt in SIGNED else 200, neg, hi, lo if dt in SIGNED else hi, 8, neg],
                        [1, bits, bits - 1, bits - 1, bits + 3, 1])
        binary_int_case("pow", dt, "non-negative exponents", [2, 3, 0, 0, 1, 5] if dt not in SIGNED else [2, -3, 0, 0, -1, 5],
                        [7, 3, 0, 2, 5 if dt in SIGNED else 9, 1])
    for dt in ("s32", "u8", "s64"):
        lo, hi = max(int_min(dt), -1000), min(int_max(dt), 1000)
        a, b = rand_ints([SIMD_SPAN], lo, hi), rand_ints([SIMD_SPAN], -9 if dt in SIGNED else 0, 9)
        for op in ("quotient", "remainder", "add", "multiply", "max", "bitwise_xor"):
            binary_int_case(op, dt, f"[{SIMD_SPAN}] spans SIMD vectors", a, b)
        shifts = rand_ints([SIMD_SPAN], 0, INT_BITS[dt] + 5)
        for op in ("left_shift", "right_shift"):
            binary_int_case(op, dt, f"[{SIMD_SPAN}] amounts up to width + 5 across SIMD vectors", a, shifts)
    # Wrapping exponentiation: 3^20 does not fit s32 and wraps modulo 2^32.
    binary_int_case("pow", "s32", "wraps", [3, -2, 7], [20, 31, 11])
    binary_int_case("add", "s32", "broadcast [2][3] + [3]", list(range(6)), [10, 20, 30], [2, 3], [3])
    binary_int_case("multiply", "s64", "broadcast [2][1] * [1][3]", [2, -3], [5, 7, 11], [2, 1], [1, 3])
    binary_int_case("quotient", "s32", "broadcast scalar divisor", [-9, -8, 8, 9], [4], [4], [])
    binary_int_case("subtract", "u8", "broadcast [3][1][2] - [4][1]",
                    rand_ints([6], 100, 255), rand_ints([4], 0, 100), [3, 1, 2], [4, 1])


def float_binary_ref(op, x, y):
    with np.errstate(all="ignore"):
        return {
            "add": lambda: x + y, "subtract": lambda: x - y, "multiply": lambda: x * y,
            "divide": lambda: x / y, "pow": lambda: np.power(x, y),
            # Nx: remainder follows the dividend's sign (fmod), numpy's the divisor's.
            "remainder": lambda: np.fmod(x, y),
            "atan2": lambda: np.arctan2(x, y),
            # Nx (XLA): min/max propagate NaN (np.minimum does too).
            "min": lambda: np.minimum(x, y), "max": lambda: np.maximum(x, y),
        }[op]()


FLOAT_BINARY_SAMPLES = {
    "add": ([1.5, -2.25, 1e30, "inf", "inf", "nan", 0.1, -0.0], [2.25, 2.25, 1e30, "-inf", 1, 1, 0.2, 0.0]),
    "subtract": ([1.5, -2.25, 1e30, "inf", "inf", "nan", 0.3, 0.0], [2.25, 2.25, -1e30, "inf", 1, 1, 0.1, 0.0]),
    "multiply": ([1.5, -2.25, 1e30, "inf", 0, "nan", 0.1, -3], [2.25, 2.25, 1e30, 0, -1, 1, 0.3, 0.0]),
    "divide": ([1, -1, 0, 1, 7, -0.5, 1e30, "inf", 3], [3, 0, 0, "inf", 2, 0.1, 1e-30, "inf", -7]),
    "pow": ([2, -2, -2, 0, 1, "nan", 2, 0.5, 10, 1.5, -0.0], [0.5, 3, 0.5, -1, "nan", 0, "-inf", 2.5, -3, 40, -1]),
    "remainder": ([5.5, -5.5, 5.5, -5.5, 1, "inf", 3, 7.25, -0.0], [2, 2, -2, -2, 0, 2, "inf", 0.5, 3]),
    "atan2": ([0, -0.0, 1, -1, 0, "inf", 1, 3, -2.5], [-1, -1, 0, 0, 0, "inf", 1, -4, 0.5]),
    "min": ([1, "nan", 2, -0.5, "-inf", 3], ["nan", 1, 2, 0.5, 4, "inf"]),
    "max": ([1, "nan", 2, -0.5, "-inf", 3], ["nan", 1, 2, 0.5, 4, "inf"]),
}
IEEE_EXACT = {"add", "subtract", "multiply", "divide", "remainder", "min", "max"}


def binary_floats():
    for op, (av, bv) in FLOAT_BINARY_SAMPLES.items():
        for dt in ("f32", "f64", "f16", "bf16"):
            a, b = T(dt, av), T(dt, bv)
            tol = EXACT if op in IEEE_EXACT else {"ulps": ULP_TRANSCENDENTAL[dt]}
            case(op, f"{dt} specials", [a, b], from_f64(dt, float_binary_ref(op, a.f64(), b.f64())), tol=tol)
        a, b = T("f32", rand([2, 3], 0.5, 4)), T("f32", rand([3], 0.5, 2))
        tol = EXACT if op in IEEE_EXACT else {"ulps": 4}
        case(op, "f32 broadcast [2][3] op [3]", [a, b], from_f64("f32", float_binary_ref(op, a.f64(), b.f64())), tol=tol)
        for dt in ("f32", "f64"):
            a, b = T(dt, spread(av, rand(SIMD_SPAN, -8, 8))), T(dt, spread(bv, rand(SIMD_SPAN, 0.25, 4)))
            tol = EXACT if op in IEEE_EXACT else {"ulps": ULP_TRANSCENDENTAL[dt]}
            case(op, f"{dt} [{SIMD_SPAN}] specials across SIMD vectors", [a, b],
                 from_f64(dt, float_binary_ref(op, a.f64(), b.f64())), tol=tol)
    for op in ("add", "subtract", "multiply", "divide"):
        for dt, tol in (("c64", COMPLEX_FN), ("c128", COMPLEX_FN_C128)):
            a = T(dt, [1 + 2j, -3.5 + 0.5j, 0.25 - 1j, 2 + 0j])
            b = T(dt, [2 - 1j, 0.5 + 0.5j, -4 + 2j, 0 + 1j])
            case(op, dt, [a, b], from_f64(dt, float_binary_ref(op, a.f64(), b.f64())),
                 tol=EXACT if op in ("add", "subtract") else tol)
    # Nx: divide of integers computes in f32 (Nx.Type.to_floating), x/0 -> +-inf, 0/0 -> NaN.
    for dt in ("s32", "u8", "s64"):
        av = [7, -7, 1, -1, 0, 5] if dt in SIGNED else [7, 200, 1, 0, 5]
        bv = [2, 2, 0, 0, 0, -3] if dt in SIGNED else [2, 3, 0, 0, 255]
        a, b = T(dt, av), T(dt, bv)
        in_f32 = [t.a.astype(np.float32).astype(np.float64) for t in (a, b)]
        ref = float_binary_ref("divide", *in_f32)
        case("divide", f"{dt} -> f32", [a, b], from_f64("f32", ref))
    a, b = T("s32", [1, -1, 0, 3]), T("s32", [1, 1, 2, -4])
    case("atan2", "s32 -> f32", [a, b], from_f64("f32", np.arctan2(a.f64(), b.f64())), tol={"ulps": 4})


def promotion():
    """Nx.Type.merge: the output dtype is part of the expectation."""
    def add(name, a, b, out):
        if out in INT_BITS:
            ia, ib = np.broadcast_arrays(a.ints(), b.ints())
            case("add", name, [a, b], from_ints(out, ia + ib))
        else:
            case("add", name, [a, b], from_f64(out, a.f64() + b.f64()))
    add("s32 + f32 -> f32", T("s32", [1, -2, 16777217]), T("f32", [0.5, 0.25, 0.0]), "f32")
    add("s8 + u8 -> s16", T("s8", [-128, 127, -1]), T("u8", [255, 255, 0]), "s16")
    add("u32 + s32 -> s64", T("u32", [4294967295, 0]), T("s32", [1, -2147483648]), "s64")
    add("u8 + s64 -> s64", T("u8", [255, 1]), T("s64", [-1000, 9223372036854775806]), "s64")
    add("u16 + s8 -> s32", T("u16", [65535, 0]), T("s8", [1, -5]), "s32")
    add("f16 + bf16 -> f32", T("f16", [1.5, 1000]), T("bf16", [0.25, 1024]), "f32")
    add("f16 + s32 -> f16", T("f16", [1.5, 2]), T("s32", [2, -3]), "f16")
    add("bf16 + f32 -> f32", T("bf16", [1.5, 3]), T("f32", [0.125, 1e-3]), "f32")
    add("f32 + f64 -> f64", T("f32", [0.1, 3]), T("f64", [0.2, 1e-12]), "f64")
    add("f32 + c64 -> c64", T("f32", [1, 2]), T("c64", [1j, 2 + 2j]), "c64")
    add("f64 + c64 -> c128", T("f64", [0.1, 2]), T("c64", [1j, 0.5 + 2j]), "c128")
    add("pred + s32 -> s32", T("pred", [True, False]), T("s32", [5, 5]), "s32")
    add("pred + u8 -> u8", T("pred", [True, True]), T("u8", [254, 255]), "u8")
    case("multiply", "s32 * f64 -> f64", [T("s32", [3, -7]), T("f64", [0.1, 1e300])],
         from_f64("f64", np.array([3 * 0.1, -7 * 1e300])))
    case("max", "s32 max f32 -> f32", [T("s32", [3, -7]), T("f32", [3.5, "nan"])], T("f32", [3.5, "nan"]))
    # Nx: both sides are converted to the merged type f32 first: 16777217 becomes 16777216.
    case("equal", "s32 vs f32 compares in f32", [T("s32", [16777217, 3]), T("f32", [16777216, 3.5])],
         T("pred", [True, False]))


def weak_scalars():
    """Plain C++ numbers take the tensor's type (Nx.Type.merge_number)."""
    x = T("s32", [1, -2, 2147483647])
    case("add", "s32 + weak 2 stays s32 (wraps)", [x], from_ints("s32", x.ints() + 2), {"scalar_b": 2})
    x = T("u8", [1, 200, 255])
    case("add", "u8 + weak 1 stays u8 (wraps)", [x], from_ints("u8", x.ints() + 1), {"scalar_b": 1})
    x = T("f16", [1.5, -3, 1000])
    case("multiply", "f16 * weak 2.5 stays f16", [x], from_f64("f16", x.f64() * 2.5), {"scalar_b": 2.5})
    x = T("bf16", [1.5, -3, 1000])
    case("subtract", "bf16 - weak 1 stays bf16", [x], from_f64("bf16", x.f64() - 1), {"scalar_b": 1})
    x = T("f32", [1.5, -3, 0.1])
    case("subtract", "weak 10 - f32", [x], from_f64("f32", 10 - x.f64()), {"scalar_a": 10})
    x = T("f64", [0.1, 2])
    case("add", "f64 + weak 0.1 keeps f64 precision", [x], from_f64("f64", x.f64() + 0.1), {"scalar_b": 0.1})
    x = T("c64", [1 + 1j, -2j])
    case("multiply", "c64 * weak 2", [x], from_f64("c64", x.f64() * 2), {"scalar_b": 2})
    # Nx: an integer tensor with a float number becomes f32 (to_floating), it is not truncated.
    x = T("s32", [1, -2])
    case("add", "s32 + weak 1.5 -> f32", [x], T("f32", [2.5, -0.5]), {"scalar_b": 1.5})
    x = T("u8", [7, 200])
    case("divide", "u8 / weak 2 -> f32", [x], T("f32", [3.5, 100]), {"scalar_b": 2})
    x = T("s64", [-5, 5])
    case("remainder", "s64 rem weak 3", [x], T("s64", [-2, 2]), {"scalar_b": 3})
    x = T("s32", [1, 5])
    case("less", "s32 < weak 3", [x], T("pred", [True, False]), {"scalar_b": 3})


def comparisons_and_logic():
    comps = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
             "greater": np.greater, "greater_equal": np.greater_equal}
    for name, fn in comps.items():
        for dt in ("f32", "f64", "f16", "bf16"):
            # NaN compares false with everything except not_equal; -0 == 0.
            a, b = T(dt, [1, "nan", "nan", -0.0, "-inf", 2.5, 3]), T(dt, [1, 1, "nan", 0.0, "-inf", -2.5, "inf"])
            with np.errstate(invalid="ignore"):
                case(name, dt, [a, b], T("pred", fn(a.f64(), b.f64())))
        for dt in ("s8", "s32", "u8", "u64"):
            lo, hi = int_min(dt), int_max(dt)
            a, b = T(dt, [lo, hi, 0, 5, hi]), T(dt, [hi, lo, 0, 5, hi - 1])
            case(name, dt, [a, b], T("pred", fn(a.ints(), b.ints()).astype(bool)))
        # s64 above 2^53 must compare as integers, not through double.
        a, b = T("s64", [9007199254740993, -9007199254740993]), T("s64", [9007199254740992, -9007199254740992])
        case(name, "s64 beyond 2^53", [a, b], T("pred", fn(a.ints(), b.ints()).astype(bool)))
        for dt in ("f32",):
            a = T(dt, spread([1, "nan", "nan", -0.0, "-inf", 2.5, 3], rand(SIMD_SPAN, -2, 2)))
            b = T(dt, spread([1, 1, "nan", 0.0, "-inf", -2.5, "inf"], rand(SIMD_SPAN, -2, 2)))
            with np.errstate(invalid="ignore"):
                case(name, f"{dt} [{SIMD_SPAN}] NaN across SIMD vectors", [a, b], T("pred", fn(a.f64(), b.f64())))
        a, b = T("s32", [1, 2, 3, 4, 5, 6], [2, 3]), T("s32", [3, 2, 1])
        case(name, "s32 broadcast [2][3] vs [3]", [a, b], T("pred", fn(a.a, b.a)))
    for name in ("equal", "not_equal"):
        a, b = T("c64", [1 + 1j, 1 + 1j, 2j]), T("c64", [1 + 1j, 1 - 1j, 2j])
        case(name, "c64", [a, b], T("pred", comps[name](a.a, b.a)))
        a, b = T("pred", [True, True, False, False]), T("pred", [True, False, True, False])
        case(name, "pred", [a, b], T("pred", comps[name](a.a, b.a)))
    logic = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
    for name, fn in logic.items():
        a, b = T("pred", [True, True, False, False]), T("pred", [True, False, True, False])
        case(name, "pred", [a, b], T("pred", fn(a.a, b.a)))
        # Any nonzero value is true; NaN is nonzero, -0.0 is zero.
        a, b = T("f32", [2.5, "nan", -0.0, 0.0, 1]), T("f32", [1, 1, 1, 0.0, -0.0])
        case(name, "f32 nonzero is true", [a, b], T("pred", fn(a.a != 0, b.a != 0)))
        a, b = T("s32", [-1, 0, 7, 0]), T("s32", [2, 3, 0, 0])
        case(name, "s32", [a, b], T("pred", fn(a.a, b.a)))
        a, b = T("u8", [255, 0, 1], [3, 1]), T("u8", [0, 9])
        case(name, "u8 broadcast [3][1] with [2]", [a, b], T("pred", fn(a.a, b.a)))
        a, b = T("s64", [1, 0]), T("f64", [0.0, 0.5])
        case(name, "s64 with f64", [a, b], T("pred", fn(a.a != 0, b.a != 0)))


# ------------------------------------------------------------ select, clip, conversions
def ternary():
    p = T("pred", [True, False, True, False])
    for dt in ("f32", "s32", "u8", "f16", "c64", "s64", "bf16", "f64"):
        a, b = T(dt, [1, 2, 3, 4]), T(dt, [-1, -2, -3, -4] if dt not in ("u8",) else [9, 8, 7, 6])
        case("select", dt, [p, a, b], T(dt, np.where(p.a, a.a, b.a)))
    p = T("pred", [True, False, False, True, True, False], [2, 3])
    case("select", "broadcast scalar branches", [p, T("s32", 7), T("s32", -7)], T("s32", np.where(p.a, 7, -7)))
    p = T("s32", [0, 5, -1])
    case("select", "s32 predicate: nonzero is true", [p, T("f32", [1, 2, 3]), T("f32", [-1, -2, -3])],
         T("f32", [-1, 2, 3]))
    p = T("pred", [True, False])
    case("select", "u8 vs s32 branches -> s32", [p, T("u8", [200, 200]), T("s32", [-1, -1])], T("s32", [200, -1]))
    p = T("pred", [True, False, True], [3, 1])
    case("select", "broadcast [3][1] with [2] branches", [p, T("f64", [1.5, 2.5]), T("f64", 0.0)],
         T("f64", np.where(p.a, np.array([1.5, 2.5]), 0.0)))
    for dt in ("f32", "f64", "f16", "bf16", "s32", "u8", "s64", "s8"):
        vals = [-5, -1, 0, 2, 3, 10] if dt not in ("u8",) else [0, 1, 2, 3, 9, 255]
        lo, hi = (-1, 3) if dt != "u8" else (1, 9)
        x = T(dt, vals)
        case("clip", dt, [x, T(dt, lo), T(dt, hi)], T(dt, np.clip(x.a, lo, hi)))
    x = T("f32", spread([-1.5, 0.25, 7, "inf", "-inf", 2, -1], rand(SIMD_SPAN, -4, 4)))
    case("clip", f"f32 [{SIMD_SPAN}] across SIMD vectors", [x, T("f32", -1.0), T("f32", 2.0)], T("f32", np.clip(x.a, -1, 2)))
    x = T("f32", [-1.5, 0.25, 7, "inf", "-inf"], [5])
    case("clip", "f32 infinities", [x, T("f32", -1.0), T("f32", 2.0)], T("f32", [-1, 0.25, 2, 2, -1]))


def to_int(dst, e):
    """Nx (XLA) float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0."""
    if math.isnan(e):
        return 0
    if math.isinf(e):
        return int_max(dst) if e > 0 else int_min(dst)
    return max(int_min(dst), min(int_max(dst), int(e)))


def conversions():
    F = [math.nan, math.inf, -math.inf, 3e9, -3e9, 2.7, -2.7, 0.5, -0.99, 1e20, 100, 255.9]
    for src in ("f32", "f64", "f16", "bf16"):
        x = T(src, [enc_float(v) for v in F])
        v = x.f64()
        for dst in ("s8", "s32", "s64", "u8", "u32"):
            case("as_type", f"{src} -> {dst} truncates, saturates, NaN is 0", [x], T(dst, [to_int(dst, e) for e in v]),
                 {"dtype": dst})
        for dst in ("f32", "f64", "f16", "bf16"):
            if dst != src:
                case("as_type", f"{src} -> {dst} rounds to nearest even", [x], from_f64(dst, v), {"dtype": dst})
    x = T("f32", rand([SIMD_SPAN], -300, 300).tolist() + ["nan", 1e10, -1e10])
    for dst in ("s32", "u8", "s64", "f16", "bf16", "f64"):
        v = x.f64()
        out = T(dst, [to_int(dst, e) for e in v]) if dst in INT_BITS else from_f64(dst, v)
        case("as_type", f"f32 -> {dst} [{SIMD_SPAN + 3}] spans SIMD vectors", [x], out, {"dtype": dst})
    x = T("f64", [1e39, -1e39, 1e-50, 0.1, 3.4028235677973366e38, 1 + 2**-24, 1 + 3 * 2**-24])
    case("as_type", "f64 -> f32 overflow, underflow, ties", [x], from_f64("f32", x.f64()), {"dtype": "f32"})
    x = T("f32", [65520, 65519, 1e-8, 6e-8, 3e-5, 1 + 2**-11, 1 + 3 * 2**-11, -70000])
    case("as_type", "f32 -> f16 overflow, subnormals, ties", [x], from_f64("f16", x.f64()), {"dtype": "f16"})
    x = T("f32", [1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, 1.00390625, -2.5])
    case("as_type", "f32 -> bf16 ties to even, overflow", [x], from_f64("bf16", x.f64()), {"dtype": "bf16"})
    x = T("s32", [16777217, 16777219, -2147483648, 2147483647, 0, -5])
    for dst in ("f32", "f64", "f16", "bf16"):
        case("as_type", f"s32 -> {dst} rounds to nearest even", [x], from_f64(dst, x.a.astype(np.float64)), {"dtype": dst})
    x = T("s64", [9007199254740993, -9223372036854775808, 123])
    case("as_type", "s64 -> f64 rounds", [x], from_f64("f64", np.array([float(v) for v in x.ints()])), {"dtype": "f64"})
    case("as_type", "s64 -> f32 rounds", [x], from_f64("f32", np.array([float(v) for v in x.ints()])), {"dtype": "f32"})
    # Integer narrowing wraps (two's complement), widening sign- or zero-extends.
    x = T("s32", [300, -1, 255, -129, 65536])
    for dst in ("u8", "s8", "s16", "u32", "s64", "u64"):
        case("as_type", f"s32 -> {dst} wraps", [x], from_ints(dst, x.ints()), {"dtype": dst})
    x = T("u8", [0, 127, 128, 255])
    for dst in ("s8", "s32", "u64", "f32"):
        case("as_type", f"u8 -> {dst}", [x], from_ints(dst, x.ints()) if dst != "f32" else T("f32", x.a), {"dtype": dst})
    x = T("u64", [18446744073709551615, 9223372036854775808, 1])
    case("as_type", "u64 -> s64 wraps", [x], from_ints("s64", x.ints()), {"dtype": "s64"})
    case("as_type", "u64 -> f32 rounds", [x], from_f64("f32", np.array([float(v) for v in x.ints()])), {"dtype": "f32"})
    # Nonzero is true, as Nx's comparison with zero; -0.0 is zero.
    x = T("f32", [0.0, -0.0, 2.5, -1e-30, "inf"])
    case("as_type", "f32 -> pred nonzero", [x], T("pred", [False, False, True, True, True]), {"dtype": "pred"})
    x = T("s32", [0, 7, -1])
    case("as_type", "s32 -> pred nonzero", [x], T("pred", [False, True, True]), {"dtype": "pred"})
    x = T("pred", [True, False])
    for dst in ("f32", "s32", "u8", "f16"):
        case("as_type", f"pred -> {dst}", [x], T(dst, [1, 0]), {"dtype": dst})
    # Nx: complex to real keeps the real part.
    x = T("c64", [1.5 + 2j, -3 - 1j])
    case("as_type", "c64 -> f32 real part", [x], T("f32", [1.5, -3]), {"dtype": "f32"})
    case("as_type", "c64 -> c128", [x], T("c128", x.a), {"dtype": "c128"})
    case("as_type", "c64 -> s32 real part truncated", [x], T("s32", [1, -3]), {"dtype": "s32"})
    x = T("f32", [1.5, "nan"])
    case("as_type", "f32 -> c64", [x], T("c64", [1.5, complex(math.nan, 0)]), {"dtype": "c64"})
    x = T("s32", [3, -4])
    case("as_type", "s32 -> c64", [x], T("c64", [3, -4]), {"dtype": "c64"})
    x = T("c128", [0.1 + 0.2j])
    case("as_type", "c128 -> c64 rounds", [x], from_f64("c64", x.f64()), {"dtype": "c64"})


def bitcasts():
    def bc(name, x, dst):
        raw = x.a.astype(NP_TYPE[x.dtype]) if x.dtype != "bf16" else (x.a.view(np.uint32) >> 16).astype(np.uint16)
        if dst == "bf16":
            y = T("bf16", (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32))
        else:
            y = T(dst, raw.view(NP_TYPE[dst]).tolist())
        case("bitcast", name, [x], y, {"dtype": dst})
    bc("f32 -> s32", T("f32", [1.0, -2.0, 0.0, -0.0, "inf", 1e-40]), "s32")
    bc("f32 -> u32", T("f32", [1.0, -2.0, 3.5]), "u32")
    bc("s32 -> f32", T("s32", [1065353216, -1073741824, 1, 2139095040]), "f32")
    bc("u32 -> f32", T("u32", [1065353216, 3221225472]), "f32")
    bc("f64 -> s64", T("f64", [1.0, -0.5, 1e300]), "s64")
    bc("s64 -> f64", T("s64", [4607182418800017408, -4611686018427387904]), "f64")
    bc("u64 -> f64", T("u64", [4607182418800017408]), "f64")
    bc("f16 -> s16", T("f16", [1.0, -2.0, 65504, 6e-8]), "s16")
    bc("u16 -> f16", T("u16", [15360, 49152, 31744]), "f16")
    bc("bf16 -> u16", T("bf16", [1.0, -2.0, 3.0]), "u16")
    bc("s16 -> bf16", T("s16", [16256, -16384, 16448]), "bf16")
    bc("u8 -> s8", T("u8", [255, 128, 127, 0]), "s8")
    bc("s8 -> u8", T("s8", [-1, -128, 5]), "u8")
    bc("s32 -> u32", T("s32", [-1, -2147483648, 7]), "u32")


# ------------------------------------------------------------ shape ops
def typed(dt, shape, seed_lo=-50, seed_hi=50):
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


def shape_ops():
    DTS = ("f32", "s32", "u8", "f64", "s64", "f16", "bf16", "c64", "pred")
    for dt in DTS:
        x = typed(dt, [2, 3])
        case("reshape", f"{dt} [2][3] -> [3][2]", [x], same(dt, x.a.reshape(3, 2)), {"shape": [3, 2]})
        case("transpose", f"{dt} default reverses axes", [x], same(dt, x.a.T))
        case("reverse", f"{dt} axis 1", [x], same(dt, x.a[:, ::-1]), {"axes": [1]})
        case("broadcast", f"{dt} [2][3] -> [4][2][3]", [x], same(dt, np.broadcast_to(x.a, (4, 2, 3))), {"shape": [4, 2, 3]})
    x = typed("f32", [2, 3])
    case("reshape", "f32 [2][3] -> [6]", [x], same("f32", x.a.reshape(6)), {"shape": [6]})
    x = typed("s32", [])
    case("reshape", "s32 scalar -> [1][1]", [x], same("s32", x.a.reshape(1, 1)), {"shape": [1, 1]})
    x = typed("s64", [2, 1, 3, 1])
    case("squeeze", "s64 all size-1 axes", [x], same("s64", x.a.reshape(2, 3)))
    case("squeeze", "s64 named axis 3", [x], same("s64", x.a.reshape(2, 1, 3)), {"axes": [3]})
    x = typed("f16", [1, 1])
    case("squeeze", "f16 [1][1] -> scalar", [x], same("f16", x.a.reshape(())))
    x = typed("f32", [3])
    case("broadcast", "f32 [3] -> [3][2] on axis 0", [x], same("f32", np.broadcast_to(x.a[:, None], (3, 2))),
         {"shape": [3, 2], "axes": [0]})
    x = typed("s32", [2, 1])
    case("broadcast", "s32 [2][1] -> [2][4] expands size 1", [x], same("s32", np.broadcast_to(x.a, (2, 4))),
         {"shape": [2, 4], "axes": [0, 1]})
    x = typed("u8", [])
    case("broadcast", "u8 scalar -> [2][2]", [x], same("u8", np.broadcast_to(x.a, (2, 2))), {"shape": [2, 2]})
    x = typed("f64", [2, 3])
    case("broadcast", "f64 [2][3] -> [2][5][3] axes (0, 2)", [x], same("f64", np.broadcast_to(x.a[:, None, :], (2, 5, 3))),
         {"shape": [2, 5, 3], "axes": [0, 2]})
    x = typed("s32", [2, 3, 4])
    case("transpose", "s32 [2][3][4] perm (1, 2, 0)", [x], same("s32", x.a.transpose(1, 2, 0)), {"axes": [1, 2, 0]})
    x = typed("c64", [2, 1, 3])
    case("transpose", "c64 perm (2, 0, 1)", [x], same("c64", x.a.transpose(2, 0, 1)), {"axes": [2, 0, 1]})
    x = typed("f32", [2, 3, 4])
    case("reverse", "f32 axes (0, 2)", [x], same("f32", x.a[::-1, :, ::-1]), {"axes": [0, 2]})
    case("reverse", "f32 default all axes", [x], same("f32", x.a[::-1, ::-1, ::-1]))
    x = typed("s32", [5])
    case("reverse", "s32 1-D", [x], same("s32", x.a[::-1]), {"axes": [0]})
    pads()
    slices()
    put_slices()
    joins()


def pad_ref(x, value, config):
    """Nx.pad: interior padding first, then low/high; negative low/high trim."""
    a = x
    for axis, (lo, hi, interior) in enumerate(config):
        n = a.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(a.shape)
        shape[axis] = size
        b = np.full(shape, value, dtype=a.dtype)
        idx = [slice(None)] * a.ndim
        idx[axis] = slice(0, size, interior + 1)
        b[tuple(idx)] = a
        if lo >= 0:
            shape[axis] = lo
            b = np.concatenate([np.full(shape, value, dtype=a.dtype), b], axis=axis)
        else:
            idx = [slice(None)] * a.ndim
            idx[axis] = slice(-lo, None)
            b = b[tuple(idx)]
        if hi >= 0:
            shape[axis] = hi
            b = np.concatenate([b, np.full(shape, value, dtype=a.dtype)], axis=axis)
        else:
            idx = [slice(None)] * a.ndim
            idx[axis] = slice(0, b.shape[axis] + hi)
            b = b[tuple(idx)]
        a = b
    return a


def pads():
    configs = [
        ("low/high", [[1, 2, 0], [0, 1, 0]]),
        ("interior", [[0, 0, 1], [1, 0, 2]]),
        ("negative trims", [[-1, 0, 0], [1, -2, 0]]),
        ("negative with interior", [[-1, -1, 1], [2, -1, 1]]),
    ]
    for dt in ("f32", "s32", "u8", "f16", "c64", "s64", "pred", "bf16", "f64"):
        x = typed(dt, [3, 4])
        v = typed(dt, [])
        for name, cfg in configs:
            if dt not in ("f32", "s32") and name != "negative with interior":
                continue
            case("pad", f"{dt} {name}", [x, v], same(dt, pad_ref(x.a, v.a, cfg)), {"config": cfg})
    x = typed("s32", [4])
    case("pad", "s32 1-D trims everything but interior", [x, T("s32", 9)], same("s32", pad_ref(x.a, 9, [[-2, -3, 1]])),
         {"config": [[-2, -3, 1]]})


def slices():
    for dt in ("f32", "s32", "u8", "f64", "c64", "f16", "s64", "pred"):
        x = typed(dt, [4, 5])
        case("slice", f"{dt} static", [x], same(dt, x.a[1:3, 2:5]), {"starts": [1, 2], "lengths": [2, 3]})
    x = typed("f32", [7, 6])
    # Nx: lengths are taken before striding: [0:7:3] keeps 0, 3, 6.
    case("slice", "f32 strided", [x], same("f32", x.a[0:7:3, 1:6:2]),
         {"starts": [0, 1], "lengths": [7, 5], "strides": [3, 2]})
    x = typed("s32", [10])
    case("slice", "s32 strided 1-D", [x], same("s32", x.a[2:9:4]), {"starts": [2], "lengths": [7], "strides": [4]})
    # Dynamic starts are clamped so the slice fits (Nx): -1 -> 0, 9 -> size - length.
    x = typed("f32", [4, 5])
    for (s0, s1), name in (((1, 2), "in range"), ((-1, 9), "clamped low and high"), ((3, 4), "clamped at the end")):
        c0, c1 = min(max(s0, 0), 4 - 2), min(max(s1, 0), 5 - 3)
        for it in ("s32", "s64"):
            case("slice", f"f32 dynamic {it} starts {name}", [x, T(it, s0), T(it, s1)],
                 same("f32", x.a[c0:c0 + 2, c1:c1 + 3]), {"dynamic": True, "lengths": [2, 3]})
    x = typed("u8", [9])
    case("slice", "u8 dynamic strided clamped", [x, T("s32", 8)], same("u8", x.a[4:9:2]),
         {"dynamic": True, "lengths": [5], "strides": [2]})
    x = typed("s64", [3, 4])
    case("slice", "s64 dynamic u8 start", [x, T("u8", 1), T("u8", 0)], same("s64", x.a[1:3, 0:4]),
         {"dynamic": True, "lengths": [2, 4]})


def put_slices():
    for dt in ("f32", "s32", "u8", "c64", "f16", "pred", "s64"):
        x, u = typed(dt, [4, 5]), typed(dt, [2, 3])
        y = x.a.copy()
        y[1:3, 1:4] = u.a
        case("put_slice", f"{dt} static", [x, u], same(dt, y), {"starts": [1, 1]})
    # Starts are clamped so the update fits (Nx), static and dynamic alike.
    x, u = typed("f32", [4, 5]), typed("f32", [2, 3])
    y = x.a.copy()
    y[2:4, 2:5] = u.a
    case("put_slice", "f32 static clamped", [x, u], same("f32", y), {"starts": [3, 4]})
    case("put_slice", "f32 dynamic clamped high", [x, u, T("s32", 7), T("s32", 3)], same("f32", y), {"dynamic": True})
    y = x.a.copy()
    y[0:2, 1:4] = u.a
    case("put_slice", "f32 dynamic clamped low", [x, u, T("s64", -3), T("s64", 1)], same("f32", y), {"dynamic": True})
    x, u = typed("s32", [6]), typed("s32", [6])
    case("put_slice", "s32 update covers everything", [x, u, T("s32", 2)], u, {"dynamic": True})


def joins():
    for dt in ("f32", "s32", "u8", "c64", "f16", "pred", "s64", "f64", "bf16"):
        a, b, c = typed(dt, [2, 3]), typed(dt, [1, 3]), typed(dt, [3, 3])
        case("concatenate", f"{dt} axis 0, three inputs", [a, b, c], same(dt, np.concatenate([a.a, b.a, c.a], 0)),
             {"axis": 0})
        a, b = typed(dt, [2, 3]), typed(dt, [2, 3])
        case("stack", f"{dt} axis 0", [a, b], same(dt, np.stack([a.a, b.a], 0)), {"axis": 0})
    a, b = typed("s32", [2, 1, 2]), typed("s32", [2, 3, 2])
    case("concatenate", "s32 axis 1", [a, b], same("s32", np.concatenate([a.a, b.a], 1)), {"axis": 1})
    # Nx: the result has the merged type.
    a, b = T("s32", [1, 2]), T("f32", [0.5])
    case("concatenate", "s32 with f32 -> f32", [a, b], T("f32", [1, 2, 0.5]), {"axis": 0})
    a = typed("f32", [3])
    case("concatenate", "f32 single input", [a], a, {"axis": 0})
    a, b, c = typed("u8", [2, 2]), typed("u8", [2, 2]), typed("u8", [2, 2])
    case("stack", "u8 axis 2 (last)", [a, b, c], same("u8", np.stack([a.a, b.a, c.a], 2)), {"axis": 2})
    case("stack", "u8 axis 1", [a, b, c], same("u8", np.stack([a.a, b.a, c.a], 1)), {"axis": 1})
    a, b = typed("f32", []), typed("f32", [])
    case("stack", "f32 scalars", [a, b], same("f32", np.stack([a.a, b.a])), {"axis": 0})


# ------------------------------------------------------------ reductions
def float_sum_tol(dt, x):
    """Reductions of floats may reassociate: error grows with sum |x|."""
    v = np.abs(x.f64())
    scale = float(np.sum(v[np.isfinite(v)]))
    eps = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3}[dt]
    return {"atol": eps * scale, "rtol": 10 * eps}


def reduce_opts(axes, keep):
    attrs = {"keep_axes": keep}
    if axes is not None:
        attrs["axes"] = axes
    return attrs


def reductions():
    shapes = [([2, 3, 3], None, False), ([2, 3, 3], [1], False), ([2, 3, 3], [0, 2], True), ([5], [0], True)]
    for dt in ("f32", "f64", "f16", "bf16", "s32", "u8", "s64", "s8", "u32"):
        for shape, axes, keep in shapes if dt in ("f32", "s32") else shapes[1:3]:
            n = int(np.prod(shape))
            x = typed(dt, shape, -20, 20) if dt not in ("u8", "u32") else T(dt, rand_ints([n], 0, 255), shape)
            ax = tuple(axes) if axes is not None else None
            tag = f"{dt} {shape} axes {axes} keep {keep}"
            opts = reduce_opts(axes, keep)
            if dt in INT_BITS:
                # Nx: sums and products of integers accumulate in 64 bits (s64 / u64).
                acc = "s64" if dt in SIGNED else "u64"
                case("sum", tag, [x], from_ints(acc, np.sum(x.ints(), axis=ax, keepdims=keep)), opts)
                small = T(dt, np.clip(x.a, -3, 3) if dt in SIGNED else np.clip(x.a, 0, 3))
                case("product", tag, [small], from_ints(acc, np.prod(small.ints(), axis=ax, keepdims=keep)), opts)
                case("reduce_max", tag, [x], same(dt, np.max(x.a, axis=ax, keepdims=keep)), opts)
                case("reduce_min", tag, [x], same(dt, np.min(x.a, axis=ax, keepdims=keep)), opts)
            else:
                case("sum", tag, [x], from_f64(dt, np.sum(x.f64(), axis=ax, keepdims=keep)), opts, float_sum_tol(dt, x))
                small = T(dt, np.clip(x.f64() / 8, -1.5, 1.5))
                ptol = {"f32": {"rtol": 1e-5, "atol": 0}, "f64": {"rtol": 1e-13, "atol": 0},
                        # f16: products may land among subnormals, whose spacing is 6e-8.
                        "f16": {"rtol": 4e-3, "atol": 1.2e-7}, "bf16": {"rtol": 3e-2, "atol": 0}}[dt]
                case("product", tag, [small], from_f64(dt, np.prod(small.f64(), axis=ax, keepdims=keep)), opts, ptol)
                case("reduce_max", tag, [x], from_f64(dt, np.max(x.f64(), axis=ax, keepdims=keep)), opts)
                case("reduce_min", tag, [x], from_f64(dt, np.min(x.f64(), axis=ax, keepdims=keep)), opts)
            case("all", tag, [x], T("pred", np.all(x.a != 0, axis=ax, keepdims=keep)), opts)
            case("any", tag, [x], T("pred", np.any(x.a != 0, axis=ax, keepdims=keep)), opts)
    x = T("s32", [2147483647, 2147483647, 2147483647, -5], [2, 2])
    case("sum", "s32 beyond 2^31 in s64", [x], from_ints("s64", np.sum(x.ints(), axis=1)), {"axes": [1]})
    x = T("u8", [255] * 6)
    case("sum", "u8 -> u64", [x], T("u64", 1530))
    case("product", "u8 -> u64", [x], T("u64", 255 ** 6))
    x = T("pred", [True, False, True, True, False, True], [2, 3])
    case("sum", "pred counts -> u64", [x], T("u64", np.sum(x.a, axis=0)), {"axes": [0]})
    case("all", "pred axis 1", [x], T("pred", np.all(x.a, axis=1)), {"axes": [1]})
    case("any", "pred axis 0", [x], T("pred", np.any(x.a, axis=0)), {"axes": [0]})
    x = T("f32", [], [0, 3])
    case("sum", "f32 over an empty axis is 0", [x], T("f32", [0, 0, 0]), {"axes": [0]})
    case("product", "f32 over an empty axis is 1", [x], T("f32", [1, 1, 1]), {"axes": [0]})
    case("all", "f32 over an empty axis is true", [x], T("pred", [True] * 3), {"axes": [0]})
    case("any", "f32 over an empty axis is false", [x], T("pred", [False] * 3), {"axes": [0]})
    # Nx (XLA): max/min propagate NaN; NaN is nonzero for all/any.
    x = T("f32", [1, "nan", 3, -1, 2, "-inf"], [2, 3])
    case("reduce_max", "f32 NaN propagates", [x], T("f32", ["nan", 2]), {"axes": [1]})
    case("reduce_min", "f32 NaN propagates", [x], T("f32", ["nan", "-inf"]), {"axes": [1]})
    case("sum", "f32 NaN propagates", [x], T("f32", ["nan", "-inf"]), {"axes": [1]})
    case("all", "f32 NaN is true", [T("f32", ["nan", 1])], T("pred", True))
    case("any", "f32 -0.0 is false", [T("f32", [-0.0, 0.0])], T("pred", False))
    # Long rows reach the vector code of reductions: NaN in a later vector, in the tail.
    for dt in ("f32", "f64"):
        rows = [rand(SIMD_SPAN, -8, 8) for _ in range(3)]
        rows[1][22] = math.nan
        rows[2][SIMD_SPAN - 1] = math.nan
        x = T(dt, np.array(rows))
        v = x.f64()
        tag = f"{dt} [3][{SIMD_SPAN}] NaN in a later vector and in the tail"
        case("reduce_max", tag, [x], from_f64(dt, np.max(v, axis=1)), {"axes": [1]})
        case("reduce_min", tag, [x], from_f64(dt, np.min(v, axis=1)), {"axes": [1]})
        case("sum", tag, [x], from_f64(dt, np.sum(v, axis=1)), {"axes": [1]}, float_sum_tol(dt, x))
        case("argmax", tag, [x], T("s64", arg(x.a, "argmax", 1)), {"axis": 1})
        case("argmin", tag, [x], T("s64", arg(x.a, "argmin", 1)), {"axis": 1})
        case("any", tag, [x], T("pred", np.any(v != 0, axis=1)), {"axes": [1]})
    for dt in ("s32", "u8", "s64"):
        x = T(dt, rand_ints([3 * SIMD_SPAN], max(int_min(dt), -100), min(int_max(dt), 100)), [3, SIMD_SPAN])
        tag = f"{dt} [3][{SIMD_SPAN}]"
        case("sum", tag, [x], from_ints("s64" if dt in SIGNED else "u64", np.sum(x.ints(), axis=1)), {"axes": [1]})
        case("reduce_max", tag, [x], T(dt, np.max(x.a, axis=1)), {"axes": [1]})
        case("argmin", tag, [x], T("s64", np.argmin(x.a, axis=1)), {"axis": 1})
    x = T("c64", [1 + 1j, 2 - 1j, 0.5j, -3])
    case("sum", "c64", [x], from_f64("c64", np.sum(x.f64())), tol={"atol": 1e-6, "rtol": 1e-6})
    case("product", "c64", [x], from_f64("c64", np.prod(x.f64())), tol={"atol": 1e-6, "rtol": 1e-6})
    argmaxmin()


def arg(x, fn, axis, high=False):
    """Nx: the first NaN counts as the extreme; ties go to the lowest (or highest) index."""
    a = np.moveaxis(x, axis, -1) if axis is not None else x.reshape(1, -1)
    out = np.zeros(a.shape[:-1], dtype=np.int64)
    for idx in np.ndindex(*a.shape[:-1]):
        row = a[idx].astype(np.float64) if x.dtype.kind != "b" else a[idx].astype(np.int64)
        order = range(len(row)) if not high else range(len(row) - 1, -1, -1)
        nan = [i for i in order if row[i] != row[i]]
        if nan:
            out[idx] = nan[0]
            continue
        best = None
        for i in order:
            if best is None or (row[i] > row[best] if fn == "argmax" else row[i] < row[best]):
                best = i
        out[idx] = best
    return out if axis is not None else out.reshape(())


def argmaxmin():
    for dt in ("f32", "f64", "f16", "s32", "u8"):
        x = typed(dt, [3, 4], -3, 3) if dt != "u8" else T("u8", rand_ints([12], 0, 3), [3, 4])
        for fn in ("argmax", "argmin"):
            case(fn, f"{dt} all axes", [x], T("s64", arg(x.a, fn, None, False)))
            case(fn, f"{dt} axis 1 with ties", [x], T("s64", arg(x.a, fn, 1, False)), {"axis": 1})
            case(fn, f"{dt} axis 0 keep_axis", [x], T("s64", arg(x.a, fn, 0, False)[None, :]),
                 {"axis": 0, "keep_axis": True})
            case(fn, f"{dt} axis 1 tie_break high", [x], T("s64", arg(x.a, fn, 1, True)), {"axis": 1, "tie_break": "high"})
    x = T("f32", [1, "nan", 5, "nan", 7, 2, 2, "-inf"], [2, 4])
    for fn in ("argmax", "argmin"):
        case(fn, "f32 first NaN is the extreme", [x], T("s64", arg(x.a, fn, 1, False)), {"axis": 1})
        case(fn, "f32 NaN, flattened", [x], T("s64", arg(x.a, fn, None, False)))
    x = T("s32", [4, 9, 9, 1, 1, 4])
    case("argmax", "s32 tie low", [x], T("s64", 1))
    case("argmin", "s32 tie high", [x], T("s64", 4), {"tie_break": "high"})


# ------------------------------------------------------------ dot
def dot_ref(a, ca, ba, b, cb, bb):
    """Nx dot/6: result axes are batch, then a's free, then b's free."""
    fa = [i for i in range(a.ndim) if i not in ca and i not in ba]
    fb = [i for i in range(b.ndim) if i not in cb and i not in bb]
    at = np.transpose(a, ba + fa + ca)
    bt = np.transpose(b, bb + cb + fb)
    nb = int(np.prod([a.shape[i] for i in ba])) if ba else 1
    nfa = int(np.prod([a.shape[i] for i in fa])) if fa else 1
    nfb = int(np.prod([b.shape[i] for i in fb])) if fb else 1
    nc = int(np.prod([a.shape[i] for i in ca])) if ca else 1
    r = np.matmul(at.reshape(nb, nfa, nc), bt.reshape(nb, nc, nfb))
    return r.reshape([a.shape[i] for i in ba] + [a.shape[i] for i in fa] + [b.shape[i] for i in fb])


def dot_tol(dt, a, b, ca, ba, cb, bb):
    scale = float(np.max(np.abs(dot_ref(np.abs(a.f64()), ca, ba, np.abs(b.f64()), cb, bb)), initial=0))
    eps = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3, "c64": 1e-6, "c128": 1e-14}[dt]
    return {"atol": eps * scale, "rtol": 10 * eps}


def dots():
    layouts = [
        ("matmul [3][4].[4][5]", [3, 4], [4, 5], [1], [], [0], []),
        ("batched [2][3][4].[2][4][5]", [2, 3, 4], [2, 4, 5], [2], [0], [1], [0]),
        ("batch axes not leading", [3, 2, 4], [4, 2, 5], [2], [1], [0], [1]),
        ("two contracting axes", [2, 3, 4], [3, 4, 2], [1, 2], [], [0, 1], []),
        ("outer product (no contraction)", [3], [4], [], [], [], []),
        ("vector . vector", [6], [6], [0], [], [0], []),
    ]
    for dt in ("f32", "f64", "f16", "bf16", "s32", "s64", "c64", "u8", "c128"):
        for name, sa, sb, ca, ba, cb, bb in layouts:
            wanted = ("matmul [3][4].[4][5]",) + (("batched [2][3][4].[2][4][5]",) if dt in ("f64", "f16", "s64", "c64") else ())
            if dt not in ("f32", "s32") and name not in wanted:
                continue
            if dt == "u8":
                a, b = T("u8", rand_ints([int(np.prod(sa))], 0, 3), sa), T("u8", rand_ints([int(np.prod(sb))], 0, 3), sb)
            else:
                a, b = typed(dt, sa, -9, 9), typed(dt, sb, -9, 9)
            attrs = {"contract_a": ca, "batch_a": ba, "contract_b": cb, "batch_b": bb}
            if dt in INT_BITS:
                # Nx: integer dot keeps the operands' merged type (no widening).
                r = dot_ref(a.ints(), ca, ba, b.ints(), cb, bb)
                case("dot", f"{dt} {name}", [a, b], from_ints(dt, r), attrs)
            else:
                r = dot_ref(a.f64(), ca, ba, b.f64(), cb, bb)
                case("dot", f"{dt} {name}", [a, b], from_f64(dt, r), attrs, dot_tol(dt, a, b, ca, ba, cb, bb))
    a, b = T("f32", rand([4, 6])), T("f32", rand([6]))
    case("dot", "plain matrix . vector", [a, b], from_f64("f32", a.f64() @ b.f64()), {"plain": True},
         dot_tol("f32", a, b, [1], [], [0], []))
    a, b = T("f32", rand([2, 3, 4])), T("f32", rand([5, 4, 2]))
    # Nx dot/2 on rank > 2: last axis of a with the second to last of b.
    case("dot", "plain rank 3 . rank 3", [a, b], from_f64("f32", np.tensordot(a.f64(), b.f64(), axes=([2], [1]))),
         {"plain": True}, dot_tol("f32", a, b, [2], [], [1], []))
    a, b = T("s32", [1, 2, 3, 4, 5, 6], [2, 3]), T("f32", [0.5, 0.25, -1])
    case("dot", "s32 . f32 -> f32", [a, b], from_f64("f32", a.f64() @ b.f64()), {"plain": True})
    a, b = T("f32", rand([20, 12])), T("f32", rand([12, 9]))
    case("dot", "f32 [20][12].[12][9]", [a, b], from_f64("f32", a.f64() @ b.f64()),
         {"contract_a": [1], "batch_a": [], "contract_b": [0], "batch_b": []}, dot_tol("f32", a, b, [1], [], [0], []))


# ------------------------------------------------------------ windows, scans, fft
def window_ref(x, window, strides, padding, fn, init):
    pad_width = [(lo, hi) for lo, hi in padding]
    xp = np.pad(x, pad_width, constant_values=init)
    out_shape = [(xp.shape[i] - window[i]) // strides[i] + 1 for i in range(x.ndim)]
    out = np.empty(out_shape, dtype=xp.dtype)
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + w) for i, s, w in zip(idx, strides, window))
        out[idx] = fn(xp[sl])
    return out


def windows():
    configs = [
        ("valid", [2, 3], [1, 1], [[0, 0], [0, 0]]),
        ("strides and padding", [2, 3], [1, 2], [[1, 0], [0, 1]]),
        ("window 1, stride 2", [1, 1], [2, 2], [[0, 0], [0, 0]]),
        ("padding both sides, stride 3", [3, 2], [3, 1], [[2, 1], [1, 1]]),
    ]
    for dt in ("f32", "s32", "u8", "f64", "f16", "s64", "bf16"):
        x = typed(dt, [5, 6], -20, 20) if dt != "u8" else T("u8", rand_ints([30], 0, 40), [5, 6])
        for name, win, st, pad in configs:
            if dt not in ("f32", "s32") and name not in ("strides and padding",):
                continue
            attrs = {"window": win, "strides": st, "padding": pad}
            # Padding holds each reduction's identity: 0 for sum, -inf (or the
            # type's minimum) for max, +inf (or the maximum) for min.
            if dt in INT_BITS:
                lo, hi = int_min(dt), int_max(dt)
                s = window_ref(x.ints(), win, st, pad, lambda w: sum(w.reshape(-1)), 0)
                # Nx: window_sum keeps the input type.
                case("window_sum", f"{dt} {name}", [x], from_ints(dt, s), attrs)
                case("window_max", f"{dt} {name}", [x], T(dt, window_ref(x.a, win, st, pad, np.max, lo)), attrs)
                case("window_min", f"{dt} {name}", [x], T(dt, window_ref(x.a, win, st, pad, np.min, hi)), attrs)
            else:
                v = x.f64()
                case("window_sum", f"{dt} {name}", [x], from_f64(dt, window_ref(v, win, st, pad, np.sum, 0.0)), attrs,
                     float_sum_tol(dt, T(dt, np.abs(v).max() * np.ones(int(np.prod(win))))))
                case("window_max", f"{dt} {name}", [x], from_f64(dt, window_ref(v, win, st, pad, np.max, -np.inf)), attrs)
                case("window_min", f"{dt} {name}", [x], from_f64(dt, window_ref(v, win, st, pad, np.min, np.inf)), attrs)
    x = T("f32", [1, "nan", 3, 4, 5, -1], [6])
    for op, fn in (("window_max", np.max), ("window_min", np.min), ("window_sum", np.sum)):
        case(op, "f32 NaN propagates", [x], T("f32", window_ref(x.f64(), [2], [2], [[0, 0]], fn, 0.0)),
             {"window": [2], "strides": [2]})
    x = typed("s32", [2, 3, 4])
    s = window_ref(x.ints(), [1, 2, 2], [1, 1, 1], [[0, 0]] * 3, lambda w: sum(w.reshape(-1)), 0)
    case("window_sum", "s32 rank 3 default strides", [x], from_ints("s32", s), {"window": [1, 2, 2]})


def scans():
    for dt in ("f32", "s32", "u8", "f64", "s64", "f16", "c64"):
        x = typed(dt, [3, 4], -10, 10) if dt != "u8" else T("u8", rand_ints([12], 0, 20), [3, 4])
        for axis in (0, 1):
            for rev in (False, True):
                a = np.flip(x.a, axis) if rev else x.a
                attrs = {"axis": axis, "reverse": rev}
                tag = f"{dt} axis {axis}{' reverse' if rev else ''}"
                if dt in INT_BITS:
                    c = np.cumsum(np.asarray(a, dtype=object), axis=axis)
                    c = np.flip(c, axis) if rev else c
                    # Nx: cumulative_sum keeps the input type (numpy widens to int64).
                    case("cumulative_sum", tag, [x], from_ints(dt, c), attrs)
                else:
                    c = np.cumsum(a.astype(np.complex128 if dt == "c64" else np.float64), axis=axis)
                    c = np.flip(c, axis) if rev else c
                    tol = float_sum_tol(dt if dt != "c64" else "f32", T("f64", np.abs(x.f64())))
                    case("cumulative_sum", tag, [x], from_f64(dt, c), attrs, tol)
    x = T("s32", [2147483647, 1, 1])
    case("cumulative_sum", "s32 wraps", [x], from_ints("s32", [2147483647, 2147483648, 2147483649]))
    x = typed("f32", [2, 2, 3])
    case("cumulative_sum", "f32 rank 3 axis 2", [x], from_f64("f32", np.cumsum(x.f64(), axis=2)), {"axis": 2},
         float_sum_tol("f32", x))


def select_scatter_ref(x, source, init, window, strides, padding, largest):
    """select_and_scatter: each window's first largest (smallest) element in
    row-major order, NaN counting as the extreme, padding never picked."""
    out = np.full(x.shape, init, dtype=object)
    for idx in np.ndindex(*source.shape):
        best = None
        for off in np.ndindex(*window):
            pos = tuple(i * s - lo + o for i, s, (lo, _), o in zip(idx, strides, padding, off))
            if any(p < 0 or p >= d for p, d in zip(pos, x.shape)):
                continue
            v = x[pos]
            if best is None:
                best = pos
                continue
            b = x[best]
            if isinstance(v, float) and math.isnan(v):
                better = not math.isnan(b)
            elif isinstance(b, float) and math.isnan(b):
                better = False
            else:
                better = v > b if largest else v < b
            if better:
                best = pos
        if best is not None:
            out[best] = out[best] + source[idx]
    return out


def more_windows_and_scans():
    """window_product, window_scatter_max/min, cumulative_product/max/min."""
    configs = [
        ("valid", [2, 3], [1, 1], [[0, 0], [0, 0]]),
        ("strides and padding", [2, 3], [1, 2], [[1, 0], [0, 1]]),
        ("padding both sides, stride 3", [3, 2], [3, 1], [[2, 1], [1, 1]]),
    ]
    prod = lambda w: math.prod(w.reshape(-1).tolist())
    for dt in ("f32", "s32", "u8", "f64", "c64", "f16", "s8"):
        if dt == "u8":
            x = T("u8", rand_ints([30], 0, 7), [5, 6])
        elif dt in COMPLEX:
            x = typed(dt, [5, 6])
        elif dt in INT_BITS:
            x = typed(dt, [5, 6], -9, 9)
        else:
            x = T(dt, rand([5, 6], 0.25, 2), [5, 6])
        for name, win, st, pad in configs:
            if dt not in ("f32", "s32") and name != "strides and padding":
                continue
            attrs = {"window": win, "strides": st, "padding": pad}
            if dt in INT_BITS:
                # Integers wrap in their type (s8 products of six values do).
                case("window_product", f"{dt} {name}", [x], from_ints(dt, window_ref(x.ints(), win, st, pad, prod, 1)), attrs)
            else:
                ref = window_ref(x.f64(), win, st, pad, prod, 1)
                eps = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "c64": 1e-6}[dt]
                case("window_product", f"{dt} {name}", [x], from_f64(dt, ref), attrs,
                     {"atol": 0, "rtol": 8 * eps * int(np.prod(win))})
    x = T("pred", [1, 1, 0, 1, 1, 1], [6])
    case("window_product", "pred computes in u8", [x], T("u8", [1, 0, 0, 1, 1]), {"window": [2]})
    x = T("f32", [2, "nan", 3, 0, "inf", 0.5], [6])
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as it should be
        r = window_ref(x.f64(), [2], [1], [[0, 0]], np.prod, 1)
    case("window_product", "f32 NaN, inf and zero", [x], from_f64("f32", r), {"window": [2]})
    case("window_product", "f32 [1] window 1", [T("f32", [3.5])], T("f32", [3.5]), {"window": [1]})

    # window_scatter_max/min: ties (few distinct values), overlapping windows
    # (picks sum), windows wholly in the padding (dropped), NaN, mixed types.
    scatter_configs = [
        ("valid, no overlap", [2, 3], [2, 3], [[0, 0], [0, 0]]),
        ("overlapping windows", [3, 3], [1, 2], [[0, 0], [0, 0]]),
        ("padding", [2, 2], [2, 1], [[1, 1], [0, 1]]),
        ("windows wholly in the padding", [2, 2], [1, 1], [[3, 0], [0, 2]]),
    ]
    for dt in ("f32", "s32", "f64", "u8", "f16"):
        x = T(dt, rand_ints([30], 0, 4), [5, 6])
        for name, win, st, pad in scatter_configs:
            if dt not in ("f32", "s32") and name != "overlapping windows":
                continue
            shape = [(d + lo + hi - w) // s + 1 for d, w, s, (lo, hi) in zip([5, 6], win, st, pad)]
            src = T(dt, rand_ints([int(np.prod(shape))], 0, 9), shape)
            init = T(dt, 2)
            attrs = {"window": win, "strides": st, "padding": pad}
            for op, largest in (("window_scatter_max", True), ("window_scatter_min", False)):
                values, sources = (x.ints(), src.ints()) if dt in INT_BITS else (x.f64(), src.f64())
                r = select_scatter_ref(values, sources, 2, win, st, pad, largest)
                expect = from_ints(dt, r) if dt in INT_BITS else from_f64(dt, r.astype(np.float64))
                case(op, f"{dt} {name}", [x, src, init], expect, attrs)
    x = T("f32", [1, "nan", 3, "nan", 5, -1, 7, 7], [8])
    src, init = T("f32", [10, 20, 30, 40]), T("f32", 0)
    for op, largest in (("window_scatter_max", True), ("window_scatter_min", False)):
        r = select_scatter_ref(x.f64(), src.f64(), 0.0, [2], [2], [[0, 0]], largest)
        case(op, "f32 NaN is picked", [x, src, init], from_f64("f32", r.astype(np.float64)), {"window": [2], "strides": [2]})
    # x of one type, source s32 and init f32: the result is f32 (source and init meet).
    x = T("s8", [3, -1, 4, 1, -5, 9], [6])
    src, init = T("s32", [1, 2, 3]), T("f32", 0.5)
    r = select_scatter_ref(x.ints(), np.array([1, 2, 3], dtype=object), 0.5, [2], [2], [[0, 0]], True)
    case("window_scatter_max", "s8 x, s32 source, f32 init -> f32", [x, src, init], from_f64("f32", r.astype(np.float64)),
         {"window": [2], "strides": [2]})

    # Running products, maxima and minima.
    def run(fn, a, axis, rev):
        a = np.flip(a, axis) if rev else a
        c = fn(a, axis)
        return np.flip(c, axis) if rev else c

    cumprod_obj = lambda a, axis: np.cumprod(np.asarray(a, dtype=object), axis=axis)
    for dt in ("f32", "s32", "u8", "f64", "c64", "f16", "s8"):
        if dt == "u8":
            x = T("u8", rand_ints([12], 0, 5), [3, 4])
        elif dt in INT_BITS:
            x = typed(dt, [3, 4], -9, 9)
        elif dt in COMPLEX:
            x = typed(dt, [3, 4])
        else:
            x = T(dt, rand([3, 4], -2, 2), [3, 4])
        for axis in (0, 1):
            for rev in (False, True):
                attrs = {"axis": axis, "reverse": rev}
                tag = f"{dt} axis {axis}{' reverse' if rev else ''}"
                if dt in INT_BITS:
                    case("cumulative_product", tag, [x], from_ints(dt, run(cumprod_obj, x.ints(), axis, rev)), attrs)
                else:
                    eps = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "c64": 1e-6}[dt]
                    case("cumulative_product", tag, [x], from_f64(dt, run(np.cumprod, x.f64(), axis, rev)), attrs,
                         {"atol": 0, "rtol": 16 * eps})
    x = T("pred", [1, 1, 0, 1], [4])
    case("cumulative_product", "pred computes in u8", [x], T("u8", [1, 1, 0, 0]))
    x = T("f32", [2, "nan", 3, 0], [4])
    case("cumulative_product", "f32 NaN propagates", [x], from_f64("f32", np.cumprod(x.f64())))

    for dt in ("f32", "s32", "u8", "f64", "f16", "bf16", "s64", "u32"):
        x = typed(dt, [3, 4], -20, 20) if dt not in ("u8", "u32") else T(dt, rand_ints([12], 0, 40), [3, 4])
        for op, fn in (("cumulative_max", np.maximum.accumulate), ("cumulative_min", np.minimum.accumulate)):
            for axis in (0, 1):
                for rev in (False, True):
                    if dt not in ("f32", "s32") and (axis, rev) not in ((1, False), (0, True)):
                        continue
                    tag = f"{dt} axis {axis}{' reverse' if rev else ''}"
                    case(op, tag, [x], T(dt, run(lambda a, k: fn(a, axis=k), x.a, axis, rev)),
                         {"axis": axis, "reverse": rev})
    nan = T("f32", [1, 3, "nan", 5, -2], [5])
    for op, fn in (("cumulative_max", np.maximum.accumulate), ("cumulative_min", np.minimum.accumulate)):
        case(op, "f32 NaN propagates", [nan], T("f32", fn(nan.a)))
        case(op, "f32 NaN propagates, reverse", [nan], T("f32", np.flip(fn(np.flip(nan.a)))), {"reverse": True})
        case(op, "pred", [T("pred", [0, 1, 0, 1])], T("pred", fn(np.array([0, 1, 0, 1], dtype=bool))))
        case(op, "s32 [0][3] (empty axis)", [T("s32", np.zeros((0, 3), np.int32))], T("s32", np.zeros((0, 3), np.int32)))
        case(op, "s32 [3][1] along the size-1 axis", [T("s32", [[4], [-2], [7]])], T("s32", [[4], [-2], [7]]), {"axis": 1})
        x = T("s32", rand_ints([4 * SIMD_SPAN], -99, 99), [4, SIMD_SPAN])
        case(op, f"s32 [4][{SIMD_SPAN}] along the outer axis", [x], T("s32", fn(x.a, axis=0)))
    x = T("s64", np.zeros((2, 0), np.int64))
    case("cumulative_product", "s64 [2][0] (empty axis)", [x], T("s64", np.zeros((2, 0), np.int64)), {"axis": 1})


def ffts():
    def tol(dt, x, n):
        # FFT error grows like eps * log(n) * ||x||: scale by the largest output.
        eps = 1e-6 if dt in ("c64", "f32", "s32") else 1e-14
        mean = max(float(np.sum(np.abs(x))), 1.0) / max(n, 1)
        return {"atol": 10 * eps * mean * max(math.log2(max(n, 2)), 1), "rtol": 10 * eps}

    def fft_case(op, name, x, length=None):
        v = x.f64() if x.dtype != "s32" else x.a.astype(np.float64)
        n = length or x.shape[-1]
        with np.errstate(all="ignore"):
            r = np.fft.fft(v, n=n, axis=-1) if op == "fft" else np.fft.ifft(v, n=n, axis=-1)  # ifft: 1/n (Nx)
        out = "c128" if x.dtype in ("f64", "c128") else "c64"
        attrs = {"length": length} if length is not None else {}
        case(op, name, [x], from_f64(out, r), attrs, tol(out, r if op == "fft" else r * n, n))
    for op in ("fft", "ifft"):
        fft_case(op, "c64 [8]", T("c64", normal(8) + 1j * normal(8)))
        fft_case(op, "c64 [3][6] batched over rows", T("c64", normal((3, 6)) + 1j * normal((3, 6))))
        fft_case(op, "c64 [8] padded to 12", T("c64", normal(8) + 1j * normal(8)), 12)
        fft_case(op, "c64 [8] truncated to 5", T("c64", normal(8) + 1j * normal(8)), 5)
        fft_case(op, "c128 [2][16]", T("c128", normal((2, 16)) + 1j * normal((2, 16))))
        fft_case(op, "c128 [7] padded to 9", T("c128", normal(7) + 1j * normal(7)), 9)
        # Real inputs become complex: f32 -> c64, f64 -> c128.
        fft_case(op, "f32 [16] -> c64", T("f32", normal(16)))
        fft_case(op, "f32 [2][10] truncated to 6 -> c64", T("f32", normal((2, 10))), 6)
        fft_case(op, "f64 [5] padded to 8 -> c128", T("f64", normal(5)), 8)
        fft_case(op, "s32 [4] -> c64", T("s32", [1, -2, 3, 4]))
        fft_case(op, "c64 [2][2][4] rank 3", T("c64", normal((2, 2, 4)) + 1j * normal((2, 2, 4))))
        fft_case(op, "c64 [1]", T("c64", [2 - 1j]))


# ------------------------------------------------------------ creation
def creation():
    for dt in ("s32", "f32", "u8", "s64", "f16", "f64", "bf16", "c64", "u32"):
        case("iota", f"{dt} [2][3] counts through all elements", [], same(dt, np.arange(6).reshape(2, 3)),
             {"dtype": dt, "shape": [2, 3]})
        case("iota", f"{dt} [2][3] along axis 1", [], same(dt, np.broadcast_to(np.arange(3), (2, 3))),
             {"dtype": dt, "shape": [2, 3], "axis": 1})
    case("iota", "s32 [3][2][2] along axis 0", [], same("s32", np.broadcast_to(np.arange(3)[:, None, None], (3, 2, 2))),
         {"dtype": "s32", "shape": [3, 2, 2], "axis": 0})
    case("iota", "s64 scalar", [], T("s64", 0), {"dtype": "s64", "shape": []})
    case("iota", f"f32 [{SIMD_SPAN}]", [], same("f32", np.arange(SIMD_SPAN)), {"dtype": "f32", "shape": [SIMD_SPAN]})
    case("iota", "u8 [260] wraps", [], from_ints("u8", list(range(260))), {"dtype": "u8", "shape": [260]})
    for dt in ("s32", "f32", "u8", "f64", "pred", "f16", "s64", "c64"):
        case("eye", f"{dt} [3][3]", [], same(dt, np.eye(3, dtype=NP_TYPE[dt] if dt != "bf16" else np.float32)),
             {"dtype": dt, "shape": [3, 3]})
    case("eye", "f32 [2][3] not square", [], same("f32", np.eye(2, 3)), {"dtype": "f32", "shape": [2, 3]})
    case("eye", "s32 [4][2] not square", [], same("s32", np.eye(4, 2, dtype=np.int32)), {"dtype": "s32", "shape": [4, 2]})
    case("eye", "f64 [2][2][3] batched", [], same("f64", np.broadcast_to(np.eye(2, 3), (2, 2, 3))),
         {"dtype": "f64", "shape": [2, 2, 3]})
    for dt in ("f32", "s32", "u8", "f64", "s64", "f16", "bf16", "c64", "pred", "c128", "s8"):
        x = typed(dt, [2, 3])
        case("constant", f"{dt} literal [2][3]", [], x, {"literal": x.encode()})
    # constant(value, dtype): a strong scalar converted as as_type converts.
    for v, dt, out in ((2.5, "f64", T("f64", 2.5)), (-3, "s8", T("s8", -3)), (0.1, "f32", from_f64("f32", np.float64(0.1))),
                       (0.1, "bf16", from_f64("bf16", np.float64(0.1))), (7.9, "s32", T("s32", 7)), (2, "c64", T("c64", 2))):
        case("constant", f"scalar {v} as {dt}", [], out, {"scalar": v, "dtype": dt})


def larger_layouts():
    """Shapes past one SIMD vector or one 16x16 tile, along inner and outer
    axes: the layouts kernels choose between by size."""
    a, b = T("f32", rand([3, SIMD_SPAN], -8, 8)), T("f32", rand([SIMD_SPAN], -8, 8))
    case("add", f"f32 [3][{SIMD_SPAN}] + [{SIMD_SPAN}] broadcast rows", [a, b], from_f64("f32", a.f64() + b.f64()))
    a, b = T("s32", rand_ints([SIMD_SPAN], -99, 99), [SIMD_SPAN, 1]), T("s32", rand_ints([3], -99, 99), [1, 3])
    case("multiply", f"s32 [{SIMD_SPAN}][1] * [1][3] broadcast both", [a, b], from_ints("s32", a.ints() * b.ints()))
    for dt, shape in (("s32", [20, 17]), ("u8", [17, 18])):
        x = typed(dt, shape)
        case("transpose", f"{dt} {shape} crosses 16x16 tiles", [x], same(dt, x.a.T))
    case("reverse", "u8 [17][18] both axes", [x], same("u8", x.a[::-1, ::-1]), {"axes": [0, 1]})
    x = T("s32", rand_ints([2 * 18 * 17], -99, 99), [2, 18, 17])
    case("transpose", "s32 [2][18][17] perm (2, 1, 0)", [x], same("s32", x.a.transpose(2, 1, 0)), {"axes": [2, 1, 0]})
    rows = rand([SIMD_SPAN, 5], -8, 8)
    rows[20, 2] = math.nan
    x = T("f32", rows)
    v = x.f64()
    tag = f"f32 [{SIMD_SPAN}][5] along the outer axis, NaN in column 2"
    case("sum", tag, [x], from_f64("f32", np.sum(v, axis=0)), {"axes": [0]}, float_sum_tol("f32", x))
    case("reduce_max", tag, [x], from_f64("f32", np.max(v, axis=0)), {"axes": [0]})
    case("reduce_min", tag, [x], from_f64("f32", np.min(v, axis=0)), {"axes": [0]})
    case("argmax", tag, [x], T("s64", arg(x.a, "argmax", 0)), {"axis": 0})
    case("argmin", tag, [x], T("s64", arg(x.a, "argmin", 0)), {"axis": 0})
    case("product", f"f32 [{SIMD_SPAN}][5] along the outer axis", [T("f32", np.nan_to_num(v) / 8 + 1)],
         from_f64("f32", np.prod(np.nan_to_num(v) / 8 + 1, axis=0)), {"axes": [0]}, {"rtol": 1e-5, "atol": 0})
    x = T("s32", rand_ints([SIMD_SPAN * 4], -99, 99), [SIMD_SPAN, 4])
    case("sum", f"s32 [{SIMD_SPAN}][4] along the outer axis", [x], from_ints("s64", np.sum(x.ints(), axis=0)), {"axes": [0]})
    x = T("f32", rand([2, SIMD_SPAN], -8, 8))
    case("cumulative_sum", f"f32 [2][{SIMD_SPAN}] along the long axis", [x], from_f64("f32", np.cumsum(x.f64(), axis=1)),
         {"axis": 1}, float_sum_tol("f32", x))
    x = T("s32", rand_ints([SIMD_SPAN * 2], -99, 99), [SIMD_SPAN, 2])
    case("cumulative_sum", f"s32 [{SIMD_SPAN}][2] reverse along the outer axis", [x],
         from_ints("s32", np.flip(np.cumsum(np.flip(x.ints(), 0), axis=0), 0)), {"axis": 0, "reverse": True})
    x = T("f32", rand([SIMD_SPAN], -8, 8))
    for op, fn, init in (("window_sum", np.sum, 0.0), ("window_max", np.max, -np.inf), ("window_min", np.min, np.inf)):
        tol = float_sum_tol("f32", T("f32", np.full(5, 8.0))) if op == "window_sum" else EXACT
        case(op, f"f32 [{SIMD_SPAN}] window 5 padded", [x], from_f64("f32", window_ref(x.f64(), [5], [1], [[2, 2]], fn, init)),
             {"window": [5], "padding": [[2, 2]]}, tol)
    x = T("f32", normal(48))
    r = np.fft.fft(x.f64())
    case("fft", "f32 [48] -> c64", [x], from_f64("c64", r), {}, {"atol": 1e-5 * float(np.max(np.abs(r))), "rtol": 1e-5})
    x = T("c64", normal(30) + 1j * normal(30))
    r = np.fft.ifft(x.f64())
    case("ifft", "c64 [30]", [x], from_f64("c64", r), {}, {"atol": 1e-5 * float(np.max(np.abs(r))), "rtol": 1e-5})



# ------------------------------------------------------------ indexing
# Nx (as XLA): an index outside its axis clamps into it.
INDEX_DTS = ("f32", "s32", "u8", "f64", "s64", "f16", "bf16", "c64", "pred")


def clamp(idx, dim):
    return np.clip(np.asarray(idx, dtype=object), 0, dim - 1).astype(np.int64)


def gather_ref(x, idx):
    """Nx gather: the last axis of idx indexes x's leading axes (clamped)."""
    idx = np.asarray(idx, dtype=object)
    k = idx.shape[-1]
    rows = idx.reshape(-1, k)
    out = [x[tuple(int(min(max(v, 0), x.shape[j] - 1)) for j, v in enumerate(r))] for r in rows]
    return np.array(out, dtype=x.dtype).reshape(idx.shape[:-1] + x.shape[k:])


def scatter_ref(x, idx, upd, add):
    out = x.copy()
    idx = np.asarray(idx, dtype=object)
    k = idx.shape[-1]
    rows = idx.reshape(-1, k)
    upd = upd.reshape((rows.shape[0],) + x.shape[k:])
    for r, u in zip(rows, upd):
        at = tuple(int(min(max(v, 0), x.shape[j] - 1)) for j, v in enumerate(r))
        out[at] = out[at] + u if add else u
    return out


def indexing():
    for dt in INDEX_DTS:
        x = typed(dt, [4, 3])
        idx = [[2, -1], [7, 0]]
        case("take", f"{dt} axis 0, clamped", [x, T("s32", idx)], same(dt, np.take(x.a, clamp(idx, 4), axis=0)))
        case("gather", f"{dt} [4][3] rows, clamped", [x, T("s64", [[3], [9], [-4]])],
             same(dt, gather_ref(x.a, [[3], [9], [-4]])))
        case("take_along_axis", f"{dt} axis 1", [x, T("s64", [[2, 0], [1, 1], [5, -1], [0, 2]])],
             same(dt, np.take_along_axis(x.a, clamp([[2, 0], [1, 1], [5, -1], [0, 2]], 3), axis=1)), {"axis": 1})
        upd = typed(dt, [3, 3])
        case("indexed_put", f"{dt} rows, duplicates: the last wins", [x, T("s32", [[3], [0], [3]]), upd],
             same(dt, scatter_ref(x.a, [[3], [0], [3]], upd.a, False)))
    x = typed("f32", [2, 5, 3])
    idx = [4, 0, 9, 2]
    case("take", "f32 axis 1, u8 indices", [x, T("u8", idx)], same("f32", np.take(x.a, clamp(idx, 5), axis=1)),
         {"axis": 1})
    case("take", "f32 axis -1, [2][2] indices", [x, T("s16", [[0, 2], [-3, 1]])],
         same("f32", np.take(x.a, clamp([[0, 2], [-3, 1]], 3), axis=2)), {"axis": -1})
    case("take", "f32 scalar index drops the axis", [x, T("s64", 3)], same("f32", x.a[:, 3, :]), {"axis": 1})
    case("take", "f32 no indices", [x, T("s32", np.zeros([0], np.int32))], same("f32", x.a[:0]))
    x = typed("s32", [1, 3])
    case("take", "s32 size-1 axis: every index clamps to 0", [x, T("s32", [0, 5, -2])],
         same("s32", np.take(x.a, [0, 0, 0], axis=0)))
    x = typed("f32", [3, 2])
    big = (1 << 63) + 5
    case("take", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [big, 1])], same("f32", x.a[[2, 1]]))
    case("take_along_axis", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [[big, 0], [1, big], [0, 0]])],
         same("f32", np.take_along_axis(x.a, np.array([[1, 0], [1, 1], [0, 0]]), axis=1)), {"axis": 1})
    case("gather", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [[big, 0]])], same("f32", x.a[[2], [0]]))
    x = typed("s32", [3, 4])
    idx = [[3, 1, 0, -1], [0, 0, 2, 9]]
    case("take_along_axis", "s32 axis 0", [x, T("s32", idx)],
         same("s32", np.take_along_axis(x.a, clamp(idx, 3), axis=0)))
    case("take_along_axis", "s32 empty indices axis", [x, T("s32", np.zeros([3, 0], np.int32))],
         same("s32", x.a[:, :0]), {"axis": 1})
    x = typed("f32", [4, 5, 6])
    idx = [[0, 1], [3, 4], [-1, 7]]
    case("gather", "f32 [4][5][6] by pairs -> [3][6]", [x, T("s32", idx)], same("f32", gather_ref(x.a, idx)))
    idx = [[[1, 2, 3], [0, 0, 0]], [[3, 4, 5], [2, 9, 1]]]
    case("gather", "f32 full index, [2][2][3] -> [2][2]", [x, T("u16", idx)], same("f32", gather_ref(x.a, idx)))
    case("gather", "f32 no rows", [x, T("s64", np.zeros([0, 1], np.int64))], same("f32", x.a[:0]))
    x = typed("s64", [1, 2])
    case("gather", "s64 size-1 axis", [x, T("s8", [[0], [3], [-3]])], same("s64", x.a[[0, 0, 0]]))
    # indexed_add: duplicates sum; out-of-range indices clamp.
    x = T("f32", rand([5]))
    upd = T("f32", rand([4]))
    idx = [[1], [3], [1], [9]]
    case("indexed_add", "f32 duplicates sum, 9 clamps to 4", [x, T("s32", idx), upd],
         from_f64("f32", scatter_ref(x.f64(), idx, upd.f64(), True)))
    for dt in ("s32", "u8", "f64", "s64", "f16", "bf16", "c64", "s8"):
        x = typed(dt, [3, 4])
        upd = typed(dt, [3, 4])
        idx = [[0], [2], [0]]
        if dt in INT_BITS:
            expected = from_ints(dt, scatter_ref(x.ints(), idx, upd.ints(), True))
        else:
            expected = from_f64(dt, scatter_ref(x.f64(), idx, upd.f64(), True))
        case("indexed_add", f"{dt} rows, duplicate row 0", [x, T("s64", idx), upd], expected)
    x = T("u8", [250, 1, 2])
    case("indexed_add", "u8 wraps", [x, T("u8", [[0], [0]]), T("u8", [3, 4])], T("u8", [1, 1, 2]))
    x = T("f64", rand([3, 3]))
    upd = T("f64", rand([4]))
    idx = [[0, 0], [2, 1], [0, 0], [-1, 5]]
    case("indexed_add", "f64 full index, duplicates", [x, T("s32", idx), upd],
         from_f64("f64", scatter_ref(x.f64(), idx, upd.f64(), True)))
    x = typed("f32", [3, 4])
    case("indexed_add", "f32 no updates", [x, T("s32", np.zeros([0, 1], np.int32)), T("f32", np.zeros([0, 4]))],
         same("f32", x.a))
    x = T("s32", [1, 2, 3])
    case("indexed_add", "s32 with f32 updates promotes", [x, T("s32", [[2]]), T("f32", [0.5])],
         T("f32", [1, 2, 3.5]))
    x = T("f32", rand([5]))
    upd = T("f32", [1, 2, 3, 4])
    idx = [[1], [3], [1], [-7]]
    case("indexed_put", "f32 duplicates: the last wins, -7 clamps to 0", [x, T("s32", idx), upd],
         same("f32", scatter_ref(x.a, idx, upd.a, False)))
    x = typed("s16", [2, 3])
    idx = [[1, 2], [0, 0], [1, 2]]
    upd = T("s16", [7, 8, 9])
    case("indexed_put", "s16 full index", [x, T("u32", idx), upd], same("s16", scatter_ref(x.a, idx, upd.a, False)))


# ------------------------------------------------------------ sorting
# Nx/numpy: NaNs sort after every number; descending is ascending reversed
# with ties kept in index order (numpy has no descending: computed here).
SORT_DTS = ("f32", "f64", "f16", "bf16", "s8", "s32", "s64", "u8", "u64", "pred")


def order_key(v, descending):
    nan = isinstance(v, float) and math.isnan(v)
    if descending:
        return (0, 0) if nan else (1, -v)
    return (1, 0) if nan else (0, v)


def argsort_ref(a, axis, descending):
    a = np.moveaxis(a, axis, -1)
    flat = a.reshape(int(np.prod(a.shape[:-1])), a.shape[-1])
    rows = []
    for row in flat:
        vals = [float(v) if isinstance(v, (float, np.floating)) else int(v) for v in row]
        rows.append(sorted(range(len(vals)), key=lambda j: (order_key(vals[j], descending), j)))
    out = np.array(rows, dtype=np.int64).reshape(a.shape)
    return np.moveaxis(out, -1, axis)


def sort_cases(dt, x, tag, axis=0, descending=False, index_dtype="s64"):
    order = argsort_ref(x.a, axis, descending)
    attrs = {"axis": axis}
    if descending:
        attrs["descending"] = True
    case("sort", f"{dt} {tag}", [x], same(dt, np.take_along_axis(x.a, order, axis=axis)), attrs)
    if index_dtype != "s64":
        attrs["index_dtype"] = index_dtype
    case("argsort", f"{dt} {tag}", [x], T(index_dtype, order), attrs)


def sorting():
    for dt in SORT_DTS:
        x = typed(dt, [3, 5], -5, 5)
        sort_cases(dt, x, "[3][5] axis 1, ties", 1)
        sort_cases(dt, x, "[3][5] axis 0 descending, ties", 0, True)
    x = T("f32", [3.5, "nan", -1, "inf", 2, "nan", "-inf", 0.25, -7])
    sort_cases("f32", x, "NaNs last")
    sort_cases("f32", x, "NaNs first descending", 0, True)
    x = T("f64", [["nan", 1, -2], [4, "nan", "nan"]])
    sort_cases("f64", x, "NaNs along axis 1", 1)
    x = T("f16", [1.5, "nan", -2, 0.5])
    sort_cases("f16", x, "NaNs", 0, True)
    x = typed("f32", [3, 0])
    sort_cases("f32", x, "empty axis", 1)
    sort_cases("f32", x, "rows of an empty axis", 0)
    x = typed("s32", [1, 4])
    sort_cases("s32", x, "size-1 axis", 0)
    x = typed("s64", [2, 3, 4], -3, 3)
    sort_cases("s64", x, "rank 3 middle axis, s32 indices", 1, False, "s32")
    sort_cases("s64", x, "rank 3 middle axis descending, u8 indices", -2 + 3, True, "u8")
    x = T("f32", rand([2, 40], -4, 4))
    sort_cases("f32", x, "[2][40] axis 1", 1)
    # top_k: the k largest along the last axis, largest first, lower index first among ties.
    x = T("f32", [[1, 5, 3, 5, "nan", 2], [0, -1, 4, 4, 4, 7]])
    order = argsort_ref(x.a, 1, True)
    for k in (0, 3, 6):
        case("top_k_values", f"f32 k={k}", [x], same("f32", np.take_along_axis(x.a, order[:, :k], axis=1)), {"k": k})
        case("top_k_indices", f"f32 k={k}", [x], T("s64", order[:, :k]), {"k": k})
    x = typed("s32", [7], -3, 3)
    order = argsort_ref(x.a, 0, True)
    case("top_k_values", "s32 k=2", [x], same("s32", x.a[order[:2]]), {"k": 2})
    case("top_k_indices", "s32 k=2", [x], T("s64", order[:2]), {"k": 2})

# ------------------------------------------------------------ convolution
def conv_ref(x, k, strides, padding, in_dil, k_dil, fg=1, bg=1):
    """Nx.conv from its definition: the input dilated (zeros between
    elements) and padded (negative trims), then each output element the sum
    of kernel * input over the kernel's window (dilated) at stride steps.
    Feature groups: output channel group g reads input channel group g.
    Batch groups: output channel group g reads batch group g (group-major)."""
    sp = x.ndim - 2
    n, c = x.shape[:2]
    o, cg = k.shape[:2]
    dil = np.zeros([n, c] + [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], in_dil)], dtype=x.dtype)
    dil[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in in_dil)] = x
    for i, (lo, hi) in enumerate(padding):
        ax = 2 + i
        dil = np.pad(dil, [(0, 0)] * ax + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (dil.ndim - ax - 1))
        keep = slice(max(-lo, 0), dil.shape[ax] - max(-hi, 0))
        dil = dil[(slice(None),) * ax + (keep,)]
    window = [(s - 1) * d + 1 for s, d in zip(k.shape[2:], k_dil)]
    out_sp = [(dil.shape[2 + i] - window[i]) // strides[i] + 1 for i in range(sp)]
    groups = fg * bg
    og, ob = o // groups, n // bg
    out = np.zeros([ob, o] + out_sp, dtype=np.result_type(x, k))
    for off in np.ndindex(*k.shape[2:]):
        sl = tuple(slice(off[i] * k_dil[i], off[i] * k_dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(sp))
        patch = dil[(slice(None), slice(None)) + sl]
        for g in range(groups):
            xs = patch[g * ob:(g + 1) * ob] if bg > 1 else patch[:, g * cg:(g + 1) * cg]
            ks = k[(slice(g * og, (g + 1) * og), slice(None)) + off]
            out[:, g * og:(g + 1) * og] += np.einsum("bc...,oc->bo...", xs, ks)
    return out


CONV_EPS = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3, "c64": 1e-6, "c128": 1e-14}


def conv_case(name, x, k, result_dt, strides=None, padding=None, same=False, in_dil=None, k_dil=None, fg=1, bg=1):
    sp = len(x.shape) - 2
    strides, in_dil, k_dil = strides or [1] * sp, in_dil or [1] * sp, k_dil or [1] * sp
    if same:
        pads = [(((s - 1) * d) // 2, (s - 1) * d - ((s - 1) * d) // 2) for s, d in zip(k.shape[2:], k_dil)]
    else:
        pads = padding or [(0, 0)] * sp
    attrs = {"strides": strides, "input_dilation": in_dil, "kernel_dilation": k_dil,
             "feature_group_size": fg, "batch_group_size": bg}
    if same:
        attrs["same"] = True
    elif padding is not None:
        attrs["padding"] = [list(p) for p in padding]
    xv, kv = x.f64(), k.f64()
    r = conv_ref(xv, kv, strides, pads, in_dil, k_dil, fg, bg)
    scale = float(np.max(np.abs(conv_ref(np.abs(xv), np.abs(kv), strides, pads, in_dil, k_dil, fg, bg)), initial=0))
    eps = CONV_EPS[result_dt]
    case("conv", f"{result_dt} {name}", [x, k], from_f64(result_dt, r), attrs, {"atol": eps * scale, "rtol": 10 * eps})


def convs():
    f = lambda shape: T("f32", rand(shape))
    conv_case("1-D valid", f([2, 3, 9]), f([4, 3, 3]), "f32")
    conv_case("1-D stride 2, same", f([2, 3, 10]), f([4, 3, 4]), "f32", strides=[2], same=True)
    conv_case("2-D valid", f([2, 3, 6, 5]), f([4, 3, 3, 2]), "f32")
    conv_case("2-D same, stride 2", f([2, 3, 7, 6]), f([5, 3, 3, 3]), "f32", strides=[2, 2], same=True)
    conv_case("2-D explicit padding", f([1, 2, 5, 6]), f([3, 2, 3, 3]), "f32", padding=[(2, 0), (1, 3)])
    conv_case("2-D negative padding", f([1, 2, 6, 6]), f([3, 2, 2, 3]), "f32", padding=[(-1, 1), (0, -2)])
    conv_case("2-D input dilation", f([2, 2, 4, 3]), f([3, 2, 3, 2]), "f32", in_dil=[2, 3])
    conv_case("2-D kernel dilation", f([2, 2, 7, 8]), f([3, 2, 2, 3]), "f32", k_dil=[3, 2])
    conv_case("2-D same with kernel dilation", f([1, 2, 6, 5]), f([2, 2, 3, 2]), "f32", same=True, k_dil=[2, 3])
    conv_case("2-D strides, padding, both dilations", f([2, 3, 5, 6]), f([4, 3, 2, 3]), "f32", strides=[2, 3],
              padding=[(1, 2), (2, 0)], in_dil=[2, 1], k_dil=[1, 2])
    conv_case("2-D feature groups 2", f([2, 4, 5, 5]), f([6, 2, 3, 3]), "f32", fg=2, padding=[(1, 1), (0, 1)])
    conv_case("2-D depthwise (feature groups = channels)", f([2, 3, 6, 6]), f([6, 1, 3, 3]), "f32", fg=3,
              same=True)
    conv_case("2-D batch groups 2", f([4, 3, 5, 5]), f([4, 3, 2, 2]), "f32", bg=2)
    conv_case("2-D batch groups 3, strides", f([3, 2, 6, 5]), f([6, 2, 3, 2]), "f32", bg=3, strides=[2, 1])
    conv_case("3-D", f([1, 2, 4, 5, 3]), f([2, 2, 2, 3, 2]), "f32", strides=[1, 2, 1],
              padding=[(1, 0), (1, 1), (0, 1)])
    conv_case("3-D input and kernel dilation", f([2, 1, 3, 3, 4]), f([2, 1, 2, 2, 2]), "f32", in_dil=[2, 1, 1],
              k_dil=[1, 2, 2])
    conv_case("no spatial axes (a matrix product)", f([3, 4]), f([5, 4]), "f32")
    conv_case("batch 1, window the input's size", f([1, 3, 4, 4]), f([2, 3, 4, 4]), "f32")
    conv_case("empty batch", f([0, 3, 5, 5]), f([2, 3, 3, 3]), "f32", same=True)
    conv_case("1x1 window", f([2, 5, 3, 4]), f([3, 5, 1, 1]), "f32")
    conv_case("many channels (oneDNN's blocked layout)", f([2, 16, 7, 7]), f([32, 16, 3, 3]), "f32", same=True)
    for dt in ("f64", "c64", "c128", "f16", "bf16"):
        x, k = typed(dt, [2, 4, 5, 6], -9, 9), typed(dt, [4, 2, 3, 2], -9, 9)
        conv_case("strides, padding, dilations, feature groups", x, k, dt, strides=[2, 1],
                  padding=[(1, 1), (2, -1)], in_dil=[1, 2], k_dil=[2, 1], fg=2)
    x, k = typed("f64", [4, 2, 5, 5]), typed("f64", [6, 2, 2, 3])
    conv_case("batch groups 2 with padding and dilations", x, k, "f64", bg=2, padding=[(1, 0), (0, 2)], in_dil=[2, 1],
              k_dil=[1, 2])
    # Nx.conv computes in the floating type of the operands' promotion.
    conv_case("s32 with s32 -> f32", typed("s32", [2, 3, 5, 5], -9, 9), typed("s32", [2, 3, 3, 3], -9, 9), "f32",
              padding=[(1, 1), (1, 1)])
    conv_case("u8 with s8 -> f32", T("u8", rand_ints([1 * 2 * 6], 0, 20), [1, 2, 6]), typed("s8", [3, 2, 2], -9, 9),
              "f32", strides=[2])
    conv_case("f32 with f64 -> f64", f([1, 2, 4, 4]), typed("f64", [2, 2, 2, 2]), "f64")
# ------------------------------------------------------------ linear algebra
# Nx.LinAlg's ops on the last two axes, batched over the rest; references in
# float64/complex128 from the exact inputs (scipy for cholesky, lu and the
# triangular solves), rounded once. qr follows LAPACK's signs (geqrf, as
# numpy's qr): r's diagonal may be negative. eigh's eigenvectors are unique
# only up to sign (phase), so their cases compare abs(v); tests/devices/
# linalg_test.cpp checks a v = v diag(w) and vᴴ v = I.
LINALG_DTS = ("f32", "f64", "c64", "c128")


def linalg_tol(dt, scale=1.0):
    if dt in ("f32", "c64"):
        return {"atol": 2e-5 * scale, "rtol": 2e-4}
    return {"atol": 1e-12 * scale, "rtol": 1e-11}


def random_matrix(dt, shape):
    x = normal(shape)
    if dt in COMPLEX:
        x = x + 1j * normal(shape)
    return x


def well_conditioned(dt, shape):
    """Diagonally dominant: solves and factors stay accurate in f32."""
    n = shape[-1]
    return random_matrix(dt, shape) / 4 + n * np.eye(n)


def positive_definite(dt, shape):
    m = random_matrix(dt, shape) / 2
    n = shape[-1]
    return m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)


def batched(fn, x, *rest):
    """fn over the leading axes of x (and of rest), matrix by matrix."""
    lead = x.shape[:-2]
    out = [fn(x[i], *(r[i] for r in rest)) for i in np.ndindex(*lead)] if lead else [fn(x, *rest)]
    if not lead:
        return out[0]
    if isinstance(out[0], tuple):
        return tuple(np.stack([o[k] for o in out]).reshape(lead + o0.shape) for k, o0 in enumerate(out[0]))
    return np.stack(out).reshape(lead + out[0].shape) if out else None


def linalg_shapes(square=True):
    """(tag, batch shape) of the batched cases: none, one, several, size 1, empty."""
    return [("", ()), (" batched [2]", (2,)), (" batched [2][2]", (2, 2)), (" size-1 batch", (1,)),
            (" empty batch", (0,))]


def cholesky_cases():
    import scipy.linalg as sl
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            shape = lead + (3, 3)
            a = T(dt, positive_definite(dt, shape) if 0 not in lead else np.zeros(shape))
            ref = batched(lambda m: sl.cholesky(m, lower=True), a.f64()) if 0 not in lead else np.zeros(shape)
            case("cholesky", f"{dt} [3][3]{tag}", [a], from_f64(dt, ref), tol=linalg_tol(dt, 4))
    a = T("s32", [[4, 2], [2, 3]])
    case("cholesky", "s32 -> f32", [a], from_f64("f32", np.linalg.cholesky(a.a.astype(np.float64))),
         tol=linalg_tol("f32"))
    # Only the lower triangle is read: the upper one holds garbage.
    a = positive_definite("f64", (4, 4))
    a[np.triu_indices(4, 1)] = 99
    case("cholesky", "f64 upper triangle ignored", [T("f64", a)],
         from_f64("f64", sl.cholesky(np.tril(a) + np.tril(a, -1).T, lower=True)), tol=linalg_tol("f64", 4))
    # Not positive definite: NaNs, no exception (ops.h).
    case("cholesky", "f32 not positive definite -> NaN", [T("f32", [[1, 2], [2, 1]])], T("f32", [["nan"] * 2] * 2))


TRANSFORMS = {"none": 0, "transpose": 1, "conjugate_transpose": 2}


def triangular_ref(a, b, left_side, lower, transform):
    import scipy.linalg as sl
    if left_side:
        return sl.solve_triangular(a, b, lower=lower, trans=TRANSFORMS[transform])
    # x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ: op(a)ᵀ is a (transpose), conj(a) (conjugate transpose) or aᵀ.
    t = a if transform == "transpose" else (np.conj(a) if transform == "conjugate_transpose" else a.T)
    tl = lower if transform != "none" else not lower
    tri = np.tril(t) if tl else np.triu(t)
    return np.linalg.solve(tri, b.T).T


def triangular_solve_cases():
    for dt in LINALG_DTS:
        for transform in TRANSFORMS:
            for left_side in (True, False):
                for lower in (True, False):
                    a = well_conditioned(dt, (3, 3))
                    a = np.tril(a) if lower else np.triu(a)
                    b = random_matrix(dt, (3, 2) if left_side else (2, 3))
                    attrs = {"left_side": left_side, "lower": lower, "transform_a": transform}
                    side = "left" if left_side else "right"
                    ta, tb = T(dt, a), T(dt, b)
                    ref = triangular_ref(ta.f64(), tb.f64(), left_side, lower, transform)
                    case("triangular_solve", f"{dt} {side} {'lower' if lower else 'upper'} {transform}",
                         [ta, tb], from_f64(dt, ref), attrs, linalg_tol(dt))
        for tag, lead in linalg_shapes():
            a, b = T(dt, np.tril(well_conditioned(dt, lead + (3, 3)))), T(dt, random_matrix(dt, lead + (3, 4)))
            ref = batched(lambda m, v: triangular_ref(m, v, True, True, "none"), a.f64(), b.f64()) \
                if 0 not in lead else np.zeros(lead + (3, 4))
            case("triangular_solve", f"{dt} [3][3] [3][4]{tag}", [a, b], from_f64(dt, ref), {}, linalg_tol(dt))
    # b a vector, on either side; the other triangle of a is not read.
    a = well_conditioned("f64", (2, 4, 4))
    b = random_matrix("f64", (2, 4))
    for left_side in (True, False):
        ref = np.stack([triangular_ref(np.tril(a[i]), b[i][:, None] if left_side else b[i][None, :], left_side, True,
                                       "none").reshape(4) for i in range(2)])
        case("triangular_solve", f"f64 vector b, {'left' if left_side else 'right'}, upper triangle ignored",
             [T("f64", a), T("f64", b)], from_f64("f64", ref), {"left_side": left_side}, linalg_tol("f64"))
    a, b = T("s32", [[2, 0], [1, 4]]), T("s32", [2, 9])
    case("triangular_solve", "s32 -> f32", [a, b], from_f64("f32", np.linalg.solve(a.a.astype(float), b.a)), {},
         linalg_tol("f32"))
    # A zero on the diagonal divides as IEEE does.
    case("triangular_solve", "f64 zero pivot -> inf", [T("f64", [[0, 0], [1, 1]]), T("f64", [1, 1])],
         T("f64", ["inf", "-inf"]))


def solve_cases():
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            a = T(dt, well_conditioned(dt, lead + (4, 4)))
            for bshape, what in ((lead + (4,), "vector"), (lead + (4, 2), "matrix")):
                b = T(dt, random_matrix(dt, bshape))
                ref = batched(np.linalg.solve, a.f64(), b.f64()) if 0 not in lead else np.zeros(bshape)
                case("solve", f"{dt} [4][4] {what} b{tag}", [a, b], from_f64(dt, ref), tol=linalg_tol(dt))
    a, b = T("s32", [[3, 1], [1, 2]]), T("s32", [9, 8])
    case("solve", "s32 -> f32", [a, b], from_f64("f32", np.linalg.solve(a.a.astype(float), b.a)), tol=linalg_tol("f32"))
    case("solve", "f32 singular -> NaN", [T("f32", [[1, 2], [2, 4]]), T("f32", [1, 1])], T("f32", ["nan", "nan"]))


def qr_cases():
    for dt in LINALG_DTS:
        for shape in ((4, 3), (3, 4), (3, 3)):
            a = T(dt, random_matrix(dt, shape))
            for mode in ("reduced", "complete"):
                q, r = np.linalg.qr(a.f64(), mode=mode)
                for name, v in (("q", q), ("r", r)):
                    case("qr", f"{dt} {shape} {mode} {name}", [a], from_f64(dt, v), {"mode": mode, "result": name},
                         linalg_tol(dt, 4))
        for tag, lead in linalg_shapes():
            a = T(dt, random_matrix(dt, lead + (3, 2)))
            q, r = np.linalg.qr(a.f64()) if 0 not in lead else (np.zeros(lead + (3, 2)), np.zeros(lead + (2, 2)))
            for name, v in (("q", q), ("r", r)):
                case("qr", f"{dt} [3][2]{tag} {name}", [a], from_f64(dt, v), {"result": name}, linalg_tol(dt, 4))
    a = T("s32", [[3, 1], [4, 2]])
    q, r = np.linalg.qr(a.a.astype(float))
    case("qr", "s32 -> f32 r", [a], from_f64("f32", r), {"result": "r"}, linalg_tol("f32", 4))


def lu_cases():
    import scipy.linalg as sl
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            a = T(dt, random_matrix(dt, lead + (4, 4)))
            if 0 in lead:
                p = np.zeros(lead + (4, 4), np.int64)
                l = u = np.zeros(lead + (4, 4))
            else:
                p, l, u = batched(sl.lu, a.f64())
            case("lu", f"{dt} [4][4]{tag} p", [a], T("s64", p.astype(np.int64)), {"result": "p"})
            for name, v in (("l", l), ("u", u)):
                case("lu", f"{dt} [4][4]{tag} {name}", [a], from_f64(dt, v), {"result": name}, linalg_tol(dt, 4))
    # Ties between pivots go to the first row (as getrf); a singular a still factors.
    for name, a in (("s32 ties -> f32", [[1, 2, 0], [1, 3, 1], [-1, 0, 2]]), ("f32 singular", [[1, 2], [2, 4]])):
        ta = T("s32" if name.startswith("s32") else "f32", a)
        p, l, u = sl.lu(np.array(a, np.float64))
        case("lu", f"{name} p", [ta], T("s64", p.astype(np.int64)), {"result": "p"})
        case("lu", f"{name} l", [ta], from_f64("f32", l), {"result": "l"}, linalg_tol("f32"))
        case("lu", f"{name} u", [ta], from_f64("f32", u), {"result": "u"}, linalg_tol("f32"))


def eigh_cases():
    for dt in LINALG_DTS:
        real = REAL_OF.get(dt, dt)
        for tag, lead in linalg_shapes():
            a = T(dt, positive_definite(dt, lead + (4, 4)) - 3 * np.eye(4) if 0 not in lead else np.zeros(lead + (4, 4)))
            w, v = np.linalg.eigh(a.f64()) if 0 not in lead else (np.zeros(lead + (4,)), np.zeros(lead + (4, 4)))
            scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
            case("eigh", f"{dt} [4][4]{tag} values", [a], from_f64(real, w), {"result": "values"},
                 linalg_tol(dt, 4 * scale))
            case("eigh", f"{dt} [4][4]{tag} abs(vectors)", [a], from_f64(real, np.abs(v)), {"result": "abs_vectors"},
                 linalg_tol(dt, 40 * scale))
    a = T("s32", [[2, 1], [1, 2]])
    case("eigh", "s32 -> f32 values", [a], T("f32", [1, 3]), {"result": "values"}, linalg_tol("f32"))
    # Only the lower triangle is read.
    a = T("f64", [[2, 50], [1, 2]])
    case("eigh", "f64 upper triangle ignored", [a], T("f64", [1, 3]), {"result": "values"}, linalg_tol("f64"))


def linear_algebra():
    cholesky_cases()
    triangular_solve_cases()
    solve_cases()
    qr_cases()
    lu_cases()
    eigh_cases()


def main():
    float_funcs()
    exact_unary()
    binary_ints()
    binary_floats()
    promotion()
    weak_scalars()
    comparisons_and_logic()
    ternary()
    conversions()
    bitcasts()
    shape_ops()
    reductions()
    dots()
    windows()
    scans()
    ffts()
    creation()
    larger_layouts()
    indexing()
    sorting()
    more_windows_and_scans()
    convs()
    linear_algebra()
    text = json.dumps({"generator": "tests/conformance/make_reference.py", "numpy": np.__version__, "cases": CASES},
                      separators=(",", ":"), allow_nan=False)
    OUT.write_text(text + "\n")
    print(f"{len(CASES)} cases, {len(text) // 1024} KiB -> {OUT}")


if __name__ == "__main__":
    main()
