#!/usr/bin/python3
"""Writes reference_cases.json: the op-conformance cases of sluice.

Run with /usr/bin/python3 (it has numpy, and scipy for the linear algebra
cases) from anywhere:
    /usr/bin/python3 tests/conformance/make_reference.py

Each case names an op (a name of ops/op_list.def, or a builder of ops/ops.h
such as squeeze and stack), the builder's static arguments (attrs), the
inputs, the expected output and a tolerance. conformance_test.cpp builds the
case with sluice's public API, runs it on every device and compares.

The expectations follow Nx's semantics, with numpy as the calculator. Where
numpy's own semantics differ from Nx's, the reference says so in a comment
marked "Nx:". Floats are computed in float64 from the exact input values and
rounded once to the output type, so an expectation is the correctly rounded
result (for + - * / sqrt fmod a float32 or narrower computation rounds to the
same value: double rounding through a format with >= 2p+2 bits is harmless).

Encoding: values are flat, row-major; NaN and infinities are the strings
"nan", "inf", "-inf"; complex values are [re, im]; f16/bf16 values are floats
exactly representable in that type; pred values are 1/0.
Tolerances: {} exact; {"ulps": n} distance in units in the last place of the
output type; {"atol": a, "rtol": r} |found - expected| <= a + r*|expected|
(modulus for complex). A non-finite expectation must always match exactly.

The cases are built family by family, one module each under reference/
(reference/common.py holds what the families share); main() below lists
them in the order they are written.
"""

import json
import pathlib

import numpy as np

from reference.blocks import blocks
from reference.binary import binary_floats, binary_ints, comparisons_and_logic, promotion, weak_scalars
from reference.common import CASES
from reference.conv import convs
from reference.creation import creation
from reference.custom_reductions import custom_reductions
from reference.dot import dots
from reference.indexing import indexing
from reference.larger_layouts import larger_layouts
from reference.linalg import linear_algebra
from reference.reductions import reductions
from reference.select_convert import bitcasts, conversions, ternary
from reference.shape import shape_ops
from reference.sorting import sorting
from reference.unary_exact import exact_unary
from reference.unary_float import float_funcs
from reference.windows import ffts, more_windows_and_scans, scans, windows

OUT = pathlib.Path(__file__).with_name("reference_cases.json")


def main():
    # The families draw their random inputs from one generator in this order:
    # reordering them changes the checked-in values, not only their order.
    float_funcs()
    exact_unary()
    binary_ints()
    binary_floats()
    promotion()
    weak_scalars()
    comparisons_and_logic()
    ternary()
    conversions()
    bitcasts()
    shape_ops()
    reductions()
    dots()
    windows()
    scans()
    ffts()
    creation()
    larger_layouts()
    indexing()
    sorting()
    more_windows_and_scans()
    convs()
    linear_algebra()
    custom_reductions()
    blocks()
    text = json.dumps({"generator": "tests/conformance/make_reference.py", "numpy": np.__version__, "cases": CASES},
                      separators=(",", ":"), allow_nan=False)
    OUT.write_text(text + "\n")
    print(f"{len(CASES)} cases, {len(text) // 1024} KiB -> {OUT}")


if __name__ == "__main__":
    main()
