"""Linear algebra: Nx.LinAlg's ops on the last two axes, batched over the
rest. References in float64/complex128 from the exact inputs (scipy for
cholesky, lu and the triangular solves), rounded once. qr follows LAPACK's
signs (geqrf, as numpy's qr): r's diagonal may be negative. eigh's
eigenvectors are unique only up to sign (phase), which LAPACK leaves to its
arithmetic; sluice fixes it (ops/ops.h: each vector's first component of at
least half its largest magnitude is real and positive), and numpy's vectors
are normalised the same way here (fixed_phases);
tests/devices/linalg_test.cpp checks a v = v diag(w) and vᴴ v = I.
"""

import numpy as np

from .common import COMPLEX, REAL_OF, T, case, from_f64, normal


LINALG_DTS = ("f32", "f64", "c64", "c128")


def linalg_tol(dt, scale=1.0):
    if dt in ("f32", "c64"):
        return {"atol": 2e-5 * scale, "rtol": 2e-4}
    return {"atol": 1e-12 * scale, "rtol": 1e-11}


def random_matrix(dt, shape):
    x = normal(shape)
    if dt in COMPLEX:
        x = x + 1j * normal(shape)
    return x


def well_conditioned(dt, shape):
    """Diagonally dominant: solves and factors stay accurate in f32."""
    n = shape[-1]
    return random_matrix(dt, shape) / 4 + n * np.eye(n)


def positive_definite(dt, shape):
    m = random_matrix(dt, shape) / 2
    n = shape[-1]
    return m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)


def batched(fn, x, *rest):
    """fn over the leading axes of x (and of rest), matrix by matrix."""
    lead = x.shape[:-2]
    out = [fn(x[i], *(r[i] for r in rest)) for i in np.ndindex(*lead)] if lead else [fn(x, *rest)]
    if not lead:
        return out[0]
    if isinstance(out[0], tuple):
        return tuple(np.stack([o[k] for o in out]).reshape(lead + o0.shape) for k, o0 in enumerate(out[0]))
    return np.stack(out).reshape(lead + out[0].shape) if out else None


def linalg_shapes(square=True):
    """(tag, batch shape) of the batched cases: none, one, several, size 1, empty."""
    return [("", ()), (" batched [2]", (2,)), (" batched [2][2]", (2, 2)), (" size-1 batch", (1,)),
            (" empty batch", (0,))]


def cholesky_cases():
    import scipy.linalg as sl
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            shape = lead + (3, 3)
            a = T(dt, positive_definite(dt, shape) if 0 not in lead else np.zeros(shape))
            ref = batched(lambda m: sl.cholesky(m, lower=True), a.f64()) if 0 not in lead else np.zeros(shape)
            case("cholesky", f"{dt} [3][3]{tag}", [a], from_f64(dt, ref), tol=linalg_tol(dt, 4))
    a = T("s32", [[4, 2], [2, 3]])
    case("cholesky", "s32 -> f32", [a], from_f64("f32", np.linalg.cholesky(a.a.astype(np.float64))),
         tol=linalg_tol("f32"))
    # Only the lower triangle is read: the upper one holds garbage.
    a = positive_definite("f64", (4, 4))
    a[np.triu_indices(4, 1)] = 99
    case("cholesky", "f64 upper triangle ignored", [T("f64", a)],
         from_f64("f64", sl.cholesky(np.tril(a) + np.tril(a, -1).T, lower=True)), tol=linalg_tol("f64", 4))
    # Not positive definite: NaNs, no exception (ops.h).
    case("cholesky", "f32 not positive definite -> NaN", [T("f32", [[1, 2], [2, 1]])], T("f32", [["nan"] * 2] * 2))


TRANSFORMS = {"none": 0, "transpose": 1, "conjugate_transpose": 2}


def triangular_ref(a, b, left_side, lower, transform):
    import scipy.linalg as sl
    if left_side:
        return sl.solve_triangular(a, b, lower=lower, trans=TRANSFORMS[transform])
    # x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ: op(a)ᵀ is a (transpose), conj(a) (conjugate transpose) or aᵀ.
    t = a if transform == "transpose" else (np.conj(a) if transform == "conjugate_transpose" else a.T)
    tl = lower if transform != "none" else not lower
    tri = np.tril(t) if tl else np.triu(t)
    return np.linalg.solve(tri, b.T).T


