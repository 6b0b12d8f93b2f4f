"""Unary ops without transcendental functions: negate, abs, sign,
floor/ceil/round, bit counts, is_nan/is_infinity, real/imag/conjugate. One
family because their results are exact, in every dtype including the
integers' wrapping edges; only complex abs and sign (a square root) carry a
tolerance.
"""

import math

import numpy as np

from .common import (
    COMPLEX_FN, COMPLEX_FN_C128, INT_BITS, REAL_OF, SIGNED, SIMD_SPAN, T, case, from_f64, from_ints, int_max, int_min,
    rand, spread)


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
