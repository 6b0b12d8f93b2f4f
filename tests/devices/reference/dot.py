"""Reference values for tests/devices/dot_test.cpp (run with /usr/bin/python3).

Inputs are made by formulas the C++ test repeats:
  pattern(n, offset)[i] = (((i + offset) * 37) % 101) / 8 - 6
"""
import numpy as np
from inputs import pattern, show


a = pattern(6).reshape(2, 3)
b = pattern(12, 50).reshape(3, 4)
show("matmul [2,3]x[3,4]", a @ b)

a = pattern(24).reshape(2, 3, 4)
b = pattern(40, 7).reshape(2, 4, 5)
show("batch 0, contract a2 b1", np.einsum("bmk,bkn->bmn", a, b))

a = pattern(24).reshape(3, 2, 4)       # batch axis 1
b = pattern(40, 7).reshape(4, 2, 5)    # batch axis 1, contract axis 0
show("batch a1 b1, contract a2 b0", np.einsum("mbk,kbn->bmn", a, b))

a = pattern(24).reshape(2, 3, 4)
b = pattern(60, 3).reshape(4, 3, 5)
show("contract a(1,2) with b(1,0)", np.einsum("ijk,kjl->il", a, b))

ai = (pattern(12) * 8).astype(np.int64).reshape(3, 4)
bi = (pattern(8, 5) * 8).astype(np.int64).reshape(4, 2)
show("s32 [3,4]x[4,2]", ai @ bi)

c = (pattern(6) + 1j * pattern(6, 9)).reshape(2, 3)
d = (pattern(6, 4) - 1j * pattern(6, 2)).reshape(3, 2)
show("complex [2,3]x[3,2]", c @ d)
