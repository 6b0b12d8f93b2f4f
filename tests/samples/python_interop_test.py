"""Runs samples/python_interop as its comment says: the Python consumer, the
C++ stage and the Python producer, over ipc in a fresh directory. Passes when
all three exit 0 (the consumer checks every result against numpy)."""
import os
import subprocess
import sys
import tempfile
import time

stage, samples = sys.argv[1], sys.argv[2]
n = 50
with tempfile.TemporaryDirectory() as tmp:
    chunks, spectra = f"ipc://{tmp}/chunks", f"ipc://{tmp}/spectra"
    python = sys.executable
    procs = [
        ("consumer.py", subprocess.Popen([python, os.path.join(samples, "consumer.py"), spectra, str(n)])),
        ("python_interop", subprocess.Popen([stage, chunks, spectra])),
        ("producer.py", subprocess.Popen([python, os.path.join(samples, "producer.py"), chunks, str(n)])),
    ]
    # Wait for all three; a failed one would leave its peers waiting, so end them then.
    deadline = time.monotonic() + 90
    failed = []
    while any(p.poll() is None for _, p in procs) and not failed and time.monotonic() < deadline:
        failed = [f"{name} exited {p.returncode}" for name, p in procs if p.poll() not in (None, 0)]
        time.sleep(0.05)
    for name, p in procs:
        if p.poll() is None:
            p.kill()
            failed.append(f"{name} stopped" + ("" if failed else " (timed out)"))
        elif p.returncode != 0 and f"{name} exited {p.returncode}" not in failed:
            failed.append(f"{name} exited {p.returncode}")
if failed:
    sys.exit("python_interop: " + ", ".join(failed))
print("python_interop: consumer, stage and producer exited 0")
