#!/usr/bin/python3
"""Scrapes the metrics of metrics_peer's two running pipelines and parses them
as Prometheus does (prometheus_client's parser of the text format 0.0.4):
every family typed, histogram buckets cumulative with +Inf equal to the
count, counters growing between scrapes, label values (a node name with a
quote and a backslash) read back as written, the channels' figures, the
checkpoint families, and the JSON snapshot's windowed rates.

    metrics_scrape_test.py PATH_TO_METRICS_PEER
"""

import json
import math
import subprocess
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

SQUARE = 'square "x"\\y'


def fetch(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def families(port):
    content_type, text = fetch(port, "/metrics")
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams, family, sample_name, **labels):
    for s in fams[family].samples:
        if s.name == sample_name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError(f"no sample {sample_name} {labels} in {family}")


def check_histograms(fams):
    hist = fams["sluice_node_latency_seconds"]
    assert hist.type == "histogram", hist.type
    by_node = {}
    for s in hist.samples:
        by_node.setdefault(s.labels["node"], []).append(s)
    assert by_node, "no latency samples"
    for node, samples in by_node.items():
        buckets = [(float(s.labels["le"]), s.value) for s in samples if s.name.endswith("_bucket")]
        count = [s.value for s in samples if s.name.endswith("_count")]
        total = [s.value for s in samples if s.name.endswith("_sum")]
        assert len(count) == 1 and len(total) == 1, (node, samples)
        les = [le for le, _ in buckets]
        assert les == sorted(les) and les[-1] == math.inf, (node, les)
        values = [v for _, v in buckets]
        assert all(a <= b for a, b in zip(values, values[1:])), f"{node}: buckets not cumulative: {values}"
        assert values[-1] == count[0], f"{node}: +Inf bucket {values[-1]} != count {count[0]}"
        assert total[0] >= 0


def main():
    peer = subprocess.Popen([sys.argv[1], "3"], stdout=subprocess.PIPE, text=True)
    try:
        words = peer.stdout.readline().split()
        assert len(words) == 4 and words[0] == "producer" and words[2] == "consumer", words
        producer, consumer = int(words[1]), int(words[3])

        time.sleep(0.8)
        first = families(producer)
        time.sleep(0.8)
        second = families(producer)
        seen = families(consumer)

        expected = {
            "sluice_node_messages": "counter",
            "sluice_node_bytes": "counter",
            "sluice_node_errors": "counter",
            "sluice_node_skipped": "counter",
            "sluice_node_busy_seconds": "counter",
            "sluice_node_queue_depth": "gauge",
            "sluice_node_latency_seconds": "histogram",
            "sluice_node_figure": "gauge",
            "sluice_checkpoints_completed": "counter",
            "sluice_checkpoints_failed": "counter",
            "sluice_checkpoint_age_seconds": "gauge",
        }
        for name, kind in expected.items():
            assert name in second, f"no family {name} in {sorted(second)}"
            assert second[name].type == kind, (name, second[name].type)
        for fams in (first, second, seen):
            check_histograms(fams)

        # Labels as written, the escaped node name included.
        nodes = {(s.labels["pipeline"], s.labels["node"], s.labels["kind"])
                 for s in second["sluice_node_messages"].samples}
        assert nodes == {("producer", "numbers", "source"), ("producer", SQUARE, "stage"),
                         ("producer", "out", "sink")}, nodes

        out = dict(node=SQUARE, direction="out")
        a = value(first, "sluice_node_messages", "sluice_node_messages_total", **out)
        b = value(second, "sluice_node_messages", "sluice_node_messages_total", **out)
        assert 0 < a < b, (a, b)
        a = value(first, "sluice_node_busy_seconds", "sluice_node_busy_seconds_total", node=SQUARE)
        b = value(second, "sluice_node_busy_seconds", "sluice_node_busy_seconds_total", node=SQUARE)
        assert 0 < a <= b, (a, b)
        assert value(second, "sluice_checkpoints_completed", "sluice_checkpoints_completed_total") > 0

        # The channel between the pipelines, from both ends.
        sink_figures = {s.labels["name"] for s in second["sluice_node_figure"].samples if s.labels["node"] == "out"}
        assert {"channel_credit", "channel_unacknowledged", "channel_resent",
                "channel_peers_lost"} <= sink_figures, sink_figures
        source_figures = {s.labels["name"] for s in seen["sluice_node_figure"].samples if s.labels["node"] == "in"}
        assert {"channel_peers_lost", "channel_duplicates", "channel_in_pipeline"} <= source_figures, source_figures
        batch_figures = {s.labels["name"] for s in seen["sluice_node_figure"].samples if s.labels["node"] == "batch"}
        assert "batch_size_mean" in batch_figures, batch_figures

        content_type, text = fetch(consumer, "/metrics.json")
        assert content_type == "application/json", content_type
        drop = next(n for n in json.loads(text) if n["name"] == "drop")
        assert drop["messages_out_per_s"] > 0 and drop["rate_window_s"] > 0, drop

        assert peer.wait(timeout=60) == 0, "metrics_peer failed"
    finally:
        if peer.poll() is None:
            peer.kill()
    print("metrics_scrape_test: ok")


if __name__ == "__main__":
    main()
