"""online_mlp_test.py ONLINE_MLP: the sample trained on .npy files a user would have, made here
with numpy (two interleaved spirals in 2-D, 3 classes, a problem a linear model cannot learn);
passes when it exits 0 having reached the accuracy asked for, and a bad file is refused with
status 1 and a message naming it."""
import os
import subprocess
import sys
import tempfile

import numpy as np

program = sys.argv[1]
rng = np.random.default_rng(3)
n, classes = 1536, 3
t = rng.uniform(0.1, 1.0, n)
y = rng.integers(0, classes, n)
angle = 4.0 * t + y * (2 * np.pi / classes)
x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) + rng.normal(0, 0.02, (n, 2))
with tempfile.TemporaryDirectory() as tmp:
    features, labels = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(features, x.astype(np.float32))
    np.save(labels, y.astype(np.int32))
    run = subprocess.run([program, "--features", features, "--labels", labels, "--classes", "3", "--epochs", "40",
                          "--rate", "0.01", "--min-accuracy", "0.9"], capture_output=True, text=True, timeout=240)
    print(run.stdout, run.stderr)
    if run.returncode != 0:
        sys.exit(f"online_mlp exited {run.returncode} on the spirals")
    np.save(labels, y[:-1].astype(np.int32))
    bad = subprocess.run([program, "--features", features, "--labels", labels], capture_output=True, text=True,
                         timeout=60)
    if bad.returncode != 1 or labels not in bad.stderr:
        sys.exit(f"labels of the wrong length: expected status 1 naming {labels}, found {bad.returncode}: {bad.stderr}")
print("online_mlp learned the spirals from .npy files and refused a mismatched label file")
