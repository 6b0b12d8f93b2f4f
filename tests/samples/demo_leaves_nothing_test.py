"""The three-process demo leaves nothing behind however it ends: its
processes meet on abstract ipc sockets (no files), so a parent killed
with SIGKILL (its children then stop, told by the kernel) or a rank killed
under mpirun leaves no /tmp/sluice-demo-* and no process. Both once left
their socket directory in /tmp.

usage: demo_leaves_nothing_test.py SLUICE"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sluice = sys.argv[1]
ARGS = ["demo", "--seconds", "60", "--channels", "2"]
failures = []


def children_of(parent):
    """Pids whose parent is `parent`."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            out.append(int(pid))
    return out


def alive(pid):
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def expect(case, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + case + ("" if condition else ": " + detail))
    if not condition:
        failures.append(case)


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, TMPDIR=tmp)  # where a temporary directory would go
    before = set(glob.glob("/tmp/sluice-demo-*"))

    # The parent, killed once its three processes run and data flows.
    parent = subprocess.Popen([sluice, *ARGS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert wait_for(lambda: len(children_of(parent.pid)) == 3, 30), "the demo did not start its three processes"
    kids = children_of(parent.pid)
    time.sleep(1.0)
    parent.kill()
    parent.wait()
    expect("the parent's processes end after it is killed", wait_for(lambda: not any(alive(k) for k in kids), 20),
           f"still running: {[k for k in kids if alive(k)]}")
    expect("a killed parent leaves no /tmp/sluice-demo-*", set(glob.glob("/tmp/sluice-demo-*")) == before,
           str(set(glob.glob("/tmp/sluice-demo-*")) - before))
    expect("nor anything in TMPDIR", os.listdir(tmp) == [], str(os.listdir(tmp)))

    mpirun = shutil.which("mpirun")
    if mpirun:
        as_root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        launcher = subprocess.Popen([mpirun, *as_root, "--oversubscribe", "-np", "3", sluice, *ARGS],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

        def ranks():
            # The launcher's descendants only: another test may run a demo
            # of the same program at the same time.
            out, todo = [], [launcher.pid]
            while todo:
                for pid in children_of(todo.pop()):
                    todo.append(pid)
                    try:
                        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                    except OSError:
                        continue
                    if cmd and cmd[0] == sluice.encode() and b"demo" in cmd and alive(pid):
                        out.append(pid)
            return out

        started = wait_for(lambda: len(ranks()) == 3, 30)
        expect("mpirun starts three ranks", started, str(ranks()))
        if started:
            started_ranks = ranks()  # recorded: once the launcher ends, survivors are no longer its descendants
            time.sleep(1.0)
            os.kill(started_ranks[0], signal.SIGKILL)
            try:
                status = launcher.wait(timeout=60)
            except subprocess.TimeoutExpired:
                launcher.kill()
                status = None
            expect("a rank killed: mpirun ends non-zero within 60 s", status not in (None, 0), str(status))
            expect("and every rank ends", wait_for(lambda: not any(alive(r) for r in started_ranks), 20),
                   str([r for r in started_ranks if alive(r)]))
            expect("a killed rank leaves no /tmp/sluice-demo-*", set(glob.glob("/tmp/sluice-demo-*")) == before,
                   str(set(glob.glob("/tmp/sluice-demo-*")) - before))
        else:
            launcher.kill()
            launcher.wait()
    else:
        print("skip mpirun: not installed")

if failures:
    print(f"FAIL: {len(failures)} case(s)")
    sys.exit(1)
print("the demo leaves nothing behind")
