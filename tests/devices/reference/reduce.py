"""Reference values for tests/devices/reduce_test.cpp (run with /usr/bin/python3).

Inputs are made by formulas the C++ test repeats:
  pattern(n)[i] = ((i * 37) % 101) / 8 - 6      (exact in f16, f32, f64)
"""
import functools

import numpy as np

import inputs
from inputs import show

# The inputs are f32 unless a call says otherwise.
pattern = functools.partial(inputs.pattern, dtype=np.float32)

x = pattern(24).reshape(2, 3, 4)
show("sum axis 0", x.sum(axis=0))
show("sum axis 1", x.sum(axis=1))
show("sum axis 2", x.sum(axis=2))
show("sum axes 0,2 keep", x.sum(axis=(0, 2), keepdims=True))
show("sum all", x.sum())
show("product axis 2", x.astype(np.float64).prod(axis=2))
show("max axis 1", x.max(axis=1))
show("min axes 0,1", x.min(axis=(0, 1)))

y = pattern(120).reshape(2, 3, 4, 5)
show("f64 sum axes 1,3", y.astype(np.float64).sum(axis=(1, 3)))
show("f64 max axes 0,2", y.astype(np.float64).max(axis=(0, 2)))

z = (pattern(12) * 8).astype(np.int32).reshape(3, 4)
print("s32 input", z.ravel().tolist())
show("s32 sum axis 0", z.sum(axis=0, dtype=np.int64))
show("s32 product axis 1", z.prod(axis=1, dtype=np.int64))
show("s32 argmax axis 0", z.argmax(axis=0))
show("s32 argmin axis 1", z.argmin(axis=1))
show("s32 argmax flat", z.argmax())

t = np.array([[1, 3, 3, 2], [5, 5, 0, 5], [0, 0, 0, 0]], dtype=np.float32)
show("ties argmax axis 1 low", t.argmax(axis=1))
show("ties argmax axis 1 high", t.shape[1] - 1 - t[:, ::-1].argmax(axis=1))
show("ties argmin axis 0 low", t.argmin(axis=0))
show("ties argmin axis 0 high", t.shape[0] - 1 - t[::-1, :].argmin(axis=0))

n = np.array([1, np.nan, 3, np.nan, -1], dtype=np.float32)
show("nan argmax", n.argmax())
show("nan argmin", n.argmin())
show("nan max", n.max())

c = (pattern(12) + 1j * pattern(12)[::-1]).astype(np.complex64).reshape(3, 4)
show("c64 sum axis 0 real", c.sum(axis=0).real)
show("c64 sum axis 0 imag", c.sum(axis=0).imag)
show("c64 product axis 1 real", c.astype(np.complex128).prod(axis=1).real)
show("c64 product axis 1 imag", c.astype(np.complex128).prod(axis=1).imag)
