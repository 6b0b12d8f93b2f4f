"""Runs samples/serving as its comment says: the C++ server of a compiled
model, batched, and the Python client with 32 threads checking every reply
against numpy, over ipc in a fresh directory. Passes when both exit 0 and
the server answered every request (and printed its per-request figures)."""
import os
import subprocess
import sys
import tempfile

server, samples = sys.argv[1], sys.argv[2]
threads, each = 32, 50
with tempfile.TemporaryDirectory() as tmp:
    endpoint = f"ipc://{tmp}/serving"
    srv = subprocess.Popen([server, endpoint, str(threads * each)], stdout=subprocess.PIPE, text=True)
    try:
        client = subprocess.run([sys.executable, os.path.join(samples, "client.py"), endpoint, str(threads), str(each)],
                                timeout=120)
        out, _ = srv.communicate(timeout=30)
    finally:
        if srv.poll() is None:
            srv.kill()
print(out)
if client.returncode != 0:
    sys.exit(f"serving: the client exited {client.returncode}")
if srv.returncode != 0:
    sys.exit(f"serving: the server exited {srv.returncode}")
expected = f"{threads * each} requests, {threads * each} replies, 0 errors"
if expected not in out or "latency       p50" not in out:
    sys.exit(f"serving: expected '{expected}' and the latency figures from the server")
print("serving: every request answered, every reply matches numpy")
