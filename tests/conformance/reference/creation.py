"""Creation ops, which take no input tensor: iota, eye and constant.
"""

import numpy as np

from .common import NP_TYPE, SIMD_SPAN, T, case, from_f64, from_ints, same, typed


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
