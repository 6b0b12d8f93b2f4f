"""Cases sized past one SIMD vector or one 16x16 tile, for ops of several
families. A family of their own because what they test is not an op but the
layouts kernels choose between by size.
"""

import math

import numpy as np

from .common import EXACT, SIMD_SPAN, T, case, from_f64, from_ints, normal, rand, rand_ints, same, typed
from .reductions import arg, float_sum_tol
from .windows import window_ref


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
