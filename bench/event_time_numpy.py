"""zip_by_time_2x's baseline: two streams aligned by time in numpy, as a numpy user
would: each row of A takes B's sample nearest in time (searchsorted; ties to the
earlier) when within the tolerance, zeros elsewhere. It is handed every sample's
time ready made, and each stream whole, not in chunks: its best case."""
import time

import numpy as np


def align(a_times, b_times, b_data, tolerance):
    start = time.perf_counter()
    i = np.searchsorted(b_times, a_times, side="right")  # b_times[i-1] <= t < b_times[i]
    before = np.clip(i - 1, 0, len(b_times) - 1)
    after = np.clip(i, 0, len(b_times) - 1)
    take_after = (i == 0) | ((i < len(b_times)) & (b_times[after] - a_times < a_times - b_times[before]))
    pick = np.where(take_after, after, before)
    matched = np.abs(b_times[pick] - a_times) <= tolerance
    out = b_data[pick]
    out[~matched] = 0
    return time.perf_counter() - start, out, matched


def setup(a_times, b_times, b_data, channels, tolerance):
    a = np.frombuffer(a_times, dtype=np.int64)
    b = np.frombuffer(b_times, dtype=np.int64)
    data = np.frombuffer(b_data, dtype=np.float32).reshape(len(b), channels)
    _, out, matched = align(a, b, data, tolerance)

    def trial():
        return align(a, b, data, tolerance)[0]

    return trial, out.tobytes(), matched.astype(np.uint8).tobytes()
