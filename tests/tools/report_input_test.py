#!/usr/bin/python3
"""`sluice report` on logs written by hand: what a log without the demo's
records gives (the per-stage charts alone), and each kind of bad input
(a missing or empty file, garbage, a record missing a field, a torn last
line, an output that cannot be written), which must exit non-zero naming
the file and the line, except a torn last line: skipped with a warning.

    report_input_test.py PATH_TO_SLUICE
"""

import json
import os
import re
import subprocess
import sys
import tempfile


def metrics_line(t, process, messages):
    node = {"name": "square", "kind": "stage", "messages_in": messages, "messages_out": messages,
            "errors": 0, "queue_depth": 1, "latency_p50_us": 120.0, "latency_p99_us": 900.0,
            "messages_out_per_s": messages / max(t, 0.1)}
    return json.dumps({"t": 1.7e9 + t, "process": process, "type": "metrics", "nodes": [node]})


GOOD = "\n".join(metrics_line(t / 4, p, t * 10) for t in range(12) for p in ("a", "b")) + "\n"

failures = []


def report(sluice, work, content, name):
    """Runs sluice report on `content` (None: no such file); (status, stderr, page or None)."""
    log = os.path.join(work, name + ".jsonl")
    if content is not None:
        with open(log, "w") as f:
            f.write(content)
    out = os.path.join(work, name + ".html")
    p = subprocess.run([sluice, "report", log, "-o", out], capture_output=True, text=True, timeout=20)
    page = open(out).read() if os.path.exists(out) else None
    return p.returncode, p.stderr, page, log


def expect(case, condition, detail):
    print(("ok   " if condition else "FAIL ") + case + ("" if condition else ": " + detail))
    if not condition:
        failures.append(case)


