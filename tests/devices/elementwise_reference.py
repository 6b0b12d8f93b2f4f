"""Prints the numpy reference values used by elementwise_test.cpp.

Run with /usr/bin/python3 (numpy). The test states each value it takes from
here next to the check that uses it.
"""
import numpy as np

H = np.float16


def f16_bits(x):
    return hex(int(np.array([x], dtype=np.float16).view(np.uint16)[0]))


print("f16 0.1 + 0.2       ", f16_bits(H(0.1) + H(0.2)))
print("f16 exp(1)          ", f16_bits(H(np.exp(np.float32(1)))))
print("f16 1 / 3           ", f16_bits(H(1) / H(3)))
print("f16 sqrt(2)         ", f16_bits(H(np.sqrt(np.float32(2)))))
with np.errstate(over="ignore"):  # 65520 overflows to infinity, as it should
    print("f16 of 2049, 65519, 65520:", f16_bits(H(2049.0)), f16_bits(H(65519.0)), f16_bits(H(65520.0)))
print("f16 of f64 1 + 2^-11 + 2^-40, 1 + 2^-11:",
      f16_bits(H(np.float64(1 + 2**-11 + 2**-40))), f16_bits(H(np.float64(1 + 2**-11))))
print("s32 3^40 (wrapped)  ", np.array([3**40 % 2**32], dtype=np.uint64).astype(np.uint32).view(np.int32)[0])
print("u64 3^40            ", 3**40)
print("c128 exp(i pi)      ", np.exp(np.complex128(1j * np.pi)))
print("c128 log(-1)        ", np.log(np.complex128(-1 + 0j)))
print("c128 sqrt(-4)       ", np.sqrt(np.complex128(-4 + 0j)))
print("c128 i^2            ", np.complex128(1j) ** np.complex128(2))
print("c128 0^0            ", np.complex128(0) ** np.complex128(0))
print("c128 tanh(1 + i)    ", repr(np.tanh(np.complex128(1 + 1j))))
print("c64 (1+2i)/(3+4i)   ", np.complex64(1 + 2j) / np.complex64(3 + 4j))
