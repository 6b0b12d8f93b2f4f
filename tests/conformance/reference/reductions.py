"""Reductions along axes: sum, product, reduce_max/min, all, any, argmax and
argmin, including NaN propagation and the integer accumulators (s64/u64).
float_sum_tol and arg also serve the window, scan and layout families.
"""

import math

import numpy as np

from .common import (
    INT_BITS, SIGNED, SIMD_SPAN, T, case, from_f64, from_ints, int_max, int_min, rand, rand_ints, same, typed)


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
