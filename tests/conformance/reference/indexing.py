"""Indexing: take, take_along_axis, gather, indexed_put and indexed_add.
One family because they share one rule, Nx's (as XLA's): an index outside
its axis clamps into it.
"""

import numpy as np

from .common import INT_BITS, T, case, from_f64, from_ints, rand, same, typed


INDEX_DTS = ("f32", "s32", "u8", "f64", "s64", "f16", "bf16", "c64", "pred")


def clamp(idx, dim):
    return np.clip(np.asarray(idx, dtype=object), 0, dim - 1).astype(np.int64)


def gather_ref(x, idx):
    """Nx gather: the last axis of idx indexes x's leading axes (clamped)."""
    idx = np.asarray(idx, dtype=object)
    k = idx.shape[-1]
    rows = idx.reshape(-1, k)
    out = [x[tuple(int(min(max(v, 0), x.shape[j] - 1)) for j, v in enumerate(r))] for r in rows]
    return np.array(out, dtype=x.dtype).reshape(idx.shape[:-1] + x.shape[k:])


def scatter_ref(x, idx, upd, add):
    out = x.copy()
    idx = np.asarray(idx, dtype=object)
    k = idx.shape[-1]
    rows = idx.reshape(-1, k)
    upd = upd.reshape((rows.shape[0],) + x.shape[k:])
    for r, u in zip(rows, upd):
        at = tuple(int(min(max(v, 0), x.shape[j] - 1)) for j, v in enumerate(r))
        out[at] = out[at] + u if add else u
    return out


