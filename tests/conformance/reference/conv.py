"""conv: Nx.conv computed from its definition (dilations, padding, strides,
feature and batch groups), since numpy has no convolution with these options.
"""

import numpy as np

from .common import T, case, from_f64, rand, rand_ints, typed


def conv_ref(x, k, strides, padding, in_dil, k_dil, fg=1, bg=1):
    """Nx.conv from its definition: the input dilated (zeros between
    elements) and padded (negative trims), then each output element the sum
    of kernel * input over the kernel's window (dilated) at stride steps.
    Feature groups: output channel group g reads input channel group g.
    Batch groups: output channel group g reads batch group g (group-major)."""
    sp = x.ndim - 2
    n, c = x.shape[:2]
    o, cg = k.shape[:2]
    dil = np.zeros([n, c] + [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], in_dil)], dtype=x.dtype)
    dil[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in in_dil)] = x
    for i, (lo, hi) in enumerate(padding):
        ax = 2 + i
        dil = np.pad(dil, [(0, 0)] * ax + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (dil.ndim - ax - 1))
        keep = slice(max(-lo, 0), dil.shape[ax] - max(-hi, 0))
        dil = dil[(slice(None),) * ax + (keep,)]
    window = [(s - 1) * d + 1 for s, d in zip(k.shape[2:], k_dil)]
    out_sp = [(dil.shape[2 + i] - window[i]) // strides[i] + 1 for i in range(sp)]
    groups = fg * bg
    og, ob = o // groups, n // bg
    out = np.zeros([ob, o] + out_sp, dtype=np.result_type(x, k))
    for off in np.ndindex(*k.shape[2:]):
        sl = tuple(slice(off[i] * k_dil[i], off[i] * k_dil[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(sp))
        patch = dil[(slice(None), slice(None)) + sl]
        for g in range(groups):
            xs = patch[g * ob:(g + 1) * ob] if bg > 1 else patch[:, g * cg:(g + 1) * cg]
            ks = k[(slice(g * og, (g + 1) * og), slice(None)) + off]
            out[:, g * og:(g + 1) * og] += np.einsum("bc...,oc->bo...", xs, ks)
    return out


CONV_EPS = {"f32": 1e-6, "f64": 1e-14, "f16": 1e-3, "bf16": 8e-3, "c64": 1e-6, "c128": 1e-14}


def conv_case(name, x, k, result_dt, strides=None, padding=None, same=False, in_dil=None, k_dil=None, fg=1, bg=1):
    sp = len(x.shape) - 2
    strides, in_dil, k_dil = strides or [1] * sp, in_dil or [1] * sp, k_dil or [1] * sp
    if same:
        pads = [(((s - 1) * d) // 2, (s - 1) * d - ((s - 1) * d) // 2) for s, d in zip(k.shape[2:], k_dil)]
    else:
        pads = padding or [(0, 0)] * sp
    attrs = {"strides": strides, "input_dilation": in_dil, "kernel_dilation": k_dil,
             "feature_group_size": fg, "batch_group_size": bg}
    if same:
        attrs["same"] = True
    elif padding is not None:
        attrs["padding"] = [list(p) for p in padding]
    xv, kv = x.f64(), k.f64()
    r = conv_ref(xv, kv, strides, pads, in_dil, k_dil, fg, bg)
    scale = float(np.max(np.abs(conv_ref(np.abs(xv), np.abs(kv), strides, pads, in_dil, k_dil, fg, bg)), initial=0))
    eps = CONV_EPS[result_dt]
    case("conv", f"{result_dt} {name}", [x, k], from_f64(result_dt, r), attrs, {"atol": eps * scale, "rtol": 10 * eps})


def convs():
    f = lambda shape: T("f32", rand(shape))
    conv_case("1-D valid", f([2, 3, 9]), f([4, 3, 3]), "f32")
    conv_case("1-D stride 2, same", f([2, 3, 10]), f([4, 3, 4]), "f32", strides=[2], same=True)
    conv_case("2-D valid", f([2, 3, 6, 5]), f([4, 3, 3, 2]), "f32")
    conv_case("2-D same, stride 2", f([2, 3, 7, 6]), f([5, 3, 3, 3]), "f32", strides=[2, 2], same=True)
    conv_case("2-D explicit padding", f([1, 2, 5, 6]), f([3, 2, 3, 3]), "f32", padding=[(2, 0), (1, 3)])
    conv_case("2-D negative padding", f([1, 2, 6, 6]), f([3, 2, 2, 3]), "f32", padding=[(-1, 1), (0, -2)])
    conv_case("2-D input dilation", f([2, 2, 4, 3]), f([3, 2, 3, 2]), "f32", in_dil=[2, 3])
    conv_case("2-D kernel dilation", f([2, 2, 7, 8]), f([3, 2, 2, 3]), "f32", k_dil=[3, 2])
    conv_case("2-D same with kernel dilation", f([1, 2, 6, 5]), f([2, 2, 3, 2]), "f32", same=True, k_dil=[2, 3])
    conv_case("2-D strides, padding, both dilations", f([2, 3, 5, 6]), f([4, 3, 2, 3]), "f32", strides=[2, 3],
              padding=[(1, 2), (2, 0)], in_dil=[2, 1], k_dil=[1, 2])
    conv_case("2-D feature groups 2", f([2, 4, 5, 5]), f([6, 2, 3, 3]), "f32", fg=2, padding=[(1, 1), (0, 1)])
    conv_case("2-D depthwise (feature groups = channels)", f([2, 3, 6, 6]), f([6, 1, 3, 3]), "f32", fg=3,
              same=True)
    conv_case("2-D batch groups 2", f([4, 3, 5, 5]), f([4, 3, 2, 2]), "f32", bg=2)
    conv_case("2-D batch groups 3, strides", f([3, 2, 6, 5]), f([6, 2, 3, 2]), "f32", bg=3, strides=[2, 1])
    conv_case("3-D", f([1, 2, 4, 5, 3]), f([2, 2, 2, 3, 2]), "f32", strides=[1, 2, 1],
              padding=[(1, 0), (1, 1), (0, 1)])
    conv_case("3-D input and kernel dilation", f([2, 1, 3, 3, 4]), f([2, 1, 2, 2, 2]), "f32", in_dil=[2, 1, 1],
              k_dil=[1, 2, 2])
    conv_case("no spatial axes (a matrix product)", f([3, 4]), f([5, 4]), "f32")
    conv_case("batch 1, window the input's size", f([1, 3, 4, 4]), f([2, 3, 4, 4]), "f32")
    conv_case("empty batch", f([0, 3, 5, 5]), f([2, 3, 3, 3]), "f32", same=True)
    conv_case("1x1 window", f([2, 5, 3, 4]), f([3, 5, 1, 1]), "f32")
    conv_case("many channels (oneDNN's blocked layout)", f([2, 16, 7, 7]), f([32, 16, 3, 3]), "f32", same=True)
    for dt in ("f64", "c64", "c128", "f16", "bf16"):
        x, k = typed(dt, [2, 4, 5, 6], -9, 9), typed(dt, [4, 2, 3, 2], -9, 9)
        conv_case("strides, padding, dilations, feature groups", x, k, dt, strides=[2, 1],
                  padding=[(1, 1), (2, -1)], in_dil=[1, 2], k_dil=[2, 1], fg=2)
    x, k = typed("f64", [4, 2, 5, 5]), typed("f64", [6, 2, 2, 3])
    conv_case("batch groups 2 with padding and dilations", x, k, "f64", bg=2, padding=[(1, 0), (0, 2)], in_dil=[2, 1],
              k_dil=[1, 2])
    # Nx.conv computes in the floating type of the operands' promotion.
    conv_case("s32 with s32 -> f32", typed("s32", [2, 3, 5, 5], -9, 9), typed("s32", [2, 3, 3, 3], -9, 9), "f32",
              padding=[(1, 1), (1, 1)])
    conv_case("u8 with s8 -> f32", T("u8", rand_ints([1 * 2 * 6], 0, 20), [1, 2, 6]), typed("s8", [3, 2, 2], -9, 9),
              "f32", strides=[2])
    conv_case("f32 with f64 -> f64", f([1, 2, 4, 4]), typed("f64", [2, 2, 2, 2]), "f64")
