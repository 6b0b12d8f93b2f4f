"""What the reference scripts here share: the input formula the C++ tests
repeat, and how results are printed for pasting into them.

  pattern(n, offset)[i] = (((i + offset) * 37) % 101) / 8 - 6
(exact in f16, f32 and f64)
"""
import numpy as np


def pattern(n, offset=0, dtype=np.float64):
    i = np.arange(n) + offset
    return (((i * 37) % 101) / 8 - 6).astype(dtype)


def show(name, a):
    a = np.asarray(a)
    print(f"{name}: shape {list(a.shape)}")
    if a.dtype.kind == "c":
        print("  {" + ", ".join(f"{{{v.real!r}, {v.imag!r}}}" for v in a.ravel()) + "}")
    elif a.dtype.kind == "f":
        print("  {" + ", ".join(repr(float(v)) for v in a.ravel()) + "}")
    else:
        print("  {" + ", ".join(str(int(v)) for v in a.ravel()) + "}")
