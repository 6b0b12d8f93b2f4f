"""trace_demo_test.py SLUICE: `sluice demo --trace FILE` of a short
three-process run, and `sluice trace merge`. The merged timeline is parsed
as a viewer reads it: the three processes named; every slice closed (a
duration, not negative); on each thread, slices nest or follow one another
(timestamps monotonic); every queue wait begun and ended once, forward
in time; every message's flow starts at the source, in the
source process, before each of its steps and its end, which come in the
compute and sink processes; each process's clocks within 1 ms of the
first's (one host: the monotonic clock is shared, nothing moved). Then the
parts, merged again by `sluice trace merge`, give the same events."""
import collections
import json
import os
import subprocess
import sys
import tempfile

sluice = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "run.json")
    run = subprocess.run([sluice, "demo", "--seconds", "2", "--trace", path],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"trace: {path} (3 processes" in run.stdout, run.stdout
    assert not any(n.startswith("run.json.") for n in os.listdir(tmp)), os.listdir(tmp)
    trace = json.load(open(path))
    events = trace["traceEvents"]

    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    assert sorted(processes.values()) == ["compute", "sink", "source"], processes
    merged = trace["otherData"]["merged"]
    assert [m["process"] for m in merged] == ["source", "compute", "sink"], merged
    for m in merged:
        assert m["offset_us"] == 0, m
        assert abs(m["clock_difference_us"]) < 1000, f"clocks more than 1 ms apart: {m}"

    slices = [e for e in events if e["ph"] == "X"]
    assert slices, "no slices"
    by_node = collections.Counter((processes[s["pid"]], s["name"]) for s in slices)
    for node in [("source", "vibration"), ("compute", "spectrum"), ("compute", "detector"), ("sink", "monitor")]:
        assert by_node[node] > 10, f"{node}: {by_node[node]} slices ({dict(by_node)})"
    threads = collections.defaultdict(list)
    for s in slices:
        assert s["dur"] >= 0, s
        threads[(s["pid"], s["tid"])].append((s["ts"], s["ts"] + s["dur"]))
    for thread, spans in threads.items():
        spans.sort()
        open_ends = []
        for start, end in spans:
            while open_ends and open_ends[-1] <= start + 1e-3:  # ts + dur in floating point: ends a little off
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-3, f"thread {thread}: a slice overlaps another's end"
            open_ends.append(end)

    # Queue waits: async slices, each begun and ended once, forward in time,
    # in the compute process (the stages after its channel's receiving end).
    waits = collections.defaultdict(dict)
    for e in events:
        if e["ph"] in ("b", "e"):
            assert e["cat"] == "queue" and e["name"].endswith(" queue"), e
            assert e["ph"] not in waits[(e["pid"], e["id"])], f"a wait begun or ended twice: {e}"
            waits[(e["pid"], e["id"])][e["ph"]] = e["ts"]
    assert waits, "no queue waits"
    for key, ends in waits.items():
        assert set(ends) == {"b", "e"} and ends["e"] - ends["b"] >= 0.999, (key, ends)
    assert "compute" in {processes[pid] for pid, _ in waits}, "no waits in the compute process"

    flows = collections.defaultdict(list)
    for e in events:
        if "bind_id" in e:  # a slice carrying its message's flow (flow events v2)
            assert e["ph"] == "X" and (e.get("flow_in") or e.get("flow_out")), e
            ph = "t" if e.get("flow_in") and e.get("flow_out") else "s" if e.get("flow_out") else "f"
            flows[e["bind_id"]].append((ph, e["ts"], processes[e["pid"]]))
    complete = 0
    for fid, points in flows.items():
        starts = [p for p in points if p[0] == "s"]
        assert len(starts) == 1 and starts[0][2] == "source", f"flow {fid}: {points}"
        assert all(starts[0][1] <= p[1] for p in points), f"flow {fid}: a step before its start: {points}"
        ends = [p for p in points if p[0] == "f"]
        if ends:
            assert [p[2] for p in ends] == ["sink"], f"flow {fid}: {points}"
            assert {p[2] for p in points} == {"source", "compute", "sink"}, f"flow {fid}: {points}"
            complete += 1
    assert complete == by_node[("sink", "monitor")], (complete, by_node[("sink", "monitor")])

    # The parts as a launcher's ranks leave them, merged by hand.
    parts = []
    for process in ["source", "compute", "sink"]:
        part = os.path.join(tmp, f"{process}.json")
        json.dump({"traceEvents": [e for e in events if processes[e["pid"]] == process],
                   "otherData": {"process": process, "host": merged[0]["host"], "clock_monotonic_ns": 1,
                                 "clock_realtime_ns": 2}}, open(part, "w"))
        parts.append(part)
    again = os.path.join(tmp, "again.json")
    merge = subprocess.run([sluice, "trace", "merge", again] + parts, capture_output=True, text=True, timeout=60)
    assert merge.returncode == 0, merge.stderr
    assert merge.stdout.count("moved by 0.000 ms") == 3, merge.stdout
    assert len(json.load(open(again))["traceEvents"]) == len(events)
    bad = subprocess.run([sluice, "trace", "merge", again, os.path.join(tmp, "missing.json")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "cannot read" in bad.stderr, (bad.returncode, bad.stderr)
print(f"sluice demo --trace: {len(slices)} slices on {len(threads)} threads of 3 processes, "
      f"{complete} messages followed from source to sink")
