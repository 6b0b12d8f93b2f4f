"""Reference values for tests/devices/fft_test.cpp (run with /usr/bin/python3).

Inputs are made by formulas the C++ test repeats:
  signal(n)[i] = complex(((i * 37) % 101) / 8 - 6, ((i * 11) % 13) / 4 - 1.5)
"""
import numpy as np
from inputs import show


def signal(n):
    i = np.arange(n)
    return (((i * 37) % 101) / 8 - 6) + 1j * (((i * 11) % 13) / 4 - 1.5)


x = signal(16).reshape(2, 8)
show("fft [2,8]", np.fft.fft(x))
show("ifft [2,8]", np.fft.ifft(x))
show("fft [12]", np.fft.fft(signal(12)))
show("fft [1]", np.fft.fft(signal(1)))
