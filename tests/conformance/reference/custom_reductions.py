"""Reductions with a combining function of the user's own: reduce and
window_reduce (Nx.Backend's reduce/window_reduce). The case's attrs name
the function (op_table.cpp's reduce_fns holds the same list):
    add, add_flipped, multiply, max, min   the built-in ones (either way round)
    logaddexp   max(a, b) + log1p(exp(-|a - b|)), identity -inf
    hypot       sqrt(a*a + e*e), identity 0
    bitwise_or  a | e on integers, identity 0
    max_abs     max(a, |e|): not associative, so windows only (a window's
                elements combine in row-major order from init)
References in float64 (python ints for integers) from the exact inputs.
"""

import numpy as np

from .common import T, case, from_f64, from_ints, typed
from .reductions import float_sum_tol, reduce_opts
from .windows import window_ref

INIT = {"add": 0.0, "add_flipped": 0.0, "multiply": 1.0, "max": -np.inf, "min": np.inf, "logaddexp": -np.inf,
        "hypot": 0.0, "bitwise_or": 0, "max_abs": 0.0}


def init_text(v):
    return "inf" if v == np.inf else "-inf" if v == -np.inf else repr(v)


def reduce_ref(fn, x, axes, keep, init):
    """x reduced by fn over axes (None: all), starting from init."""
    ax = tuple(axes) if axes is not None else None
    if fn in ("add", "add_flipped"):
        r = np.sum(x, axis=ax, keepdims=keep)
    elif fn == "multiply":
        r = np.prod(x, axis=ax, keepdims=keep)
    elif fn == "max":
        r = np.max(x, axis=ax, keepdims=keep, initial=-np.inf)
    elif fn == "min":
        r = np.min(x, axis=ax, keepdims=keep, initial=np.inf)
    elif fn == "logaddexp":
        r = np.log(np.sum(np.exp(x), axis=ax, keepdims=keep))
    elif fn == "hypot":
        r = np.sqrt(np.sum(x * x, axis=ax, keepdims=keep))
    elif fn == "bitwise_or":
        r = np.bitwise_or.reduce(x, axis=ax, keepdims=keep)
    combine = {"add": np.add, "add_flipped": np.add, "multiply": np.multiply, "max": np.maximum, "min": np.minimum,
               "logaddexp": np.logaddexp, "hypot": np.hypot, "bitwise_or": np.bitwise_or}[fn]
    return combine(init, r)


def reduce_cases():
    shapes = [([2, 3, 5], None, False), ([2, 3, 5], [1], False), ([4, 3, 6], [0, 2], True), ([37], [0], False)]
    for fn in ("add", "add_flipped", "multiply", "max", "min", "logaddexp", "hypot"):
        for dt in ("f32", "f64"):
            for shape, axes, keep in shapes:
                x = typed(dt, shape, -4, 4)
                v = x.f64() / (8 if fn == "multiply" else 1)
                x = T(dt, v)
                for init in (INIT[fn], 1.5):
                    attrs = {"fn": fn, "init": init_text(init), **reduce_opts(axes, keep)}
                    want = reduce_ref(fn, v, axes, keep, init)
                    tol = float_sum_tol(dt, x) if fn != "max" and fn != "min" else {}
                    if fn == "multiply":
                        tol = {"rtol": 1e-4 if dt == "f32" else 1e-12, "atol": 0}
                    case("reduce", f"{fn} {dt} {shape} axes {axes} keep {keep} init {init}", [x], from_f64(dt, want),
                         attrs, tol)
    for dt in ("s32", "u8", "s64"):
        for shape, axes, keep in shapes:
            x = typed(dt, shape, 0, 100)
            attrs = {"fn": "bitwise_or", "init": "0", **reduce_opts(axes, keep)}
            case("reduce", f"bitwise_or {dt} {shape} axes {axes} keep {keep}", [x],
                 from_ints(dt, reduce_ref("bitwise_or", np.array(x.ints(), dtype=np.int64), axes, keep, 0)), attrs)
        # Integer sums wrap in the tensor's own type (the built-in sum's 64 bits, converted).
        x = typed(dt, [50], 0, 100)
        case("reduce", f"add {dt} in {dt}", [x], from_ints(dt, int(np.sum(np.array(x.ints(), dtype=object)))),
             {"fn": "add", "init": "0"})
    # Long reductions: many rounds of the pairwise fold, odd counts among them.
    for fn in ("logaddexp", "hypot"):
        for shape, axes in (([10000], None), ([3, 1500], [1])):
            x = typed("f32", shape, -4, 4)
            want = reduce_ref(fn, x.f64(), axes, False, INIT[fn])
            case("reduce", f"{fn} f32 {shape} folded pairwise", [x], from_f64("f32", want),
                 {"fn": fn, "init": init_text(INIT[fn]), **reduce_opts(axes, False)}, float_sum_tol("f32", x))
    # Nothing to reduce: init.
    x = T("f32", np.zeros((3, 0)))
    case("reduce", "logaddexp f32 empty axis", [x], from_f64("f32", np.full(3, -np.inf)),
         {"fn": "logaddexp", "init": "-inf", "axes": [1]})


def window_reduce_cases():
    configs = [
        ("valid", [2, 3], [1, 1], [[0, 0], [0, 0]], [1, 1]),
        ("strides and padding", [2, 3], [1, 2], [[1, 0], [0, 1]], [1, 1]),
        ("dilated", [2, 2], [1, 1], [[0, 1], [1, 1]], [2, 3]),
    ]
    for fn in ("add", "multiply", "max", "min", "max_abs", "hypot"):
        for dt in ("f32", "f64"):
            x = typed(dt, [5, 7], -4, 4)
            v = x.f64() / (8 if fn == "multiply" else 1)
            x = T(dt, v)
            for name, win, st, pad, dil in configs:
                for init in (INIT[fn], 0.75):
                    span = [(w - 1) * d + 1 for w, d in zip(win, dil)]

                    def window_fn(w, fn=fn, init=init, win=win, dil=dil):
                        picked = w[tuple(slice(None, None, d) for d in dil)].reshape(-1)
                        acc = init
                        for e in picked:
                            acc = {"add": lambda a: a + e, "multiply": lambda a: a * e, "max": lambda a: max(a, e),
                                   "min": lambda a: min(a, e), "max_abs": lambda a: max(a, abs(e)),
                                   "hypot": lambda a: float(np.hypot(a, e))}[fn](acc)
                        return acc

                    want = window_ref(v, span, st, pad, window_fn, init)
                    attrs = {"fn": fn, "init": init_text(init), "window": win, "strides": st, "padding": pad,
                             "window_dilations": dil}
                    tol = {} if fn in ("max", "min", "max_abs") else {"rtol": 1e-5 if dt == "f32" else 1e-13,
                                                                      "atol": 1e-6 if dt == "f32" else 1e-14}
                    case("window_reduce", f"{fn} {dt} {name} init {init}", [x], from_f64(dt, want), attrs, tol)
    x = typed("s32", [9], 0, 50)
    want = window_ref(np.array(x.ints(), dtype=np.int64), [3], [2], [[1, 1]],
                      lambda w: int(np.bitwise_or.reduce(w.reshape(-1))), 0)
    case("window_reduce", "bitwise_or s32 strides and padding", [x], from_ints("s32", want),
         {"fn": "bitwise_or", "init": "0", "window": [3], "strides": [2], "padding": [[1, 1]]})


def custom_reductions():
    reduce_cases()
    window_reduce_cases()
