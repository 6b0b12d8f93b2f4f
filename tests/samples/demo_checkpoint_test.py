"""sluice demo --checkpoint-dir: the compute process killed with SIGKILL ten
times mid-stream and started again by the demo's parent resumes from its
checkpoints. Against a run without faults of the same seed and chunks: the
final accumulators (the last checkpoint's .npy files) are bit-identical, and
the monitor counted every window exactly once (the same summary figures).

usage: demo_checkpoint_test.py SLUICE"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from demo_roles import compute_pid

sluice = sys.argv[1]
KILLS = 10
COMMON = ["demo", "--channels", "4", "--seed", "11", "--chunks", "8000"]
DEADLINE = 240  # seconds for the whole test


def newest_checkpoint(directory):
    names = sorted(n for n in os.listdir(directory) if re.fullmatch(r"chk-\d{8}", n))
    return os.path.join(directory, names[-1]) if names else None


def accumulators(directory):
    """The newest checkpoint's accumulators: {stage: [arrays]}, read with numpy alone."""
    chk = newest_checkpoint(directory)
    manifest = json.load(open(os.path.join(chk, "manifest.json")))
    return {s["name"]: [np.load(os.path.join(chk, t["file"])) for t in s["tensors"]] for s in manifest["stages"]}


def summary(out):
    """The figures the monitor counted, without the timings."""
    lines = [l for l in out.splitlines()
             if " | " not in l and l.strip().startswith(("windows", "accuracy, whole run", "second half"))]
    return [re.sub(r"\(.* s of signal.*\)", "", l).strip() for l in lines]


start = time.monotonic()
with tempfile.TemporaryDirectory() as tmp:
    clean_dir, faulty_dir = os.path.join(tmp, "clean"), os.path.join(tmp, "faulty")
    clean = subprocess.run([sluice, *COMMON, "--checkpoint-dir", clean_dir], capture_output=True, text=True,
                           timeout=DEADLINE)
    assert clean.returncode == 0, f"the run without faults exited {clean.returncode}:\n{clean.stdout}\n{clean.stderr}"

    demo = subprocess.Popen([sluice, *COMMON, "--checkpoint-dir", faulty_dir], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    kills = 0
    killed = set()
    before = None  # the newest checkpoint once the last killed process was gone
    while kills < KILLS:
        assert time.monotonic() - start < DEADLINE, f"only {kills} kills before the deadline"
        assert demo.poll() is None, f"the demo ended after {kills} kills:\n{demo.communicate()[1]}"
        pid = compute_pid(demo.pid)
        chk = newest_checkpoint(faulty_dir) if os.path.isdir(faulty_dir) else None
        # Each kill comes mid-stream, in a compute process not killed before,
        # once that process has stored a checkpoint of its own (so it has
        # resumed from the one before): a checkpoint newer than the newest
        # there was when the process before it was gone.
        if pid is None or pid in killed or chk is None or (before is not None and chk <= before):
            time.sleep(0.02)
            continue
        time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        killed.add(pid)
        kills += 1
        while compute_pid(demo.pid) == pid:  # until the parent has reaped it
            assert time.monotonic() - start < DEADLINE, f"compute {pid} still there after SIGKILL"
            time.sleep(0.01)
        before = newest_checkpoint(faulty_dir)
    out, err = demo.communicate(timeout=DEADLINE)
    assert demo.returncode == 0, f"the demo with {KILLS} kills exited {demo.returncode}:\n{out}\n{err}"
    assert f"compute exited 0 (restarted {KILLS} times)" in out, out
    assert err.count("resuming from checkpoint") == KILLS, err

    want, got = accumulators(clean_dir), accumulators(faulty_dir)
    assert want.keys() == got.keys() == {"spectrum", "detector"}, (want.keys(), got.keys())
    for stage in want:
        for i, (a, b) in enumerate(zip(want[stage], got[stage])):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), \
                f"{stage} accumulator {i} differs after {KILLS} kills"
    assert summary(clean.stdout) == summary(out), f"\n{summary(clean.stdout)}\n{summary(out)}"
    windows = int(summary(out)[0].split()[1].replace(",", ""))
    assert windows == 8000 * 16, f"expected {8000 * 16} windows counted once each, found {windows}"
print(f"ok: {KILLS} SIGKILLs of the compute process; accumulators bit-identical, {windows} windows each counted once")
