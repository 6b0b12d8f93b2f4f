"""The Python end of serving_test.cpp's PythonClient test.

    serving_client.py ENDPOINT N   against a ServingEndpoint whose pipeline answers an f64[2] request x
                                   with x * 2 + 1: N calls with wire.ServingClient, each answer
                                   checked; a request of the wrong spec, whose error reply must name the
                                   spec expected; then 5 requests sent at once and their replies matched
                                   by seq. Exit 0 when all held.

Every wait has a timeout; any failure exits non-zero with the reason.
"""

import os
import sys
import tempfile
import time

import numpy as np
import zmq

from sluice import wire

TIMEOUT_MS = 30000


def request(v):
    return [np.array([v, -v], dtype=np.float64)]


def check(arrays, v, what):
    assert len(arrays) == 1, f"{what}: expected 1 array, found {len(arrays)}"
    y, want = arrays[0], np.array([2 * v + 1, -2 * v + 1])
    assert y.dtype == np.float64 and y.shape == (2,), f"{what}: expected float64 (2,), found {y.dtype} {y.shape}"
    assert np.array_equal(y, want), f"{what}: expected {want}, found {y}"


def main(endpoint, n):
    client = wire.ServingClient(endpoint)
    for i in range(n):
        check(client.call(request(i + 0.5), TIMEOUT_MS), i + 0.5, f"call {i}")
    try:
        client.call([np.array(3, dtype=np.int64)], TIMEOUT_MS)
        raise AssertionError("a request of the wrong spec was answered")
    except wire.WireError as e:
        assert "expected {f64[2]}, found {s64}" in str(e), f"the error reply does not name the specs: {e}"
    asked = {client.send(request(-k - 0.25)): -k - 0.25 for k in range(5)}
    while asked:
        m = client.recv(TIMEOUT_MS)
        assert m is not None, f"no reply within {TIMEOUT_MS} ms; waiting for seqs {sorted(asked)}"
        assert m.kind == wire.DATA, f"seq {m.seq}: expected data, found kind {m.kind}: {m.error}"
        assert m.seq in asked, f"a reply to seq {m.seq}, which was not asked or was answered already"
        check(m.arrays, asked.pop(m.seq), f"pipelined seq {m.seq}")
    # Nothing asked: recv waits out its timeout and says so.
    start = time.monotonic()
    assert client.recv(200) is None, "a reply with no request outstanding"
    assert time.monotonic() - start >= 0.15, f"recv(200) returned after {time.monotonic() - start:.3f} s"
    client.close()
    # No server connected (the client binds, and none comes): send waits out its timeout, then
    # names what it waited for.
    lonely = wire.ServingClient(f"@ipc://{tempfile.gettempdir()}/sluice-no-server-{os.getpid()}")
    start = time.monotonic()
    try:
        lonely.send(request(1.0), 200)
        raise AssertionError("a request was taken with no server there")
    except wire.WireError as e:
        assert "found none connected" in str(e), e
    assert time.monotonic() - start >= 0.15, f"send(200) gave up after {time.monotonic() - start:.3f} s"
    lonely.close()


if __name__ == "__main__":
    try:
        main(sys.argv[1], int(sys.argv[2]))
    except (AssertionError, wire.WireError, zmq.ZMQError) as e:
        print(f"serving_client.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
