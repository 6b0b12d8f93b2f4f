"""Binary elementwise ops: integer and float arithmetic (Nx's semantics where
numpy's differ), type promotion, weak scalars (plain C++ numbers),
comparisons and logic. One family because they share the two-operand
broadcasting and Nx.Type.merge.
"""

import numpy as np

from .common import (
    COMPLEX_FN, COMPLEX_FN_C128, EXACT, INT_BITS, SIGNED, SIMD_SPAN, T, ULP_TRANSCENDENTAL, case, from_f64, from_ints,
    int_max, int_min, rand, rand_ints, spread)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_binary(op, dt, a, b):
    """Nx integer semantics on Python ints (numpy differs; see each line)."""
    bits = INT_BITS[dt]
    if op == "add":
        return a + b
    if op == "subtract":
        return a - b
    if op == "multiply":
        return a * b
    if op == "quotient":
        # Nx: truncates toward zero (numpy floors); x / 0 has all bits set;
        # INT_MIN / -1 wraps to INT_MIN.
        return -1 if b == 0 else trunc_div(a, b)
    if op == "remainder":
        # Nx: the sign follows the dividend (C's %, np.fmod; numpy's
        # remainder follows the divisor); x rem 0 = x; INT_MIN rem -1 = 0.
        return a if b == 0 else a - b * trunc_div(a, b)
    if op == "pow":
        return a ** b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "bitwise_and":
        return a & b
    if op == "bitwise_or":
        return a | b
    if op == "bitwise_xor":
        return a ^ b
    if op == "left_shift":
        # Nx (XLA): a shift by the bit width or more gives 0 (numpy: undefined).
        return 0 if b >= bits else a << b
    if op == "right_shift":
        # Arithmetic for signed types: a shift by the width or more fills with the sign.
        if b >= bits:
            return -1 if a < 0 else 0
        return a >> b
    raise ValueError(op)


def binary_int_case(op, dt, name, av, bv, shape_a=None, shape_b=None):
    a, b = T(dt, av, shape_a), T(dt, bv, shape_b)
    ia, ib = np.broadcast_arrays(a.ints(), b.ints())
    out = np.array([int_binary(op, dt, x, y) for x, y in zip(ia.reshape(-1), ib.reshape(-1))], dtype=object)
    case(op, f"{dt} {name}", [a, b], from_ints(dt, out.reshape(ia.shape)))


