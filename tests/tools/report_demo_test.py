#!/usr/bin/python3
"""`sluice report` of a short demo run, opened in headless Chromium.

Runs the three-process demo with --run-log and --trace, draws both with
`sluice report`, checks the page (the pipeline's graph, every chart an <svg>
with data drawn, the trace's timeline with its rows, slices and flows, no script,
nothing fetched), then has Chromium render it to a screenshot: the console
must stay silent and the picture must show charts (pixels neither white
nor grey). The screenshot is kept as report.png in the working directory.
Skips (77) where Chromium is missing (scripts/install-deps installs it for
`make test`).

    report_demo_test.py PATH_TO_SLUICE
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_pixels import count_pixels  # noqa: E402

CHARTS = ["Throughput", "Latency p50", "Latency p99", "Queue depth", "Spectrogram of channel 0",
          "Scores against the true faults", "Accuracy over time", "Timeline"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, timeout):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        fail(f"{' '.join(args)} exited {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def check_page(html):
    if re.search(r"<script|javascript:", html, re.I):
        fail("the page has a script")
    # The SVG namespace is a name, not a fetch; any other address would be one.
    for address in re.findall(r"(?:https?:|//)[^\"' )>]+", html):
        if address != "http://www.w3.org/2000/svg":
            fail(f"the page refers to {address}: it must need no network")
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    titles = [re.search(r'aria-label="([^"]*)"', s).group(1) for s in svgs]
    # First the pipeline's graph: the three processes' seven nodes (the
    # run log adds the spectrogram's sink; the tachometer and the join by
    # time are the second sensor group's) and their six edges.
    if not titles or titles[0] != "The pipeline":
        fail(f"expected the pipeline's graph first, found {titles[:1]}")
    graph, svgs, titles = svgs[0], svgs[1:], titles[1:]
    counts = [len(re.findall(rf'<g class="{kind}">', graph)) for kind in ("node", "edge", "process")]
    if counts != [7, 6, 3] or "f32[16][4][1024]" not in graph:
        fail(f"the graph: expected 7 nodes, 6 edges and 3 processes with their specs, found {counts}")
    if titles != CHARTS:
        fail(f"expected the charts {CHARTS}, found {titles}")
    for title, svg in zip(titles, svgs):
        if title == "Timeline":
            # A row per thread of the three processes, slices of the five
            # nodes and the channel ends between them, messages followed.
            rows = re.findall(r'<text class="label"[^>]*>([^<]*)</text>', svg)
            slices = len(re.findall(r"<rect x=", svg))
            flows = len(re.findall(r'<polyline class="flow"', svg))
            if {r.split(",")[0] for r in rows} != {"source", "compute", "sink"} or slices < 20 or flows < 1:
                fail(f"the timeline: rows {rows}, {slices} slices, {flows} flows")
            continue
        drawn = re.findall(r'<path class="(?:series|cells)"[^>]* d="([^"]+)"', svg)
        # A line of data has at least two points: its M and one more command.
        if not drawn or not any(len(re.findall(r"[LHVh]", d)) >= 1 for d in drawn):
            fail(f"chart '{title}' has no data drawn")
        if "no data" in svg:
            fail(f"chart '{title}' says it has no data")
    print(f"page: {len(html) // 1024} KiB, {len(svgs)} charts with data: {', '.join(titles)}")


def screenshot(chromium, html_path, png_path, work):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={os.path.join(work, 'chromium-profile')}", f"--screenshot={png_path}",
            "--window-size=1200,4000", "--enable-logging=stderr", "--v=0", "file://" + html_path]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not os.path.exists(png_path):
        fail(f"chromium exited {p.returncode} without a screenshot:\n{p.stderr[-3000:]}")
    # The page has no script: any console message is the page failing
    # (a resource it could not load, a parse error).
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    if console:
        fail("chromium's console:\n" + "\n".join(console))
    pixels, non_white, colored = count_pixels(png_path)
    print(f"screenshot: {pixels} pixels, {non_white} not white, {colored} in color")
    if non_white < pixels // 50:
        fail("the screenshot is blank")
    # Lines and the spectrogram are in color; text and axes are not.
    if colored < pixels // 100:
        fail(f"the screenshot shows too little of the charts: {colored} colored pixels")


def main():
    sluice = os.path.abspath(sys.argv[1])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory(prefix="sluice-report-") as work:
        log = os.path.join(work, "run.jsonl")
        trace = os.path.join(work, "run-trace.json")
        demo = run([sluice, "demo", "--seconds", "3", "--channels", "4", "--seed", "7", "--run-log", log,
                    "--trace", trace], timeout=150)
        if "processes: sink exited 0 compute exited 0 source exited 0" not in demo.stdout:
            fail("the demo's processes did not all exit 0:\n" + demo.stdout[-2000:])
        html_path = os.path.join(work, "report.html")
        run([sluice, "report", log, "--trace", trace, "-o", html_path], timeout=60)
        with open(html_path, encoding="utf-8") as f:
            check_page(f.read())
        if not chromium:
            print("SKIP: no chromium (scripts/install-deps installs it for make test)")
            sys.exit(77)
        png_path = os.path.join(os.getcwd(), "report.png")
        screenshot(chromium, html_path, png_path, work)
    print("sluice report: the demo's run drawn, rendered by chromium with its charts; kept " + png_path)


if __name__ == "__main__":
    main()
