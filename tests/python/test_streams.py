"""Streams from Python: send / recv / done with an accumulator, chunks cut
by to_batched, other Python threads running while a chunk computes."""
import threading

import numpy as np
import pytest

import sluice


def running_sum(chunk, acc):
    total = acc + sluice.sum(chunk)
    return total, total


def test_stream_carries_its_accumulator():
    s = sluice.jit(running_sum).stream(np.float64(0))
    chunks = [np.arange(4.0) + i for i in range(10)]
    for c in chunks:
        s.send(c)
    got = [float(s.recv()) for _ in chunks]
    np.testing.assert_allclose(got, np.cumsum([c.sum() for c in chunks]))
    assert float(s.done()) == got[-1]
    assert s.sent == 10 and s.received == 10


def test_to_batched_feeds_a_stream():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    batches = sluice.to_batched(data, 4)
    assert len(batches) == 3 and batches.batch_size == 4
    s = sluice.jit(lambda x, acc: (sluice.sum(x, axes=[0]), acc + sluice.sum(x))).stream(np.float32(0))
    for b in batches:
        s.send(b)
    rows = [np.asarray(s.recv()) for _ in range(3)]
    np.testing.assert_array_equal(rows[2], data[[8, 9, 0, 1]].sum(0))  # the last batch wraps around
    assert float(s.done()) == data.sum() + data[[0, 1]].sum()
    assert len(sluice.to_batched(data, 4, leftover="discard")) == 2


def test_several_inputs_outputs_and_accumulators():
    def step(x, y, count, total):
        return x * y, x + y, count + 1, total + sluice.sum(x * y)
    s = sluice.jit(step).stream((np.int64(0), np.float32(0)))
    s.send((np.ones(3, np.float32), np.full(3, 2, np.float32)))
    prod, total = s.recv()
    np.testing.assert_array_equal(np.asarray(prod), [2, 2, 2])
    count, acc = s.done()
    assert int(count) == 1 and float(acc) == 6.0


def test_recv_before_send_and_unreceived_done_are_errors():
    s = sluice.jit(running_sum).stream(np.float64(0))
    with pytest.raises(sluice.StreamError):
        s.recv()
    s.send(np.ones(2))
    with pytest.raises(sluice.StreamError, match="unreceived|receiv"):
        s.done()
    s.recv()
    assert float(s.done()) == 2.0


def test_waiting_releases_the_gil():
    # A Python thread counts while the main thread waits in recv for a
    # chunk of a long loop: with the GIL held it could not count at all.
    heavy = sluice.jit(lambda x, acc: (sluice.fori_loop(0, 20000, lambda i, c: sluice.sin(c) + x, x), acc))
    s = heavy.stream(np.float32(0))
    counted = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counted.append(1)
    t = threading.Thread(target=count)
    t.start()
    s.send(np.ones(256, np.float32))
    s.recv()
    stop.set()
    t.join()
    s.done()
    assert len(counted) > 0
