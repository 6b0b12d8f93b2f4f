"""Reference values for tests/devices/window_scan_test.cpp (run with /usr/bin/python3).

Inputs are made by formulas the C++ test repeats:
  pattern(n)[i] = ((i * 37) % 101) / 8 - 6
Windows are computed on explicitly padded arrays (the pad value is the
identity: 0 for sums, -inf for max, +inf for min) with sliding_window_view.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from inputs import pattern, show


def window(x, dims, strides, padding, fn, pad_value):
    p = np.pad(x, padding, constant_values=pad_value)
    v = sliding_window_view(p, dims)
    v = v[tuple(slice(None, None, s) for s in strides)]
    return fn(v, axis=tuple(range(x.ndim, 2 * x.ndim)))


x = pattern(20).reshape(4, 5)
show("sum [4,5] window [2,3]", window(x, (2, 3), (1, 1), ((0, 0), (0, 0)), np.sum, 0))

x = pattern(20).reshape(5, 4)
show("max [5,4] window [2,2] strides [2,2] pad (1,0),(0,1)",
     window(x, (2, 2), (2, 2), ((1, 0), (0, 1)), np.max, -np.inf))

x = pattern(60).reshape(2, 5, 6)
show("min [2,5,6] window [1,3,2] strides [1,2,2] pad (0,0),(1,1),(0,1)",
     window(x, (1, 3, 2), (1, 2, 2), ((0, 0), (1, 1), (0, 1)), np.min, np.inf))

xi = (pattern(10) * 8).astype(np.int32)
print("s32 input", xi.tolist())
show("s32 sum [10] window 4 stride 3 pad (2,2)", window(xi, (4,), (3,), ((2, 2),), np.sum, 0))

x = pattern(60).reshape(3, 4, 5)
show("cumsum [3,4,5] axis 1 reversed", np.flip(np.cumsum(np.flip(x, 1), axis=1), 1))
show("cumsum [3,4,5] axis 2", np.cumsum(x, axis=2))
show("cumsum [3,4,5] axis 0 reversed", np.flip(np.cumsum(np.flip(x, 0), axis=0), 0))
s8 = np.full(200, 1, dtype=np.int8)
c = np.cumsum(s8, dtype=np.int8)
show("s8 cumsum of 200 ones, elements 125..130", c[125:131])
