"""Pipelines built from Python: sources of numpy data, compiled stages from
Python functions, sinks calling Python, errors, checkpoints with a restore,
and one program partitioned over three processes."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import sluice

HERE = os.path.dirname(os.path.abspath(__file__))
data = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)


def summing_pipeline(rows=data, **options):
    p = sluice.Pipeline(**options)
    src = p.source("rows", sluice.to_batched(rows, 8))
    stage = p.stage("sum", lambda x, acc: (sluice.sum(x, axes=[1]), acc + sluice.sum(x)), acc=np.float64(0))
    got = []
    sink = p.sink("keep", lambda sums: got.append(sums.copy()))
    p.connect(src, stage)
    p.connect(stage, sink)
    return p, got


def test_a_source_a_stage_and_a_sink():
    p, got = summing_pipeline()
    # Drawn before the run: the stage's output, its rows' sums, is traced.
    assert '  n1 -> n2 [label="f32[8]"];' in p.to_dot() and p.to_mermaid().startswith("flowchart LR")
    result = p.run()
    np.testing.assert_array_equal(np.concatenate(got), data.sum(1))
    assert float(result["accumulators"]["sum"]) == data.sum()
    assert result["metrics"]["sum"]["messages_in"] == 8 and result["metrics"]["keep"]["kind"] == "sink"


def test_iterators_fan_out_and_several_tensors():
    def readings():
        for i in range(6):
            yield np.full(4, i, np.float32), np.int32(i)
    p = sluice.Pipeline()
    src = p.source("readings", readings())
    stage = p.stage("scale", lambda x, i: (x * sluice.as_type(i, sluice.f32), i + 1))
    first, second = [], []
    a = p.sink("a", lambda x, i: first.append((x[0], int(i))))
    b = p.sink("b", lambda x, i: second.append(int(i)))
    p.connect(src, stage)
    p.connect(stage, a)
    p.connect(stage, b)
    p.run()
    assert first == [(i * i, i + 1) for i in range(6)] and second == [i + 1 for i in range(6)]


def test_a_failing_callback_fails_the_run_or_is_counted():
    p = sluice.Pipeline()
    src = p.source("ones", [np.ones(2, np.float32)] * 3)
    sink = p.sink("bad", lambda a: 1 / 0)
    p.connect(src, sink)
    with pytest.raises(sluice.PipelineError, match="sink bad: Python raised ZeroDivisionError"):
        p.run()
    seen = []
    p = sluice.Pipeline(on_error="skip")
    src = p.source("numbers", [np.float32(i) for i in range(5)])
    sink = p.sink("picky", lambda a: seen.append(float(a)) if float(a) != 2 else 1 / 0)
    p.connect(src, sink)
    result = p.run()
    assert seen == [0, 1, 3, 4] and result["metrics"]["picky"]["errors"] == 1


def test_shape_errors_name_the_stage():
    p = sluice.Pipeline()
    src = p.source("rows", [np.ones((2, 3), np.float32)])
    stage = p.stage("bad", lambda x: x @ x)
    p.connect(src, stage)
    with pytest.raises(sluice.Error, match="dot"):
        p.run()


def test_a_restore_resumes_after_the_checkpoint(tmp_path):
    # The first run sees the first 5 of the 8 batches (as if it had died
    # there), storing a checkpoint every 2 messages.
    store = str(tmp_path / "checkpoints")
    p, _ = summing_pipeline(data[:40], checkpoint_dir=store, checkpoint_every=2)
    first = p.run()
    assert first["checkpoints_completed"] >= 2
    q, got = summing_pipeline(checkpoint_dir=store, checkpoint_every=2)
    number, skipped = q.restore()
    assert number > 0 and skipped == []
    second = q.run()
    # The restored run starts from the checkpoint's accumulator and replays the batches after it.
    assert 3 <= len(got) < 8
    np.testing.assert_array_equal(np.concatenate(got), data.sum(1)[-8 * len(got):])
    assert float(second["accumulators"]["sum"]) == data.sum()


def run_partitioned(command, out, timeout=120):
    processes = [subprocess.Popen(c) for c in command]
    deadline = time.monotonic() + timeout
    try:
        for proc in processes:
            assert proc.wait(timeout=max(1, deadline - time.monotonic())) == 0
    finally:
        for proc in processes:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    expected = np.concatenate([data_rows * 2 + i for i, data_rows in
                               enumerate(np.split(np.arange(32 * 8, dtype=np.float32).reshape(32, 8), 8))])
    np.testing.assert_array_equal(np.load(out), expected)


def test_three_processes_by_role(tmp_path):
    out = str(tmp_path / "out.npy")
    app = [sys.executable, os.path.join(HERE, "partitioned_app.py"), str(tmp_path), out]
    run_partitioned([app + [role] for role in ["source", "compute", "sink"]], out)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun (Debian openmpi-bin)")
def test_three_processes_under_mpirun(tmp_path):
    out = str(tmp_path / "out.npy")
    mpirun = ["mpirun", "-np", "3", "--oversubscribe"] + (["--allow-run-as-root"] if os.getuid() == 0 else [])
    run_partitioned([mpirun + [sys.executable, os.path.join(HERE, "partitioned_app.py"), str(tmp_path), out]], out)


def test_sluices_own_sources_and_sinks(tmp_path):
    # A collector and .npy files at the end of one pipeline, which sends its
    # messages on a reliable channel to a second pipeline in this process.
    endpoint = f"ipc://{tmp_path}/edge"
    receiver = sluice.Pipeline()
    inbound = receiver.source("in", sluice.sources.zmq("@" + endpoint, [sluice.Spec([4], "f32")]))
    kept = sluice.sinks.collector()
    files = str(tmp_path / "files")
    receiver.connect(inbound, receiver.sink("kept", kept))
    receiver.connect(inbound, receiver.sink("files", sluice.sinks.npy_files(files)))
    receiver.start()
    sender = sluice.Pipeline()
    rows = [np.full(4, i, np.float32) for i in range(10)]
    out = sender.sink("out", sluice.sinks.zmq(">" + endpoint))
    sender.connect(sender.source("rows", rows), out)
    sender.run()
    receiver.wait()
    got = [np.asarray(message[0]) for message in kept.results()]
    np.testing.assert_array_equal(np.stack(got), np.stack(rows))
    names = sorted(n for n in os.listdir(files) if n.endswith(".npy"))
    assert len(names) == 10
    np.testing.assert_array_equal(np.load(os.path.join(files, names[3])), rows[3])
    # Those files' rows again, read by a source of .npy files, two at a time.
    np.save(tmp_path / "rows.npy", np.stack(rows))
    again = sluice.Pipeline()
    batches = sluice.sinks.collector()
    again.connect(again.source("file", sluice.sources.npy_file(str(tmp_path / "rows.npy"), 2)),
                  again.sink("batches", batches))
    again.run()
    np.testing.assert_array_equal(np.stack([np.asarray(m[0]) for m in batches.results()]),
                                  np.stack(rows).reshape(5, 2, 4))
    with pytest.raises(sluice.TypeError, match="a callable or a sluice.sinks sink"):
        sender.sink("wrong", 42)


def test_a_slow_callback_holding_the_gil_stalls_stages_only_at_the_credit():
    # The sink's first call holds the GIL in a Python loop: the compiled
    # stage, which needs no GIL, runs on meanwhile, until the source's
    # credit (capacity) is used up, and no further.
    capacity = 8
    p = sluice.Pipeline(capacity=capacity)
    src = p.source("rows", [np.full(4, i, np.float32) for i in range(50)])
    stage = p.stage("double", lambda x: x * 2)
    ran_ahead = []

    def stage_out():
        return next(m["messages_out"] for m in json.loads(p.metrics_json()) if m["name"] == "double")

    def slow(x):
        if ran_ahead:
            return
        deadline = time.monotonic() + 30
        while stage_out() < capacity and time.monotonic() < deadline:
            pass  # a Python loop: the GIL stays with this thread
        held = time.monotonic() + 0.2
        while time.monotonic() < held:
            pass
        ran_ahead.append(stage_out())
    p.connect(src, stage)
    p.connect(stage, p.sink("slow", slow))
    result = p.run()
    assert ran_ahead == [capacity]
    assert result["metrics"]["slow"]["messages_in"] == 50


def test_a_trace_of_every_message(tmp_path):
    path = str(tmp_path / "trace.json")
    p, got = summing_pipeline(trace=path)
    p.run()
    with open(path) as f:
        trace = json.load(f)
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert sorted({e["name"] for e in slices}) == ["keep", "rows", "sum"]
    assert len(slices) == 3 * 8, "a slice per node per message"
    # Message 3's flow, carried by its slices (flow events v2): out of the source, through, into the sink.
    flow = sorted((e["ts"], e.get("flow_in", False), e.get("flow_out", False)) for e in slices if e["bind_id"] == 3)
    assert [(i, o) for _, i, o in flow] == [(False, True), (True, True), (True, False)]
    assert trace["otherData"]["events_dropped"] == 0
    bounded = str(tmp_path / "bounded.json")
    p, got = summing_pipeline(trace=bounded, trace_max_events=5)
    p.run()
    with open(bounded) as f:
        assert json.load(f)["otherData"]["events_dropped"] == 3 * 8 - 5


def test_the_run_log(tmp_path):
    log = str(tmp_path / "run.jsonl")
    p, got = summing_pipeline(run_log=log, name="summing")
    p.run()
    with open(log) as f:
        records = [json.loads(line) for line in f]
    metrics = [r for r in records if r["type"] == "metrics"]
    assert metrics and all(r["pipeline"] == "summing" for r in metrics)
    last = {node["name"]: node for node in metrics[-1]["nodes"]}
    assert last["sum"]["messages_in"] == 8 and last["keep"]["messages_in"] == 8


def test_tags_from_a_python_source_to_a_python_sink():
    chunks = [sluice.Chunk(np.full((4, 2), i, np.float32),
                           {"time_ns": 1_000_000_000 + i * 4_000_000, "sample_rate": 1000.0,
                            "source": "lab", ("knock", i % 4): np.arange(3, dtype=np.int32)})
              for i in range(5)]
    p = sluice.Pipeline()
    src = p.source("sensor", chunks)
    double = p.stage("double", lambda x: x * 2)
    got = []
    p.connect(src, double)
    p.connect(double, p.sink("keep", lambda x, tags: got.append((x.copy(), tags)), tags=True))
    p.run()
    assert len(got) == 5
    for i, (x, tags) in enumerate(got):
        np.testing.assert_array_equal(x, np.full((4, 2), 2 * i, np.float32))
        assert tags[("time_ns", -1)] == 1_000_000_000 + i * 4_000_000
        assert tags[("sample_rate", -1)] == 1000.0 and tags[("source", -1)] == "lab"
        np.testing.assert_array_equal(tags[("knock", i % 4)], np.arange(3, dtype=np.int32))
    with pytest.raises(sluice.TypeError, match="knock"):
        sluice.Chunk(np.zeros(2, np.float32), {"knock": True})
    with pytest.raises(sluice.ValueError):
        sluice.Chunk(np.zeros(2, np.float32), {("knock", -5): 1})


def stream(t0, rate, rows, chunks, channels, seed):
    """Chunks of `rows` rows at `rate` Hz from t0 (ns), random data, and every row's time."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((rows * chunks, channels)).astype(np.float32)
    items, times = [], []
    for c in range(chunks):
        start = t0 + int(np.floor(c * rows * (1e9 / rate) + 0.5))
        items.append(sluice.Chunk(data[c * rows:(c + 1) * rows], {"time_ns": start, "sample_rate": rate}))
        times.append(start + np.floor(np.arange(rows) * (1e9 / rate) + 0.5).astype(np.int64))
    return items, np.concatenate(times), data


