"""sluice send -> sluice cat over ipc: cat prints one line per message with
each tensor's spec, min, max and mean, which must match numpy's."""
import os
import subprocess
import sys
import tempfile

import numpy as np

sluice = sys.argv[1]
rng = np.random.default_rng(3)
arrays = [
    ("f32[3][4]", rng.standard_normal((3, 4)).astype(np.float32)),
    ("s64[5]", np.array([7, -2, 40, 0, 3], dtype=np.int64)),
    ("u8[2][2][2]", np.arange(8, dtype=np.uint8)),
    ("c64[3]", np.array([3 + 4j, 1j, -2], dtype=np.complex64)),  # statistics of magnitudes
]
arrays[2] = (arrays[2][0], arrays[2][1].reshape(2, 2, 2))

with tempfile.TemporaryDirectory() as tmp:
    files = []
    for i, (_, a) in enumerate(arrays):
        files.append(os.path.join(tmp, f"{i}.npy"))
        np.save(files[-1], a)
    endpoint = f"ipc://{tmp}/cat"
    cat = subprocess.Popen([sluice, "cat", endpoint, "--timeout", "30"], stdout=subprocess.PIPE, text=True)
    send = subprocess.run([sluice, "send", endpoint, *files], capture_output=True, text=True, timeout=30)
    out, _ = cat.communicate(timeout=30)

assert send.returncode == 0, f"sluice send failed ({send.returncode}): {send.stderr}"
assert cat.returncode == 0, f"sluice cat exited {cat.returncode}, printed:\n{out}"
lines = out.splitlines()
assert len(lines) == len(arrays) + 1, f"expected {len(arrays)} data lines and end of stream, found:\n{out}"
for seq, ((spec, a), line) in enumerate(zip(arrays, lines)):
    head, stats = line.split(": ", 1)
    assert head == f"stream 0 seq {seq}", f"line {seq}: expected 'stream 0 seq {seq}', found '{head}'"
    words = stats.split()
    assert words[0] == spec, f"line {seq}: expected spec {spec}, found {words[0]}"
    found = dict(zip(words[1::2], map(float, words[2::2])))
    v = np.abs(a) if np.iscomplexobj(a) else a
    for name, want in (("min", v.min()), ("max", v.max()), ("mean", v.mean())):
        # cat prints 6 significant digits.
        assert np.isclose(found[name], want, rtol=1e-5, atol=1e-6), \
            f"line {seq} ({spec}): {name} expected {want}, found {found[name]}"
assert lines[-1] == f"stream 0 seq {len(arrays)}: end of stream", f"last line: {lines[-1]}"

# Tags given to send travel with every message, and cat prints them after its tensors.
with tempfile.TemporaryDirectory() as tmp:
    np.save(os.path.join(tmp, "a.npy"), np.arange(4.0))
    endpoint = f"ipc://{tmp}/tags"
    cat = subprocess.Popen([sluice, "cat", endpoint, "--timeout", "30"], stdout=subprocess.PIPE, text=True)
    send = subprocess.run([sluice, "send", endpoint, os.path.join(tmp, "a.npy"), "--tag", "time_ns=1700000000",
                           "--tag", "source=pump 3", "--tag", "gain=2.5", "--tag", "knock@2=1"],
                          capture_output=True, text=True, timeout=30)
    out, _ = cat.communicate(timeout=30)
    bad = subprocess.run([sluice, "send", f"ipc://{tmp}/nobody", os.path.join(tmp, "a.npy"), "--tag", "no-value"],
                         capture_output=True, text=True, timeout=30)
assert send.returncode == 0, f"sluice send --tag failed ({send.returncode}): {send.stderr}"
first = out.splitlines()[0]
assert first.endswith("; tags time_ns=1700000000 source=pump 3 gain=2.5 knock@2=1"), f"cat printed: {first}"
assert bad.returncode != 0 and "expected KEY=VALUE or KEY@ROW=VALUE, found 'no-value'" in bad.stderr, bad.stderr

# Nobody listening: send says how many messages were not delivered and fails.
with tempfile.TemporaryDirectory() as tmp:
    np.save(os.path.join(tmp, "a.npy"), np.arange(3.0))
    lost = subprocess.run([sluice, "send", "--timeout", "1", f"ipc://{tmp}/nobody", os.path.join(tmp, "a.npy")],
                          capture_output=True, text=True, timeout=30)
assert lost.returncode == 1, f"sluice send to nobody exited {lost.returncode}: {lost.stderr}"
assert "2 message(s) not delivered" in lost.stderr, f"expected the count of what was lost, found: {lost.stderr}"

# More files than the sender's credit (1,000) to nobody: those it never
# sent are not delivered either (the count once named only the 1,001 it held).
with tempfile.TemporaryDirectory() as tmp:
    many = []
    for i in range(1200):
        many.append(os.path.join(tmp, f"{i}.npy"))
        np.save(many[-1], np.array([i], dtype=np.int32))
    lost = subprocess.run([sluice, "send", "--timeout", "1", f"ipc://{tmp}/nobody", *many],
                          capture_output=True, text=True, timeout=60)
assert lost.returncode == 1, f"sluice send of 1200 files to nobody exited {lost.returncode}: {lost.stderr}"
assert "1200 of 1200 file(s) not delivered: 1000 sent and not acknowledged, 200 never sent" in lost.stderr, \
    f"expected every file counted, found: {lost.stderr}"
print("ok:", len(arrays), "messages; a send to nobody fails naming 2 messages not delivered, "
      "and 1200 files of which 200 never went")