def triangular_solve_cases():
    for dt in LINALG_DTS:
        for transform in TRANSFORMS:
            for left_side in (True, False):
                for lower in (True, False):
                    a = well_conditioned(dt, (3, 3))
                    a = np.tril(a) if lower else np.triu(a)
                    b = random_matrix(dt, (3, 2) if left_side else (2, 3))
                    attrs = {"left_side": left_side, "lower": lower, "transform_a": transform}
                    side = "left" if left_side else "right"
                    ta, tb = T(dt, a), T(dt, b)
                    ref = triangular_ref(ta.f64(), tb.f64(), left_side, lower, transform)
                    case("triangular_solve", f"{dt} {side} {'lower' if lower else 'upper'} {transform}",
                         [ta, tb], from_f64(dt, ref), attrs, linalg_tol(dt))
        for tag, lead in linalg_shapes():
            a, b = T(dt, np.tril(well_conditioned(dt, lead + (3, 3)))), T(dt, random_matrix(dt, lead + (3, 4)))
            ref = batched(lambda m, v: triangular_ref(m, v, True, True, "none"), a.f64(), b.f64()) \
                if 0 not in lead else np.zeros(lead + (3, 4))
            case("triangular_solve", f"{dt} [3][3] [3][4]{tag}", [a, b], from_f64(dt, ref), {}, linalg_tol(dt))
    # b a vector, on either side; the other triangle of a is not read.
    a = well_conditioned("f64", (2, 4, 4))
    b = random_matrix("f64", (2, 4))
    for left_side in (True, False):
        ref = np.stack([triangular_ref(np.tril(a[i]), b[i][:, None] if left_side else b[i][None, :], left_side, True,
                                       "none").reshape(4) for i in range(2)])
        case("triangular_solve", f"f64 vector b, {'left' if left_side else 'right'}, upper triangle ignored",
             [T("f64", a), T("f64", b)], from_f64("f64", ref), {"left_side": left_side}, linalg_tol("f64"))
    a, b = T("s32", [[2, 0], [1, 4]]), T("s32", [2, 9])
    case("triangular_solve", "s32 -> f32", [a, b], from_f64("f32", np.linalg.solve(a.a.astype(float), b.a)), {},
         linalg_tol("f32"))
    # A zero on the diagonal divides as IEEE does.
    case("triangular_solve", "f64 zero pivot -> inf", [T("f64", [[0, 0], [1, 1]]), T("f64", [1, 1])],
         T("f64", ["inf", "-inf"]))


def solve_cases():
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            a = T(dt, well_conditioned(dt, lead + (4, 4)))
            for bshape, what in ((lead + (4,), "vector"), (lead + (4, 2), "matrix")):
                b = T(dt, random_matrix(dt, bshape))
                ref = batched(np.linalg.solve, a.f64(), b.f64()) if 0 not in lead else np.zeros(bshape)
                case("solve", f"{dt} [4][4] {what} b{tag}", [a, b], from_f64(dt, ref), tol=linalg_tol(dt))
    a, b = T("s32", [[3, 1], [1, 2]]), T("s32", [9, 8])
    case("solve", "s32 -> f32", [a, b], from_f64("f32", np.linalg.solve(a.a.astype(float), b.a)), tol=linalg_tol("f32"))
    case("solve", "f32 singular -> NaN", [T("f32", [[1, 2], [2, 4]]), T("f32", [1, 1])], T("f32", ["nan", "nan"]))