def test_zip_by_time_matches_a_numpy_alignment():
    a, a_times, a_data = stream(0, 1000.0, 100, 20, 2, 1)
    b, b_times, b_data = stream(300_000, 1001.0, 77, 26, 3, 2)  # its own clock, 0.1% fast, 0.3 ms late
    tolerance = 400_000
    p = sluice.Pipeline()
    sa, sb = p.source("a", a), p.source("b", b)
    joined = p.zip_by_time("joined", tolerance_s=tolerance / 1e9, lateness_s=3600, late=sluice.sinks.collector())
    out = sluice.sinks.collector()
    p.connect(sa, joined)
    p.connect(sb, joined)
    p.connect(joined, p.sink("out", out))
    result = p.run()
    got_a = np.concatenate([m[0] for m in out.results()])
    got_b = np.concatenate([m[1] for m in out.results()])
    got_hit = np.concatenate([m[2] for m in out.results()])
    # The same alignment in numpy: B's nearest sample to each row of A (ties to the earlier).
    i = np.searchsorted(b_times, a_times, side="right")
    before, after = np.clip(i - 1, 0, len(b_times) - 1), np.clip(i, 0, len(b_times) - 1)
    take_after = (i == 0) | ((i < len(b_times)) & (b_times[after] - a_times < a_times - b_times[before]))
    pick = np.where(take_after, after, before)
    hit = np.abs(b_times[pick] - a_times) <= tolerance
    np.testing.assert_array_equal(got_a, a_data)
    np.testing.assert_array_equal(got_hit, hit)
    np.testing.assert_array_equal(got_b, np.where(hit[:, None], b_data[pick], 0))
    assert 0 < hit.sum() < len(hit)
    assert result["metrics"]["joined"]["kind"] == "zip_by_time"


