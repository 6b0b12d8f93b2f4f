"""Ops along windows and axes: window reductions and products,
window_scatter_max/min, cumulative sums/products/maxima/minima, and fft/ifft.
One family because each walks its input along a window or an axis;
window_ref also serves the layout family.
"""

import math

import numpy as np

from .common import (
    COMPLEX, INT_BITS, SIMD_SPAN, T, case, from_f64, from_ints, int_max, int_min, normal, rand, rand_ints, typed)
from .reductions import float_sum_tol


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
