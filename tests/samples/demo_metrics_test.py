#!/usr/bin/python3
"""`sluice demo --metrics-port N`: each of the three processes serves its
metrics on N plus its rank (source N, compute N+1, sink N+2) while the demo
runs. Scrapes each once its messages flow, parses the text with
prometheus_client's parser, and checks each process's nodes and the
channels' figures; the demo must still end with the detector learned.

    demo_metrics_test.py PATH_TO_SLUICE
"""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def free_base_port():
    """A port N with N, N+1 and N+2 free now."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + 2 > 65535:
            continue
        try:
            held = []
            for port in (base, base + 1, base + 2):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no three free ports in a row")


def scrape(port):
    """The families served on `port`, or None while nothing answers there."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return {f.name: f for f in text_string_to_metric_families(r.read().decode())}
    except (urllib.error.URLError, ConnectionError):
        return None


EXPECTED = {
    "source": ({"vibration"}, "channel_credit"),
    "compute": ({"spectrum", "detector"}, "channel_duplicates"),
    "sink": ({"monitor"}, "channel_in_pipeline"),
}


def main():
    base = free_base_port()
    demo = subprocess.Popen([sys.argv[1], "demo", "--seconds", "4", "--channels", "4",
                             "--metrics-port", str(base)], stdout=subprocess.PIPE, text=True)
    try:
        checked = set()
        deadline = time.monotonic() + 120
        while len(checked) < 3 and demo.poll() is None and time.monotonic() < deadline:
            for rank, process in enumerate(["source", "compute", "sink"]):
                if process in checked:
                    continue
                fams = scrape(base + rank)
                if fams is None:
                    continue
                nodes, figure = EXPECTED[process]
                out = {s.labels["node"]: s.value for s in fams["sluice_node_messages"].samples
                       if s.labels["direction"] == "out"}
                assert all(s.labels["pipeline"] == process for s in fams["sluice_node_messages"].samples), process
                assert nodes <= set(out), (process, out)
                if min(out[n] for n in nodes) == 0:
                    continue  # compiling, or not yet reached: look again
                figures = {s.labels["name"] for s in fams["sluice_node_figure"].samples}
                assert figure in figures, (process, figures)
                checked.add(process)
                print(f"demo_metrics_test: {process} on port {base + rank}: {out}")
            time.sleep(0.2)
        assert checked == {"source", "compute", "sink"}, f"scraped only {sorted(checked)} while the demo ran"
        output, _ = demo.communicate(timeout=180)
        assert demo.returncode == 0, f"the demo failed:\n{output}"
        assert "the detector learned" in output, output
    finally:
        if demo.poll() is None:
            demo.kill()
    print("demo_metrics_test: ok")


if __name__ == "__main__":
    main()
