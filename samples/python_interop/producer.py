"""producer.py ENDPOINT N: sends N chunks of a sine (chunk i: a sine at
frequency bin 10 + (7 i mod 490), as f32[1024]) to the C++ stage, then end of
stream, over a reliable channel: it exits 0 only once the stage has taken
everything."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from sluice import wire  # noqa: E402


def peak_bin(i):
    return 10 + 7 * i % 490


def chunk(i):
    """Chunk i: a sine at frequency bin peak_bin(i) plus a little deterministic noise."""
    t = np.arange(1024)
    noise = np.random.default_rng(i).standard_normal(1024) * 0.1
    return (np.sin(2 * np.pi * peak_bin(i) * t / 1024) + noise).astype(np.float32)


if __name__ == "__main__":
    endpoint, n = sys.argv[1], int(sys.argv[2])
    out = wire.ReliableSender(endpoint)
    for i in range(n):
        out.send([chunk(i)])
    out.send_end_of_stream()
    out.flush(timeout=60)  # until the stage has acknowledged everything (WireError after a minute)
