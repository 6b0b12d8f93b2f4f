"""select and clip, which choose among their operands' values, and as_type
and bitcast, which convert a value to another type. One family because their
results are chosen or converted, never computed: every case is exact.
"""

import math

import numpy as np

from .common import (
    INT_BITS, NP_TYPE, SIMD_SPAN, T, case, enc_float, from_f64, from_ints, int_max, int_min, rand, spread)


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
