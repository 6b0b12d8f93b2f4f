"""Two sensor streams, as event_time_test.cpp makes them, aligned by time in numpy
(searchsorted): prints which sample of stream B each row of stream A takes, as runs
stored in event_time_test.cpp (kExpectedRuns).

A: 1000 Hz, 40 chunks of 50 rows, stamped exactly. B: its own clock 0.2% fast
(1002 Hz), 3 ms late, each chunk's stamp off by up to 20 us (jitter), chunks of 37
rows; chunks 20 to 23 never come (a gap) and chunk 30 comes after 32 (late: the zip
routes it to its late sink). A row of A takes B's nearest sample (ties to the
earlier) when within 400 us."""
import numpy as np

T0 = 1_000_000_000
A_RATE, A_ROWS, A_CHUNKS = 1000.0, 50, 40
B_RATE, B_ROWS, B_CHUNKS = 1002.0, 37, 56
GAP, LATE = range(20, 24), 30
TOLERANCE = 400_000


def row_offsets(rows, rate):
    # floor(row * (1e9 / rate) + 0.5): tags.h, row_offset_ns
    return np.floor(np.arange(rows, dtype=np.int64) * (1e9 / rate) + 0.5).astype(np.int64)


def b_stamp(c):
    jitter = ((c * 7919) % 41 - 20) * 1000
    return T0 + 3_000_000 + int(np.floor(c * B_ROWS * (1e9 / B_RATE) + 0.5)) + jitter


a_times = np.concatenate([T0 + c * 50_000_000 + row_offsets(A_ROWS, A_RATE) for c in range(A_CHUNKS)])
kept = [c for c in range(B_CHUNKS) if c not in GAP and c != LATE]
b_times = np.concatenate([b_stamp(c) + row_offsets(B_ROWS, B_RATE) for c in kept])
b_index = np.concatenate([c * B_ROWS + np.arange(B_ROWS) for c in kept])

i = np.searchsorted(b_times, a_times, side="right")  # b_times[i-1] <= t < b_times[i]
before = np.clip(i - 1, 0, len(b_times) - 1)
after = np.clip(i, 0, len(b_times) - 1)
take_after = (i == 0) | ((i < len(b_times)) & (b_times[after] - a_times < a_times - b_times[before]))
pick = np.where(take_after, after, before)
matched = np.abs(b_times[pick] - a_times) <= TOLERANCE
taken = np.where(matched, b_index[pick], -1)

# Runs: (first row of A, first sample of B or -1, length), B's sample going up by
# one each row of a matched run.
runs, start = [], 0
for r in range(1, len(taken) + 1):
    if r == len(taken) or not (
        (taken[r] == -1 and taken[start] == -1) or (taken[start] != -1 and taken[r] == taken[start] + (r - start))
    ):
        runs.append((start, int(taken[start]), r - start))
        start = r
print(f"// {int(matched.sum())} of {len(taken)} rows matched")
print(",\n".join(f"{{{a}, {b}, {n}}}" for a, b, n in runs))
