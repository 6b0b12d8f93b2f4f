"""consumer.py ENDPOINT N: receives the C++ stage's N results and checks each
against numpy: the magnitude spectrum, its peak bin, and the mean spectrum
of every chunk so far. Exits 0 when all agree."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from sluice import wire  # noqa: E402
from producer import chunk, peak_bin  # noqa: E402

if __name__ == "__main__":
    endpoint, n = sys.argv[1], int(sys.argv[2])
    inp = wire.ReliableReceiver(endpoint)  # binds
    total = np.zeros(512)
    for i in range(n):
        m = inp.recv(timeout=60)  # a stalled peer fails the run instead of hanging it
        assert m is not None, f"no message {i} within 60 s"
        assert m.kind == wire.DATA and m.seq == i, f"expected data message {i}, found kind {m.kind} seq {m.seq}"
        magnitude, peak, mean = m.arrays
        want = np.abs(np.fft.fft(chunk(i).astype(np.float64)))[:512]
        total += want
        # f32 FFT of 1024 points: errors near 1e-4 of the largest magnitude (512).
        assert np.allclose(magnitude, want, atol=1e-3 * want.max()), f"chunk {i}: spectrum differs from numpy's"
        assert int(peak) == peak_bin(i), f"chunk {i}: peak bin {int(peak)}, expected {peak_bin(i)}"
        assert np.allclose(mean, total / (i + 1), atol=1e-3 * want.max()), f"chunk {i}: running mean differs"
    end = inp.recv(timeout=60)
    assert end is not None and end.kind == wire.END_OF_STREAM, "expected the end of stream"
    inp.close()  # acknowledges the end of stream: the stage may then exit
    print(f"consumer.py: {n} spectra agree with numpy")
