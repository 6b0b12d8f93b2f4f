"""dot: contracting and batch axes in any position, Nx's dot/2 on plain
tensors, and mixed operand types. Integer dots are exact; float tolerances
scale with the magnitudes of the products.
"""

import numpy as np

from .common import INT_BITS, T, case, from_f64, from_ints, rand, rand_ints, typed


def dot_ref(a, ca, ba, b, cb, bb):
    """Nx dot/6: result axes are batch, then a's free, then b's free."""
    fa = [i for i in range(a.ndim) if i not in ca and i not in ba]
    fb = [i for i in range(b.ndim) if i not in cb and i not in bb]
    at = np.transpose(a, ba + fa + ca)
    bt = np.transpose(b, bb + cb + fb)
    nb = int(np.prod([a.shape[i] for i in ba])) if ba else 1
    nfa = int(np.prod([a.shape[i] for i in fa])) if fa else 1
    nfb = int(np.prod([b.shape[i] for i in fb])) if fb else 1
    nc = int(np.prod([a.shape[i] for i in ca])) if ca else 1
    r = np.matmul(at.reshape(nb, nfa, nc), bt.reshape(nb, nc, nfb))
    return r.reshape([a.shape[i] for i in ba] + [a.shape[i] for i in fa] + [b.shape[i] for i in fb])


def dot_tol(dt, a, b, ca, ba, cb, bb):
    scale = float(np.max(np.abs(dot_ref(np.abs(a.f64()), ca, ba, np.abs(b.f64()), cb, bb)), initial=0))
    eps = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3, "c64": 1e-6, "c128": 1e-14}[dt]
    return {"atol": eps * scale, "rtol": 10 * eps}


def dots():
    layouts = [
        ("matmul [3][4].[4][5]", [3, 4], [4, 5], [1], [], [0], []),
        ("batched [2][3][4].[2][4][5]", [2, 3, 4], [2, 4, 5], [2], [0], [1], [0]),
        ("batch axes not leading", [3, 2, 4], [4, 2, 5], [2], [1], [0], [1]),
        ("two contracting axes", [2, 3, 4], [3, 4, 2], [1, 2], [], [0, 1], []),
        ("outer product (no contraction)", [3], [4], [], [], [], []),
        ("vector . vector", [6], [6], [0], [], [0], []),
    ]
    for dt in ("f32", "f64", "f16", "bf16", "s32", "s64", "c64", "u8", "c128"):
        for name, sa, sb, ca, ba, cb, bb in layouts:
            wanted = ("matmul [3][4].[4][5]",) + (("batched [2][3][4].[2][4][5]",) if dt in ("f64", "f16", "s64", "c64") else ())
            if dt not in ("f32", "s32") and name not in wanted:
                continue
            if dt == "u8":
                a, b = T("u8", rand_ints([int(np.prod(sa))], 0, 3), sa), T("u8", rand_ints([int(np.prod(sb))], 0, 3), sb)
            else:
                a, b = typed(dt, sa, -9, 9), typed(dt, sb, -9, 9)
            attrs = {"contract_a": ca, "batch_a": ba, "contract_b": cb, "batch_b": bb}
            if dt in INT_BITS:
                # Nx: integer dot keeps the operands' merged type (no widening).
                r = dot_ref(a.ints(), ca, ba, b.ints(), cb, bb)
                case("dot", f"{dt} {name}", [a, b], from_ints(dt, r), attrs)
            else:
                r = dot_ref(a.f64(), ca, ba, b.f64(), cb, bb)
                case("dot", f"{dt} {name}", [a, b], from_f64(dt, r), attrs, dot_tol(dt, a, b, ca, ba, cb, bb))
    a, b = T("f32", rand([4, 6])), T("f32", rand([6]))
    case("dot", "plain matrix . vector", [a, b], from_f64("f32", a.f64() @ b.f64()), {"plain": True},
         dot_tol("f32", a, b, [1], [], [0], []))
    a, b = T("f32", rand([2, 3, 4])), T("f32", rand([5, 4, 2]))
    # Nx dot/2 on rank > 2: last axis of a with the second to last of b.
    case("dot", "plain rank 3 . rank 3", [a, b], from_f64("f32", np.tensordot(a.f64(), b.f64(), axes=([2], [1]))),
         {"plain": True}, dot_tol("f32", a, b, [2], [], [1], []))
    a, b = T("s32", [1, 2, 3, 4, 5, 6], [2, 3]), T("f32", [0.5, 0.25, -1])
    case("dot", "s32 . f32 -> f32", [a, b], from_f64("f32", a.f64() @ b.f64()), {"plain": True})
    a, b = T("f32", rand([20, 12])), T("f32", rand([12, 9]))
    case("dot", "f32 [20][12].[12][9]", [a, b], from_f64("f32", a.f64() @ b.f64()),
         {"contract_a": [1], "batch_a": [], "contract_b": [0], "batch_b": []}, dot_tol("f32", a, b, [1], [], [0], []))
