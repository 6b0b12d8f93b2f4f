"""Sorting: sort, argsort and top_k. One family because they share one order,
Nx's/numpy's: NaNs sort after every number, and descending is ascending
reversed with ties kept in index order (numpy has no descending: it is
computed here).
"""

import math

import numpy as np

from .common import T, case, rand, same, typed


SORT_DTS = ("f32", "f64", "f16", "bf16", "s8", "s32", "s64", "u8", "u64", "pred")


def order_key(v, descending):
    nan = isinstance(v, float) and math.isnan(v)
    if descending:
        return (0, 0) if nan else (1, -v)
    return (1, 0) if nan else (0, v)


def argsort_ref(a, axis, descending):
    a = np.moveaxis(a, axis, -1)
    flat = a.reshape(int(np.prod(a.shape[:-1])), a.shape[-1])
    rows = []
    for row in flat:
        vals = [float(v) if isinstance(v, (float, np.floating)) else int(v) for v in row]
        rows.append(sorted(range(len(vals)), key=lambda j: (order_key(vals[j], descending), j)))
    out = np.array(rows, dtype=np.int64).reshape(a.shape)
    return np.moveaxis(out, -1, axis)


def sort_cases(dt, x, tag, axis=0, descending=False, index_dtype="s64"):
    order = argsort_ref(x.a, axis, descending)
    attrs = {"axis": axis}
    if descending:
        attrs["descending"] = True
    case("sort", f"{dt} {tag}", [x], same(dt, np.take_along_axis(x.a, order, axis=axis)), attrs)
    if index_dtype != "s64":
        attrs["index_dtype"] = index_dtype
    case("argsort", f"{dt} {tag}", [x], T(index_dtype, order), attrs)


def sorting():
    for dt in SORT_DTS:
        x = typed(dt, [3, 5], -5, 5)
        sort_cases(dt, x, "[3][5] axis 1, ties", 1)
        sort_cases(dt, x, "[3][5] axis 0 descending, ties", 0, True)
    x = T("f32", [3.5, "nan", -1, "inf", 2, "nan", "-inf", 0.25, -7])
    sort_cases("f32", x, "NaNs last")
    sort_cases("f32", x, "NaNs first descending", 0, True)
    x = T("f64", [["nan", 1, -2], [4, "nan", "nan"]])
    sort_cases("f64", x, "NaNs along axis 1", 1)
    x = T("f16", [1.5, "nan", -2, 0.5])
    sort_cases("f16", x, "NaNs", 0, True)
    x = typed("f32", [3, 0])
    sort_cases("f32", x, "empty axis", 1)
    sort_cases("f32", x, "rows of an empty axis", 0)
    x = typed("s32", [1, 4])
    sort_cases("s32", x, "size-1 axis", 0)
    x = typed("s64", [2, 3, 4], -3, 3)
    sort_cases("s64", x, "rank 3 middle axis, s32 indices", 1, False, "s32")
    sort_cases("s64", x, "rank 3 middle axis descending, u8 indices", -2 + 3, True, "u8")
    x = T("f32", rand([2, 40], -4, 4))
    sort_cases("f32", x, "[2][40] axis 1", 1)
    # top_k: the k largest along the last axis, largest first, lower index first among ties.
    x = T("f32", [[1, 5, 3, 5, "nan", 2], [0, -1, 4, 4, 4, 7]])
    order = argsort_ref(x.a, 1, True)
    for k in (0, 3, 6):
        case("top_k_values", f"f32 k={k}", [x], same("f32", np.take_along_axis(x.a, order[:, :k], axis=1)), {"k": k})
        case("top_k_indices", f"f32 k={k}", [x], T("s64", order[:, :k]), {"k": k})
    x = typed("s32", [7], -3, 3)
    order = argsort_ref(x.a, 0, True)
    case("top_k_values", "s32 k=2", [x], same("s32", x.a[order[:2]]), {"k": 2})
    case("top_k_indices", "s32 k=2", [x], T("s64", order[:2]), {"k": 2})
