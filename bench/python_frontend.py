"""The Python side of bench_python_frontend (bench/python_frontend.cpp),
which embeds the interpreter of tests/python's venv (where make test
installs the package) and times these functions against their baselines,
interleaved round by round. Each setup_* builds what its trials run and
returns them: functions of a call count giving the seconds per call."""
import os
import sys
import time

import numpy as np

import sluice


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def setup_dispatch_add4():
    """A jitted add of four f32[4] called and its first element read,
    against numpy's a + b + c + d and float(r[0])."""
    f = sluice.jit(lambda a, b, c, d: a + b + c + d)
    arrays = [np.arange(4, dtype=np.float32) + i for i in range(4)]
    tensors = [sluice.asarray(a) for a in arrays]
    assert float(f(*tensors)[0]) == float(sum(arrays)[0])

    def via_sluice():
        return float(f(*tensors)[0])

    def via_numpy():
        a, b, c, d = arrays
        r = a + b + c + d
        return float(r[0])
    return (lambda calls: per_call(via_sluice, calls)), (lambda calls: per_call(via_numpy, calls))


def setup_stream_chunk():
    """send + recv of a tiny chunk from Python: the step of bench/stream.cpp's
    stream_chunk_overhead (x + acc, acc + 1 over f32[4]), its first element read."""
    s = sluice.jit(lambda x, acc: (x + acc, acc + 1)).stream(np.zeros(4, np.float32))
    chunk = sluice.asarray(np.array([1, 2, 3, 4], np.float32))

    def step():
        s.send(chunk)
        return s.recv()[0]
    return lambda calls: per_call(step, calls)


# The online MLP's shapes: 64 examples of 16 features a batch, two hidden
# layers of 64, 4 classes; 400 batches a run (online_mlp's defaults).
MLP_BATCH, MLP_DIMS, MLP_HIDDEN, MLP_CLASSES, MLP_BATCHES = 64, 16, 64, 4, 400


def setup_pipeline_mlp(samples_dir):
    """samples/online_mlp/online_mlp.py's pipeline, built from Python and run
    over MLP_BATCHES batches, its progress read by a Python callback; a trial
    is one whole run, built afresh (the step traced, Adam's state made)."""
    sys.path.insert(0, os.path.join(samples_dir, "online_mlp"))
    import online_mlp
    rng = np.random.default_rng(1)
    # Made tensors once, as the C++ side makes its batches before it times anything.
    batches = [(sluice.asarray(rng.standard_normal((MLP_BATCH, MLP_DIMS)).astype(np.float32)),
                sluice.asarray(rng.integers(0, MLP_CLASSES, MLP_BATCH).astype(np.int64))) for _ in range(MLP_BATCHES)]
    params = online_mlp.initial_params(MLP_DIMS, MLP_HIDDEN, MLP_CLASSES, 1)
    losses = []

    def run():
        losses.clear()
        online_mlp.pipeline(batches, params, MLP_CLASSES, 3e-3, lambda loss, acc: losses.append(float(loss))).run()
        assert len(losses) == MLP_BATCHES
    return lambda calls: per_call(run, calls)
