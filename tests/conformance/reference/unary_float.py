"""Unary float functions (exp, log, sin, erf, ...): numpy's float64 function
on each domain's edges plus random fill, in every float type, on integers
(which Nx computes in f32) and on complex numbers where Nx defines them.
One family because one table of samples and one ulp tolerance serve them all.
"""

import math

import numpy as np

from .common import (
    COMPLEX_FN, COMPLEX_FN_C128, SIMD_SPAN, T, ULP_TRANSCENDENTAL, case, from_f64, int_max, int_min, parse_float, rand)


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