def qr_cases():
    for dt in LINALG_DTS:
        for shape in ((4, 3), (3, 4), (3, 3)):
            a = T(dt, random_matrix(dt, shape))
            for mode in ("reduced", "complete"):
                q, r = np.linalg.qr(a.f64(), mode=mode)
                for name, v in (("q", q), ("r", r)):
                    case("qr", f"{dt} {shape} {mode} {name}", [a], from_f64(dt, v), {"mode": mode, "result": name},
                         linalg_tol(dt, 4))
        for tag, lead in linalg_shapes():
            a = T(dt, random_matrix(dt, lead + (3, 2)))
            q, r = np.linalg.qr(a.f64()) if 0 not in lead else (np.zeros(lead + (3, 2)), np.zeros(lead + (2, 2)))
            for name, v in (("q", q), ("r", r)):
                case("qr", f"{dt} [3][2]{tag} {name}", [a], from_f64(dt, v), {"result": name}, linalg_tol(dt, 4))
    a = T("s32", [[3, 1], [4, 2]])
    q, r = np.linalg.qr(a.a.astype(float))
    case("qr", "s32 -> f32 r", [a], from_f64("f32", r), {"result": "r"}, linalg_tol("f32", 4))


def lu_cases():
    import scipy.linalg as sl
    for dt in LINALG_DTS:
        for tag, lead in linalg_shapes():
            a = T(dt, random_matrix(dt, lead + (4, 4)))
            if 0 in lead:
                p = np.zeros(lead + (4, 4), np.int64)
                l = u = np.zeros(lead + (4, 4))
            else:
                p, l, u = batched(sl.lu, a.f64())
            case("lu", f"{dt} [4][4]{tag} p", [a], T("s64", p.astype(np.int64)), {"result": "p"})
            for name, v in (("l", l), ("u", u)):
                case("lu", f"{dt} [4][4]{tag} {name}", [a], from_f64(dt, v), {"result": name}, linalg_tol(dt, 4))
    # Ties between pivots go to the first row (as getrf); a singular a still factors.
    for name, a in (("s32 ties -> f32", [[1, 2, 0], [1, 3, 1], [-1, 0, 2]]), ("f32 singular", [[1, 2], [2, 4]])):
        ta = T("s32" if name.startswith("s32") else "f32", a)
        p, l, u = sl.lu(np.array(a, np.float64))
        case("lu", f"{name} p", [ta], T("s64", p.astype(np.int64)), {"result": "p"})
        case("lu", f"{name} l", [ta], from_f64("f32", l), {"result": "l"}, linalg_tol("f32"))
        case("lu", f"{name} u", [ta], from_f64("f32", u), {"result": "u"}, linalg_tol("f32"))


def fixed_phases(v):
    """v's columns with sluice's sign (phase) each: the first component of at
    least half the column's largest magnitude made real and positive."""
    if v.size == 0:
        return v
    magnitude = np.abs(v)
    first = np.argmax(magnitude >= 0.5 * magnitude.max(axis=-2, keepdims=True), axis=-2)[..., None, :]
    chosen = np.take_along_axis(v, first, axis=-2)
    return v * np.conj(chosen / np.abs(chosen))


def eigh_cases():
    for dt in LINALG_DTS:
        real = REAL_OF.get(dt, dt)
        for tag, lead in linalg_shapes():
            a = T(dt, positive_definite(dt, lead + (4, 4)) - 3 * np.eye(4) if 0 not in lead else np.zeros(lead + (4, 4)))
            w, v = np.linalg.eigh(a.f64()) if 0 not in lead else (np.zeros(lead + (4,)), np.zeros(lead + (4, 4)))
            scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
            case("eigh", f"{dt} [4][4]{tag} values", [a], from_f64(real, w), {"result": "values"},
                 linalg_tol(dt, 4 * scale))
            case("eigh", f"{dt} [4][4]{tag} vectors", [a], from_f64(dt, fixed_phases(v)), {"result": "vectors"},
                 linalg_tol(dt, 40 * scale))
    a = T("s32", [[2, 1], [1, 2]])
    case("eigh", "s32 -> f32 values", [a], T("f32", [1, 3]), {"result": "values"}, linalg_tol("f32"))
    # Only the lower triangle is read.
    a = T("f64", [[2, 50], [1, 2]])
    case("eigh", "f64 upper triangle ignored", [a], T("f64", [1, 3]), {"result": "values"}, linalg_tol("f64"))


def linear_algebra():
    cholesky_cases()
    triangular_solve_cases()
    solve_cases()
    qr_cases()
    lu_cases()
    eigh_cases()