def main():
    sluice = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="sluice-report-input-") as work:
        status, err, page, _ = report(sluice, work, GOOD, "stages_only")
        titles = re.findall(r'<svg[^>]*aria-label="([^"]*)"', page or "")
        expect("a log of metrics alone gives the per-stage charts alone", status == 0 and titles ==
               ["Throughput", "Latency p50", "Latency p99", "Queue depth"] and "a: square" in page
               and "b: square" in page and "Spectrogram" not in page, f"status {status}, charts {titles}, {err}")

        status, err, _, log = report(sluice, work, None, "missing")
        expect("a missing file is an error naming it", status == 1 and log in err and "cannot open" in err, err)

        status, err, _, _ = report(sluice, work, "", "empty")
        expect("an empty file is an error", status == 1 and "has no records" in err, err)

        lines = GOOD.splitlines()
        status, err, _, log = report(sluice, work, "\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n",
                                     "garbage")
        expect("garbage is an error naming its line", status == 1 and f"{log}:4: expected a JSON object" in err, err)

        status, err, _, log = report(sluice, work, GOOD + '{"t": 1.7e9, "type": "scores", "scores": [0.5]}\n',
                                     "missing_field")
        expect("a record without a field is an error naming it", status == 1 and f"{log}:25:" in err
               and "'labels'" in err, err)

        status, err, _, log = report(sluice, work, GOOD + '{"t": 1.7e9', "untyped")
        expect("a torn last line is skipped with a warning", status == 0 and "line 25" in err
               and "cut short" in err, f"status {status}: {err}")

        status, err, _, log = report(sluice, work, '{"t": 1.7e9, "type": "metrics", "nodes": []}\n' * 2 + "[1, 2]\n",
                                     "not_an_object")
        expect("a line that is JSON but not an object is an error", status == 1 and f"{log}:3:" in err, err)

        # Times no clock gives, but a log can hold: the axes' ticks must
        # still end (adding a step of 2e17 to 1e18 once changed nothing).
        for name, times in (("extreme_times", (-1e18, 0, 64, 128)), ("one_huge_time", (1e18, 1e18, 1e18, 1e18)),
                            ("beyond_double_steps", (1e18, 1e18 + 256, 1e18 + 512, 1e18 + 1024))):
            content = "".join(json.dumps({"t": t, "process": "a", "type": "metrics", "nodes": [
                {"name": "square", "kind": "stage", "messages_in": i, "messages_out": i, "errors": 0,
                 "queue_depth": 1, "latency_p50_us": 1.0, "latency_p99_us": 2.0, "messages_out_per_s": 1.0}]}) + "\n"
                for i, t in enumerate(times))
            try:
                status, err, page, _ = report(sluice, work, content, name)
                expect(f"times {times} give a page", status == 0 and page and "Throughput" in page,
                       f"status {status}: {err}")
            except subprocess.TimeoutExpired:
                expect(f"times {times} give a page", False, "sluice report ran past 20 s")
        # The probe's log: a first record at -1e18 and the detector's scores
        # at 0, 64 and 128, so that the scores' chart spans 1e18 to 1e18 + 128,
        # where a step of 20 added to 1e18 is 1e18 again.
        content = (json.dumps({"t": -1e18, "process": "a", "type": "metrics", "nodes": []}) + "\n" +
                   "".join(json.dumps({"t": t, "process": "a", "type": "scores", "scores": [0.25, 0.75],
                                       "labels": [0, 1], "accuracy": 0.5, "recent_accuracy": 0.5}) + "\n" for t in (0, 64, 128)))
        try:
            status, err, page, _ = report(sluice, work, content, "probe")
            expect("the probe's log gives a page", status == 0 and page is not None, f"status {status}: {err}")
        except subprocess.TimeoutExpired:
            expect("the probe's log gives a page", False, "sluice report ran past 20 s")

        # The pipeline's graph: the first record drawn (each process writes one), boxes per process.
        graph = {"t": 1.7e9, "process": "a", "type": "graph",
                 "nodes": [{"name": "rows", "kind": "source", "process": "a"},
                           {"name": "square", "kind": "stage", "process": "b"},
                           {"name": "keep", "kind": "sink", "process": "b"}],
                 "edges": [{"from": 0, "to": 1, "specs": "f32[8], s64"}, {"from": 1, "to": 2, "specs": "f32[8]"}]}
        status, err, page, _ = report(sluice, work, json.dumps(graph) + "\n" + json.dumps(dict(graph, process="b"))
                                      + "\n" + GOOD, "graph")
        picture = re.search(r'<svg[^>]*aria-label="The pipeline".*?</svg>', page or "", re.S)
        drawn = picture.group(0) if picture else ""
        expect("a graph record is drawn once, nodes, specs and a box per process",
               status == 0 and len(re.findall(r'<g class="node">', drawn)) == 3
               and len(re.findall(r'<g class="edge">', drawn)) == 2 and len(re.findall(r'<g class="process">', drawn)) == 2
               and all(name in drawn for name in ("rows", "square", "keep", "f32[8]", "s64", "process a"))
               and page.count('aria-label="The pipeline"') == 1, f"status {status}: {err}\n{drawn[:500]}")
        bad = dict(graph, edges=[{"from": 0, "to": 3, "specs": "f32[8]"}])
        status, err, _, log = report(sluice, work, GOOD + json.dumps(bad) + "\n", "graph_bad_edge")
        expect("a graph edge to no node is an error naming its line", status == 1 and f"{log}:25:" in err
               and "edges between the 3 nodes" in err, err)

        # A trace written by hand: two processes, a thread each, one message.
        trace = {"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "a"}},
            {"name": "process_name", "ph": "M", "pid": 2, "tid": 0, "args": {"name": "b"}},
            {"name": "rows", "cat": "source", "ph": "X", "ts": 1000.0, "dur": 50.0, "pid": 1, "tid": 11,
             "bind_id": 0, "flow_out": True},
            {"name": "square", "cat": "stage", "ph": "X", "ts": 1100.0, "dur": 300.0, "pid": 2, "tid": 22,
             "bind_id": 0, "flow_in": True}]}
        trace_path = os.path.join(work, "trace.json")
        with open(trace_path, "w") as f:
            json.dump(trace, f)
        log = os.path.join(work, "stages_only.jsonl")
        out = os.path.join(work, "timeline.html")
        p = subprocess.run([sluice, "report", log, "--trace", trace_path, "-o", out], capture_output=True, text=True,
                           timeout=20)
        page = open(out).read() if os.path.exists(out) else ""
        timeline = re.search(r'<svg[^>]*aria-label="Timeline".*?</svg>', page, re.S)
        drawn = timeline.group(0) if timeline else ""
        expect("a trace gives a timeline: a row per thread, a slice per event, the message's flow",
               p.returncode == 0 and re.findall(r'<text class="label"[^>]*>([^<]*)</text>', drawn) ==
               ["a, thread 11", "b, thread 22"] and len(re.findall(r"<rect x=", drawn)) == 2
               and drawn.count('<polyline class="flow"') == 1 and "2 slices, 1 message)" in page,
               f"status {p.returncode}: {p.stderr}\n{drawn[:600]}")
        with open(os.path.join(work, "not_a_trace.json"), "w") as f:
            f.write('{"events": []}')
        p = subprocess.run([sluice, "report", log, "--trace", os.path.join(work, "not_a_trace.json"), "-o", out],
                           capture_output=True, text=True, timeout=20)
        expect("a file that is no trace is an error naming it", p.returncode == 1 and "not_a_trace.json" in p.stderr
               and "no traceEvents" in p.stderr, p.stderr)

        p = subprocess.run([sluice, "report", log, "-o", os.path.join(work, "no", "such", "dir.html")],
                           capture_output=True, text=True, timeout=60)
        expect("an output that cannot be written is an error", p.returncode == 1 and "cannot create" in p.stderr,
               p.stderr)
    if failures:
        print(f"FAIL: {len(failures)} case(s)")
        sys.exit(1)
    print("sluice report: every input case as expected")


if __name__ == "__main__":
    main()
