"""A Python client of samples/serving: THREADS threads, each sending REQUESTS
single requests (one row of 16 features) and checking each reply (4 class
probabilities) against the same model computed with numpy.

    python3 samples/serving/client.py tcp://127.0.0.1:5590 32 100

Needs numpy and pyzmq, and python/ on the path for sluice.wire (this script adds it).
Exits 1 when a reply is missing or wrong.
"""

import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from sluice import wire  # noqa: E402

FEATURES, HIDDEN, CLASSES = 16, 32, 4


def weights(rows, cols, a, b, scale, cosine):
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    x = a * i + b * j
    return (scale * (np.cos(x) if cosine else np.sin(x))).astype(np.float32)


W1 = weights(FEATURES, HIDDEN, 0.7, 1.3, 0.3, False)
B1 = weights(1, HIDDEN, 0.0, 1.0, 0.1, True)[0]
W2 = weights(HIDDEN, CLASSES, 0.5, 0.9, 0.3, True)
B2 = weights(1, CLASSES, 0.0, 0.05, 1.0, False)[0]


def model(x):
    z = np.tanh(x @ W1 + B1) @ W2 + B2
    e = np.exp(z - z.max())
    return e / e.sum()


def client(endpoint, index, count, latencies, failures):
    rng = np.random.default_rng(index)
    c = wire.ServingClient(endpoint)
    try:
        for _ in range(count):
            x = rng.standard_normal(FEATURES).astype(np.float32)
            start = time.perf_counter()
            (got,) = c.call([x], timeout_ms=10000)
            latencies.append(time.perf_counter() - start)
            if got.shape != (CLASSES,) or not np.allclose(got, model(x), rtol=1e-4, atol=1e-5):
                failures.append(f"client {index}: {got} for {x}, expected {model(x)}")
    except Exception as e:  # a timeout or an error reply
        failures.append(f"client {index}: {e}")
    finally:
        c.close()


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: client.py ENDPOINT THREADS REQUESTS")
    endpoint, threads, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    latencies, failures = [], []
    workers = [threading.Thread(target=client, args=(endpoint, i, count, latencies, failures)) for i in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - start
    for f in failures[:5]:
        print(f)
    if failures or len(latencies) != threads * count:
        print(f"FAIL: {len(failures)} failures, {len(latencies)} of {threads * count} replies")
        sys.exit(1)
    ms = np.percentile(np.array(latencies) * 1e3, [50, 99])
    print(f"{threads} clients x {count} requests: every reply matches numpy; "
          f"{threads * count / seconds:.0f} requests/s, latency p50 {ms[0]:.2f} ms, p99 {ms[1]:.2f} ms")


if __name__ == "__main__":
    main()