def binary_ints():
    for dt in ("s8", "s32", "s64", "u8", "u16", "u32", "u64"):
        lo, hi = int_min(dt), int_max(dt)
        if dt in SIGNED:
            a = [7, -7, 7, -7, lo, lo, 5, -5, 0, hi, 13, -13]
            b = [2, 2, -2, -2, -1, 1, 0, 0, 3, 1, 5, 5]
        else:
            a = [7, 7, 0, hi, hi, 5, 0, 200 % (hi + 1), 13, 1]
            b = [2, 3, 3, 1, hi, 0, 0, 7, 5, hi]
        for op in ("quotient", "remainder"):
            binary_int_case(op, dt, "signs, zero divisor, min/-1" if dt in SIGNED else "zero divisor", a, b)
        for op in ("add", "subtract", "multiply"):
            b = [-1, 1, hi, -4, lo, 2] if dt in SIGNED else [1, 1, hi, 4, hi, 2]
            binary_int_case(op, dt, "wraps", [lo, hi, hi, 3, 0, hi // 2 + 1], b)
        for op in ("min", "max"):
            binary_int_case(op, dt, "extremes", [lo, hi, 0, 5], [hi, lo, 0, 3])
        bits = INT_BITS[dt]
        pat = [0x5A % (hi + 1), lo, hi, 0, 1 if dt not in SIGNED else -1, 12]
        for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            binary_int_case(op, dt, "patterns", pat, [0x0F, hi, lo if dt in SIGNED else 0x33, 0x33, 0x7, 10])
        one = 1
        neg = -1 if dt in SIGNED else hi
        binary_int_case("left_shift", dt, "in and out of range", [one, one, one, neg, 5, 3],
                        [0, bits - 1, bits, bits + 1, 1, bits + 7])
        binary_int_case("right_shift", dt, "in and out of range" + (" (sign fill)" if dt in SIGNED else ""),
                        [-8 if dt in SIGNED else 200, neg, hi, lo if dt in SIGNED else hi, 8, neg],
                        [1, bits, bits - 1, bits - 1, bits + 3, 1])
        binary_int_case("pow", dt, "non-negative exponents", [2, 3, 0, 0, 1, 5] if dt not in SIGNED else [2, -3, 0, 0, -1, 5],
                        [7, 3, 0, 2, 5 if dt in SIGNED else 9, 1])
    for dt in ("s32", "u8", "s64"):
        lo, hi = max(int_min(dt), -1000), min(int_max(dt), 1000)
        a, b = rand_ints([SIMD_SPAN], lo, hi), rand_ints([SIMD_SPAN], -9 if dt in SIGNED else 0, 9)
        for op in ("quotient", "remainder", "add", "multiply", "max", "bitwise_xor"):
            binary_int_case(op, dt, f"[{SIMD_SPAN}] spans SIMD vectors", a, b)
        shifts = rand_ints([SIMD_SPAN], 0, INT_BITS[dt] + 5)
        for op in ("left_shift", "right_shift"):
            binary_int_case(op, dt, f"[{SIMD_SPAN}] amounts up to width + 5 across SIMD vectors", a, shifts)
    # Wrapping exponentiation: 3^20 does not fit s32 and wraps modulo 2^32.
    binary_int_case("pow", "s32", "wraps", [3, -2, 7], [20, 31, 11])
    binary_int_case("add", "s32", "broadcast [2][3] + [3]", list(range(6)), [10, 20, 30], [2, 3], [3])
    binary_int_case("multiply", "s64", "broadcast [2][1] * [1][3]", [2, -3], [5, 7, 11], [2, 1], [1, 3])
    binary_int_case("quotient", "s32", "broadcast scalar divisor", [-9, -8, 8, 9], [4], [4], [])
    binary_int_case("subtract", "u8", "broadcast [3][1][2] - [4][1]",
                    rand_ints([6], 100, 255), rand_ints([4], 0, 100), [3, 1, 2], [4, 1])


def float_binary_ref(op, x, y):
    with np.errstate(all="ignore"):
        return {
            "add": lambda: x + y, "subtract": lambda: x - y, "multiply": lambda: x * y,
            "divide": lambda: x / y, "pow": lambda: np.power(x, y),
            # Nx: remainder follows the dividend's sign (fmod), numpy's the divisor's.
            "remainder": lambda: np.fmod(x, y),
            "atan2": lambda: np.arctan2(x, y),
            # Nx (XLA): min/max propagate NaN (np.minimum does too).
            "min": lambda: np.minimum(x, y), "max": lambda: np.maximum(x, y),
        }[op]()


FLOAT_BINARY_SAMPLES = {
    "add": ([1.5, -2.25, 1e30, "inf", "inf", "nan", 0.1, -0.0], [2.25, 2.25, 1e30, "-inf", 1, 1, 0.2, 0.0]),
    "subtract": ([1.5, -2.25, 1e30, "inf", "inf", "nan", 0.3, 0.0], [2.25, 2.25, -1e30, "inf", 1, 1, 0.1, 0.0]),
    "multiply": ([1.5, -2.25, 1e30, "inf", 0, "nan", 0.1, -3], [2.25, 2.25, 1e30, 0, -1, 1, 0.3, 0.0]),
    "divide": ([1, -1, 0, 1, 7, -0.5, 1e30, "inf", 3], [3, 0, 0, "inf", 2, 0.1, 1e-30, "inf", -7]),
    "pow": ([2, -2, -2, 0, 1, "nan", 2, 0.5, 10, 1.5, -0.0], [0.5, 3, 0.5, -1, "nan", 0, "-inf", 2.5, -3, 40, -1]),
    "remainder": ([5.5, -5.5, 5.5, -5.5, 1, "inf", 3, 7.25, -0.0], [2, 2, -2, -2, 0, 2, "inf", 0.5, 3]),
    "atan2": ([0, -0.0, 1, -1, 0, "inf", 1, 3, -2.5], [-1, -1, 0, 0, 0, "inf", 1, -4, 0.5]),
    "min": ([1, "nan", 2, -0.5, "-inf", 3], ["nan", 1, 2, 0.5, 4, "inf"]),
    "max": ([1, "nan", 2, -0.5, "-inf", 3], ["nan", 1, 2, 0.5, 4, "inf"]),
}
IEEE_EXACT = {"add", "subtract", "multiply", "divide", "remainder", "min", "max"}


def binary_floats():
    for op, (av, bv) in FLOAT_BINARY_SAMPLES.items():
        for dt in ("f32", "f64", "f16", "bf16"):
            a, b = T(dt, av), T(dt, bv)
            tol = EXACT if op in IEEE_EXACT else {"ulps": ULP_TRANSCENDENTAL[dt]}
            case(op, f"{dt} specials", [a, b], from_f64(dt, float_binary_ref(op, a.f64(), b.f64())), tol=tol)
        a, b = T("f32", rand([2, 3], 0.5, 4)), T("f32", rand([3], 0.5, 2))
        tol = EXACT if op in IEEE_EXACT else {"ulps": 4}
        case(op, "f32 broadcast [2][3] op [3]", [a, b], from_f64("f32", float_binary_ref(op, a.f64(), b.f64())), tol=tol)
        for dt in ("f32", "f64"):
            a, b = T(dt, spread(av, rand(SIMD_SPAN, -8, 8))), T(dt, spread(bv, rand(SIMD_SPAN, 0.25, 4)))
            tol = EXACT if op in IEEE_EXACT else {"ulps": ULP_TRANSCENDENTAL[dt]}
            case(op, f"{dt} [{SIMD_SPAN}] specials across SIMD vectors", [a, b],
                 from_f64(dt, float_binary_ref(op, a.f64(), b.f64())), tol=tol)
    for op in ("add", "subtract", "multiply", "divide"):
        for dt, tol in (("c64", COMPLEX_FN), ("c128", COMPLEX_FN_C128)):
            a = T(dt, [1 + 2j, -3.5 + 0.5j, 0.25 - 1j, 2 + 0j])
            b = T(dt, [2 - 1j, 0.5 + 0.5j, -4 + 2j, 0 + 1j])
            case(op, dt, [a, b], from_f64(dt, float_binary_ref(op, a.f64(), b.f64())),
                 tol=EXACT if op in ("add", "subtract") else tol)
    # Nx: divide of integers computes in f32 (Nx.Type.to_floating), x/0 -> +-inf, 0/0 -> NaN.
    for dt in ("s32", "u8", "s64"):
        av = [7, -7, 1, -1, 0, 5] if dt in SIGNED else [7, 200, 1, 0, 5]
        bv = [2, 2, 0, 0, 0, -3] if dt in SIGNED else [2, 3, 0, 0, 255]
        a, b = T(dt, av), T(dt, bv)
        in_f32 = [t.a.astype(np.float32).astype(np.float64) for t in (a, b)]
        ref = float_binary_ref("divide", *in_f32)
        case("divide", f"{dt} -> f32", [a, b], from_f64("f32", ref))
    a, b = T("s32", [1, -1, 0, 3]), T("s32", [1, 1, 2, -4])
    case("atan2", "s32 -> f32", [a, b], from_f64("f32", np.arctan2(a.f64(), b.f64())), tol={"ulps": 4})


def promotion():
    """Nx.Type.merge: the output dtype is part of the expectation."""
    def add(name, a, b, out):
        if out in INT_BITS:
            ia, ib = np.broadcast_arrays(a.ints(), b.ints())
            case("add", name, [a, b], from_ints(out, ia + ib))
        else:
            case("add", name, [a, b], from_f64(out, a.f64() + b.f64()))
    add("s32 + f32 -> f32", T("s32", [1, -2, 16777217]), T("f32", [0.5, 0.25, 0.0]), "f32")
    add("s8 + u8 -> s16", T("s8", [-128, 127, -1]), T("u8", [255, 255, 0]), "s16")
    add("u32 + s32 -> s64", T("u32", [4294967295, 0]), T("s32", [1, -2147483648]), "s64")
    add("u8 + s64 -> s64", T("u8", [255, 1]), T("s64", [-1000, 9223372036854775806]), "s64")
    add("u16 + s8 -> s32", T("u16", [65535, 0]), T("s8", [1, -5]), "s32")
    add("f16 + bf16 -> f32", T("f16", [1.5, 1000]), T("bf16", [0.25, 1024]), "f32")
    add("f16 + s32 -> f16", T("f16", [1.5, 2]), T("s32", [2, -3]), "f16")
    add("bf16 + f32 -> f32", T("bf16", [1.5, 3]), T("f32", [0.125, 1e-3]), "f32")
    add("f32 + f64 -> f64", T("f32", [0.1, 3]), T("f64", [0.2, 1e-12]), "f64")
    add("f32 + c64 -> c64", T("f32", [1, 2]), T("c64", [1j, 2 + 2j]), "c64")
    add("f64 + c64 -> c128", T("f64", [0.1, 2]), T("c64", [1j, 0.5 + 2j]), "c128")
    add("pred + s32 -> s32", T("pred", [True, False]), T("s32", [5, 5]), "s32")
    add("pred + u8 -> u8", T("pred", [True, True]), T("u8", [254, 255]), "u8")
    case("multiply", "s32 * f64 -> f64", [T("s32", [3, -7]), T("f64", [0.1, 1e300])],
         from_f64("f64", np.array([3 * 0.1, -7 * 1e300])))
    case("max", "s32 max f32 -> f32", [T("s32", [3, -7]), T("f32", [3.5, "nan"])], T("f32", [3.5, "nan"]))
    # Nx: both sides are converted to the merged type f32 first: 16777217 becomes 16777216.
    case("equal", "s32 vs f32 compares in f32", [T("s32", [16777217, 3]), T("f32", [16777216, 3.5])],
         T("pred", [True, False]))


def weak_scalars():
    """Plain C++ numbers take the tensor's type (Nx.Type.merge_number)."""
    x = T("s32", [1, -2, 2147483647])
    case("add", "s32 + weak 2 stays s32 (wraps)", [x], from_ints("s32", x.ints() + 2), {"scalar_b": 2})
    x = T("u8", [1, 200, 255])
    case("add", "u8 + weak 1 stays u8 (wraps)", [x], from_ints("u8", x.ints() + 1), {"scalar_b": 1})
    x = T("f16", [1.5, -3, 1000])
    case("multiply", "f16 * weak 2.5 stays f16", [x], from_f64("f16", x.f64() * 2.5), {"scalar_b": 2.5})
    x = T("bf16", [1.5, -3, 1000])
    case("subtract", "bf16 - weak 1 stays bf16", [x], from_f64("bf16", x.f64() - 1), {"scalar_b": 1})
    x = T("f32", [1.5, -3, 0.1])
    case("subtract", "weak 10 - f32", [x], from_f64("f32", 10 - x.f64()), {"scalar_a": 10})
    x = T("f64", [0.1, 2])
    case("add", "f64 + weak 0.1 keeps f64 precision", [x], from_f64("f64", x.f64() + 0.1), {"scalar_b": 0.1})
    x = T("c64", [1 + 1j, -2j])
    case("multiply", "c64 * weak 2", [x], from_f64("c64", x.f64() * 2), {"scalar_b": 2})
    # Nx: an integer tensor with a float number becomes f32 (to_floating), it is not truncated.
    x = T("s32", [1, -2])
    case("add", "s32 + weak 1.5 -> f32", [x], T("f32", [2.5, -0.5]), {"scalar_b": 1.5})
    x = T("u8", [7, 200])
    case("divide", "u8 / weak 2 -> f32", [x], T("f32", [3.5, 100]), {"scalar_b": 2})
    x = T("s64", [-5, 5])
    case("remainder", "s64 rem weak 3", [x], T("s64", [-2, 2]), {"scalar_b": 3})
    x = T("s32", [1, 5])
    case("less", "s32 < weak 3", [x], T("pred", [True, False]), {"scalar_b": 3})


def comparisons_and_logic():
    comps = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
             "greater": np.greater, "greater_equal": np.greater_equal}
    for name, fn in comps.items():
        for dt in ("f32", "f64", "f16", "bf16"):
            # NaN compares false with everything except not_equal; -0 == 0.
            a, b = T(dt, [1, "nan", "nan", -0.0, "-inf", 2.5, 3]), T(dt, [1, 1, "nan", 0.0, "-inf", -2.5, "inf"])
            with np.errstate(invalid="ignore"):
                case(name, dt, [a, b], T("pred", fn(a.f64(), b.f64())))
        for dt in ("s8", "s32", "u8", "u64"):
            lo, hi = int_min(dt), int_max(dt)
            a, b = T(dt, [lo, hi, 0, 5, hi]), T(dt, [hi, lo, 0, 5, hi - 1])
            case(name, dt, [a, b], T("pred", fn(a.ints(), b.ints()).astype(bool)))
        # s64 above 2^53 must compare as integers, not through double.
        a, b = T("s64", [9007199254740993, -9007199254740993]), T("s64", [9007199254740992, -9007199254740992])
        case(name, "s64 beyond 2^53", [a, b], T("pred", fn(a.ints(), b.ints()).astype(bool)))
        for dt in ("f32",):
            a = T(dt, spread([1, "nan", "nan", -0.0, "-inf", 2.5, 3], rand(SIMD_SPAN, -2, 2)))
            b = T(dt, spread([1, 1, "nan", 0.0, "-inf", -2.5, "inf"], rand(SIMD_SPAN, -2, 2)))
            with np.errstate(invalid="ignore"):
                case(name, f"{dt} [{SIMD_SPAN}] NaN across SIMD vectors", [a, b], T("pred", fn(a.f64(), b.f64())))
        a, b = T("s32", [1, 2, 3, 4, 5, 6], [2, 3]), T("s32", [3, 2, 1])
        case(name, "s32 broadcast [2][3] vs [3]", [a, b], T("pred", fn(a.a, b.a)))
    for name in ("equal", "not_equal"):
        a, b = T("c64", [1 + 1j, 1 + 1j, 2j]), T("c64", [1 + 1j, 1 - 1j, 2j])
        case(name, "c64", [a, b], T("pred", comps[name](a.a, b.a)))
        a, b = T("pred", [True, True, False, False]), T("pred", [True, False, True, False])
        case(name, "pred", [a, b], T("pred", comps[name](a.a, b.a)))
    logic = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
    for name, fn in logic.items():
        a, b = T("pred", [True, True, False, False]), T("pred", [True, False, True, False])
        case(name, "pred", [a, b], T("pred", fn(a.a, b.a)))
        # Any nonzero value is true; NaN is nonzero, -0.0 is zero.
        a, b = T("f32", [2.5, "nan", -0.0, 0.0, 1]), T("f32", [1, 1, 1, 0.0, -0.0])
        case(name, "f32 nonzero is true", [a, b], T("pred", fn(a.a != 0, b.a != 0)))
        a, b = T("s32", [-1, 0, 7, 0]), T("s32", [2, 3, 0, 0])
        case(name, "s32", [a, b], T("pred", fn(a.a, b.a)))
        a, b = T("u8", [255, 0, 1], [3, 1]), T("u8", [0, 9])
        case(name, "u8 broadcast [3][1] with [2]", [a, b], T("pred", fn(a.a, b.a)))
        a, b = T("s64", [1, 0]), T("f64", [0.0, 0.5])
        case(name, "s64 with f64", [a, b], T("pred", fn(a.a != 0, b.a != 0)))
