"""sluice demo --checkpoint-dir with checkpoints damaged on disk before the
compute process is killed: a restore passes over damaged checkpoints to an
older one, and the source's sender must still hold everything after it.

- The two newest checkpoints damaged (a flipped byte in an accumulator
  .npy, a manifest cut in half), then SIGKILL: the demo resumes from the
  oldest one kept, exits 0, and the monitor counts every window once.
  (It once ended with 61,664 of 64,000 windows, exit 0, nothing said.)
- Every checkpoint kept damaged, then SIGKILL: nothing can cover what the
  sender forgot, so the demo exits non-zero and the compute process names
  the messages lost. (It once started from scratch, lost 2,256 windows and
  exited 0.)

The compute process is stopped (SIGSTOP) while its checkpoints are damaged,
so that it writes none in between. Every wait is bounded.

usage: demo_damaged_checkpoints_test.py SLUICE"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from demo_roles import compute_pid

sluice = sys.argv[1]
CHUNKS = 4000
COMMON = ["demo", "--channels", "4", "--seed", "5", "--chunks", str(CHUNKS)]
DEADLINE = 150  # seconds for each run


def checkpoints(directory):
    """The complete checkpoints there, oldest first."""
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if re.fullmatch(r"chk-\d{8}", n))


def flip_a_byte(chk):
    npy = sorted(n for n in os.listdir(chk) if n.endswith(".npy"))[0]
    path = os.path.join(chk, npy)
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 0x40
    open(path, "wb").write(bytes(data))


def cut_the_manifest(chk):
    path = os.path.join(chk, "manifest.json")
    text = open(path, "rb").read()
    open(path, "wb").write(text[: len(text) // 2])


def run_damaging(directory, damage):
    """Runs the demo; once its compute process has stored 4 checkpoints,
    stops it, damages what is kept with `damage(list)`, and kills it.
    Returns (status, stdout, stderr)."""
    start = time.monotonic()
    demo = subprocess.Popen([sluice, *COMMON, "--checkpoint-dir", directory], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        while True:
            assert time.monotonic() - start < DEADLINE, "the compute process stored no 4 checkpoints in time"
            assert demo.poll() is None, f"the demo ended before the damage:\n{demo.communicate()[1]}"
            kept = checkpoints(directory)
            pid = compute_pid(demo.pid)
            if pid is not None and kept and int(kept[-1][-8:]) >= 4:
                break
            time.sleep(0.02)
        os.kill(pid, signal.SIGSTOP)
        try:
            damage(checkpoints(directory))
        finally:
            # Killed whatever happened: a stopped process left behind would
            # hold the demo's pipes open, and communicate() with them.
            os.kill(pid, signal.SIGKILL)
        out, err = demo.communicate(timeout=DEADLINE)
        return demo.returncode, out, err
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate(timeout=60)


def windows_counted(out):
    for line in out.splitlines():  # the summary's line, not the progress lines ("windows N | ...")
        if line.strip().startswith("windows") and " | " not in line:
            return int(line.split()[1].replace(",", ""))
    return None


with tempfile.TemporaryDirectory() as tmp:
    # The store keeps 3; a fourth may still be there when the process is
    # stopped between writing the newest and removing the oldest.
    def two_newest(kept):
        assert len(kept) >= 3, kept
        flip_a_byte(kept[-1])
        cut_the_manifest(kept[-2])

    status, out, err = run_damaging(os.path.join(tmp, "two"), two_newest)
    assert status == 0, f"two newest damaged: the demo exited {status}:\n{out}\n{err}"
    assert "resuming from checkpoint" in err, err
    windows = windows_counted(out)
    assert windows == CHUNKS * 16, f"two newest damaged: expected {CHUNKS * 16} windows counted once, found {windows}"
    print(f"ok: the two newest checkpoints damaged, then a kill: exit 0, {windows} windows each counted once")

    def all_kept(kept):
        assert len(kept) >= 3, kept
        for chk in kept:
            flip_a_byte(chk)

    status, out, err = run_damaging(os.path.join(tmp, "all"), all_kept)
    assert status != 0, f"every checkpoint damaged: the demo exited 0 having lost data:\n{out}\n{err}"
    lost = re.search(r"(\d+) message\(s\) lost \(seq 0\.\.(\d+)\)", err)
    assert lost and int(lost.group(1)) == int(lost.group(2)) + 1, f"the loss is not named:\n{err}"
    print(f"ok: every checkpoint damaged, then a kill: exit {status}, naming {lost.group(1)} messages lost")
