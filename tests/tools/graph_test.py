"""graph_test.py SLUICE: `sluice graph` draws the demo's pipeline. The DOT
text holds each process's box with its nodes and each edge with the specs
the sensor monitor's defaults give; Graphviz (`dot`, scripts/install-deps
--tests) renders it to an SVG of 6 nodes, 5 edges and 3 boxes; the Mermaid
text is the same graph. Exits 77 (skipped) only where there is no dot."""
import re
import shutil
import subprocess
import sys

sluice = sys.argv[1]
dot = subprocess.run([sluice, "graph"], capture_output=True, text=True, timeout=60)
assert dot.returncode == 0, dot.stderr
text = dot.stdout

boxes = dict(re.findall(r'subgraph cluster_\d+ \{\s*label="process (\w+)";(.*?)\n  \}', text, re.S))
assert set(boxes) == {"source", "compute", "sink"}, f"process boxes: {sorted(boxes)}\n{text}"
names = {process: re.findall(r'label="\w+\\n(\w+)"', body) for process, body in boxes.items()}
assert names == {"source": ["vibration", "tachometer"], "compute": ["spectrum", "detector"],
                 "sink": ["joined", "monitor"]}, names

nodes = dict((name, number) for number, name in re.findall(r'n(\d+) \[label="\w+\\n(\w+)"\]', text))
edges = {(a, b): label for a, b, label in re.findall(r'n(\d+) -> n(\d+) \[label="([^"]*)"\]', text)}
want = {("vibration", "spectrum"): "f32[16][8][1024], f32[16], s64",
        ("spectrum", "detector"): "f32[16][256], f32[16], s64",
        ("detector", "joined"): "f32[16], f32[16], s64",
        ("tachometer", "joined"): "f32[256]",
        ("joined", "monitor"): "f32[16], f32[16], s64, f32[16], pred[16]"}
assert edges == {(nodes[a], nodes[b]): label for (a, b), label in want.items()}, f"edges: {edges}\n{text}"

mermaid = subprocess.run([sluice, "graph", "--format", "mermaid"], capture_output=True, text=True, timeout=60)
assert mermaid.returncode == 0, mermaid.stderr
assert mermaid.stdout.startswith("flowchart LR\n"), mermaid.stdout
arrows = re.findall(r'n(\d+) -->\|"([^"]*)"\| n(\d+)', mermaid.stdout)
assert {(a, b): label for a, label, b in arrows} == edges, mermaid.stdout
print("sluice graph: 3 process boxes, 6 nodes, 5 edges with their specs, in DOT and in Mermaid")

if shutil.which("dot") is None:
    print("no Graphviz dot (Debian graphviz): the rendering is not checked")
    sys.exit(77)
svg = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
assert svg.returncode == 0 and not svg.stderr.strip(), f"dot refused the text: {svg.stderr}\n{text}"
counts = {kind: len(re.findall(rf'<g id="\w+" class="{kind}">', svg.stdout)) for kind in ("node", "edge", "cluster")}
assert counts == {"node": 6, "edge": 5, "cluster": 3}, counts
print("dot -Tsvg rendered it:", counts)
