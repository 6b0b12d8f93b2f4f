"""Blocks (ops/block.h): a named op with a traced fallback, run by a
backend's native kernel where it has one and by the fallback elsewhere.
op_table.cpp builds each block with its fallback written as ops:
    softmax       along the last axis, shifted by the row's maximum where
                  that is finite (nn.h's): the host runs it natively
    axpy_unknown  2 x + 1, a name no backend knows: the fallback everywhere
"""

import numpy as np

from .common import T, case, from_f64, typed


def softmax_ref(x):
    m = np.max(x, axis=-1, keepdims=True)
    shift = np.where(np.isinf(m), 0.0, m)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - shift)
        return e / np.sum(e, axis=-1, keepdims=True)


def blocks():
    tol = {"f32": {"rtol": 2e-6, "atol": 1e-7}, "f64": {"rtol": 1e-14, "atol": 1e-16}}
    for dt in ("f32", "f64"):
        for shape in ([3, 7], [2, 3, 17], [1], [4, 40]):
            x = typed(dt, shape, -6, 6)
            case("block", f"softmax {dt} {shape}", [x], from_f64(dt, softmax_ref(x.f64())), {"name": "softmax"}, tol[dt])
        # -inf entries weigh nothing; a row of -inf alone is 0 / 0 (nn.h's
        # shift is 0 there); a NaN makes its row NaN; +inf shifts to 0 too.
        v = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [2.0, np.nan, 0.0], [np.inf, 1.0, 0.0]])
        case("block", f"softmax {dt} infinities and NaN", [T(dt, v)], from_f64(dt, softmax_ref(v)), {"name": "softmax"},
             tol[dt])
        x = typed(dt, [5], -6, 6)
        case("block", f"axpy_unknown {dt}", [x], from_f64(dt, 2 * x.f64() + 1), {"name": "axpy_unknown"}, tol[dt])