def indexing():
    for dt in INDEX_DTS:
        x = typed(dt, [4, 3])
        idx = [[2, -1], [7, 0]]
        case("take", f"{dt} axis 0, clamped", [x, T("s32", idx)], same(dt, np.take(x.a, clamp(idx, 4), axis=0)))
        case("gather", f"{dt} [4][3] rows, clamped", [x, T("s64", [[3], [9], [-4]])],
             same(dt, gather_ref(x.a, [[3], [9], [-4]])))
        case("take_along_axis", f"{dt} axis 1", [x, T("s64", [[2, 0], [1, 1], [5, -1], [0, 2]])],
             same(dt, np.take_along_axis(x.a, clamp([[2, 0], [1, 1], [5, -1], [0, 2]], 3), axis=1)), {"axis": 1})
        upd = typed(dt, [3, 3])
        case("indexed_put", f"{dt} rows, duplicates: the last wins", [x, T("s32", [[3], [0], [3]]), upd],
             same(dt, scatter_ref(x.a, [[3], [0], [3]], upd.a, False)))
    x = typed("f32", [2, 5, 3])
    idx = [4, 0, 9, 2]
    case("take", "f32 axis 1, u8 indices", [x, T("u8", idx)], same("f32", np.take(x.a, clamp(idx, 5), axis=1)),
         {"axis": 1})
    case("take", "f32 axis -1, [2][2] indices", [x, T("s16", [[0, 2], [-3, 1]])],
         same("f32", np.take(x.a, clamp([[0, 2], [-3, 1]], 3), axis=2)), {"axis": -1})
    case("take", "f32 scalar index drops the axis", [x, T("s64", 3)], same("f32", x.a[:, 3, :]), {"axis": 1})
    case("take", "f32 no indices", [x, T("s32", np.zeros([0], np.int32))], same("f32", x.a[:0]))
    x = typed("s32", [1, 3])
    case("take", "s32 size-1 axis: every index clamps to 0", [x, T("s32", [0, 5, -2])],
         same("s32", np.take(x.a, [0, 0, 0], axis=0)))
    x = typed("f32", [3, 2])
    big = (1 << 63) + 5
    case("take", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [big, 1])], same("f32", x.a[[2, 1]]))
    case("take_along_axis", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [[big, 0], [1, big], [0, 0]])],
         same("f32", np.take_along_axis(x.a, np.array([[1, 0], [1, 1], [0, 0]]), axis=1)), {"axis": 1})
    case("gather", "f32 u64 index >= 2^63 clamps high", [x, T("u64", [[big, 0]])], same("f32", x.a[[2], [0]]))
    x = typed("s32", [3, 4])
    idx = [[3, 1, 0, -1], [0, 0, 2, 9]]
    case("take_along_axis", "s32 axis 0", [x, T("s32", idx)],
         same("s32", np.take_along_axis(x.a, clamp(idx, 3), axis=0)))
    case("take_along_axis", "s32 empty indices axis", [x, T("s32", np.zeros([3, 0], np.int32))],
         same("s32", x.a[:, :0]), {"axis": 1})
    x = typed("f32", [4, 5, 6])
    idx = [[0, 1], [3, 4], [-1, 7]]
    case("gather", "f32 [4][5][6] by pairs -> [3][6]", [x, T("s32", idx)], same("f32", gather_ref(x.a, idx)))
    idx = [[[1, 2, 3], [0, 0, 0]], [[3, 4, 5], [2, 9, 1]]]
    case("gather", "f32 full index, [2][2][3] -> [2][2]", [x, T("u16", idx)], same("f32", gather_ref(x.a, idx)))
    case("gather", "f32 no rows", [x, T("s64", np.zeros([0, 1], np.int64))], same("f32", x.a[:0]))
    x = typed("s64", [1, 2])
    case("gather", "s64 size-1 axis", [x, T("s8", [[0], [3], [-3]])], same("s64", x.a[[0, 0, 0]]))
    # indexed_add: duplicates sum; out-of-range indices clamp.
    x = T("f32", rand([5]))
    upd = T("f32", rand([4]))
    idx = [[1], [3], [1], [9]]
    case("indexed_add", "f32 duplicates sum, 9 clamps to 4", [x, T("s32", idx), upd],
         from_f64("f32", scatter_ref(x.f64(), idx, upd.f64(), True)))
    for dt in ("s32", "u8", "f64", "s64", "f16", "bf16", "c64", "s8"):
        x = typed(dt, [3, 4])
        upd = typed(dt, [3, 4])
        idx = [[0], [2], [0]]
        if dt in INT_BITS:
            expected = from_ints(dt, scatter_ref(x.ints(), idx, upd.ints(), True))
        else:
            expected = from_f64(dt, scatter_ref(x.f64(), idx, upd.f64(), True))
        case("indexed_add", f"{dt} rows, duplicate row 0", [x, T("s64", idx), upd], expected)
    x = T("u8", [250, 1, 2])
    case("indexed_add", "u8 wraps", [x, T("u8", [[0], [0]]), T("u8", [3, 4])], T("u8", [1, 1, 2]))
    x = T("f64", rand([3, 3]))
    upd = T("f64", rand([4]))
    idx = [[0, 0], [2, 1], [0, 0], [-1, 5]]
    case("indexed_add", "f64 full index, duplicates", [x, T("s32", idx), upd],
         from_f64("f64", scatter_ref(x.f64(), idx, upd.f64(), True)))
    x = typed("f32", [3, 4])
    case("indexed_add", "f32 no updates", [x, T("s32", np.zeros([0, 1], np.int32)), T("f32", np.zeros([0, 4]))],
         same("f32", x.a))
    x = T("s32", [1, 2, 3])
    case("indexed_add", "s32 with f32 updates promotes", [x, T("s32", [[2]]), T("f32", [0.5])],
         T("f32", [1, 2, 3.5]))
    x = T("f32", rand([5]))
    upd = T("f32", [1, 2, 3, 4])
    idx = [[1], [3], [1], [-7]]
    case("indexed_put", "f32 duplicates: the last wins, -7 clamps to 0", [x, T("s32", idx), upd],
         same("f32", scatter_ref(x.a, idx, upd.a, False)))
    x = typed("s16", [2, 3])
    idx = [[1, 2], [0, 0], [1, 2]]
    upd = T("s16", [7, 8, 9])
    case("indexed_put", "s16 full index", [x, T("u32", idx), upd], same("s16", scatter_ref(x.a, idx, upd.a, False)))
