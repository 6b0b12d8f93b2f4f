"""Shape ops: reshape, squeeze, broadcast, transpose, reverse, pad, slice,
put_slice, concatenate and stack. One family because they move values and
never compute them, in every dtype.
"""

import numpy as np

from .common import T, case, same, typed


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