def test_zip_by_time_with_an_idle_time_goes_without_a_stream_gone_quiet():
    a, _, _ = stream(0, 1000.0, 50, 2, 2, 5)  # [0, 100 ms)
    b, _, _ = stream(0, 1000.0, 60, 1, 3, 6)  # [0, 60 ms)

    def quiet_then_done():
        yield b[0]
        time.sleep(0.5)  # quiet past idle_s: a's second chunk goes without it

    p = sluice.Pipeline()
    joined = p.zip_by_time("joined", tolerance_s=0.0005, lateness_s=3600, idle_s=0.05)
    out = sluice.sinks.collector()
    p.connect(p.source("a", a), joined)
    p.connect(p.source("b", quiet_then_done()), joined)
    p.connect(joined, p.sink("out", out))
    result = p.run()
    assert len(out.results()) == 2
    # Released by the idle time, not by b's end (which waits for nothing).
    assert result["metrics"]["joined"]["figures"]["unwaited"] == 1
    hit = out.results()[1][2]
    assert hit[:10].all() and not hit[10:].any()  # b's rows reach 60 ms of a's [50, 100)


def test_event_windows_by_count_and_by_time():
    items, _, data = stream(0, 1000.0, 30, 10, 1, 3)
    p = sluice.Pipeline()
    src = p.source("s", items)
    by_count = p.event_window("by_count", rows=40, every_rows=20)
    by_time = p.event_window("by_time", rows=101, length_s=0.1)
    counted, timed = sluice.sinks.collector(), sluice.sinks.collector()
    p.connect(src, by_count)
    p.connect(src, by_time)
    p.connect(by_count, p.sink("counted", counted))
    p.connect(by_time, p.sink("timed", timed))
    p.run()
    windows = counted.results()
    assert len(windows) == (300 - 40) // 20 + 1
    for n, (w,) in enumerate(windows):
        np.testing.assert_array_equal(w, data[20 * n:20 * n + 40])
    for n, (w, count) in enumerate(timed.results()):
        assert int(np.asarray(count)) == 100
        np.testing.assert_array_equal(w[:100], data[100 * n:100 * (n + 1)])
        assert timed.tags()[n][("window_start_ns", -1)] == n * 100_000_000
    assert len(timed.results()) == 3


def test_an_event_window_with_an_idle_time_emits_a_quiet_streams_last_window():
    items, _, data = stream(0, 1000.0, 30, 9, 1, 4)

    def quiet_then_late():
        yield from items[:8]  # rows 0 to 239 ms
        time.sleep(0.5)  # quiet: [200, 300) goes after idle_s
        yield items[8]  # rows 240 to 269 ms: late for it

    p = sluice.Pipeline()
    window = p.event_window("w", rows=101, length_s=0.1, idle_s=0.05)
    timed = sluice.sinks.collector()
    p.connect(p.source("s", quiet_then_late()), window)
    p.connect(window, p.sink("timed", timed))
    result = p.run()
    assert [int(np.asarray(count)) for _, count in timed.results()] == [100, 100, 40]
    np.testing.assert_array_equal(timed.results()[2][0][:40], data[200:240])
    figures = result["metrics"]["w"]["figures"]
    assert figures["idle_flushes"] == 1 and figures["late_messages"] == 1
