"""The Python samples beside their C++ versions give the same results:
online_mlp.py against samples/online_mlp's program, on the same files and
the same initial weights, batch by batch; the sensor monitor's stages.py
against stages.cpp, on the same vibration, chunk by chunk."""
import os
import re
import subprocess
import sys

import numpy as np

SOURCE = os.environ["SLUICE_SOURCE_DIR"]
BUILD = os.environ["SLUICE_BUILD_DIR"]


def spirals(n=384, classes=3, seed=3):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.1, 1.0, n)
    y = rng.integers(0, classes, n)
    angle = 4.0 * t + y * (2 * np.pi / classes)
    x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) + rng.normal(0, 0.02, (n, 2))
    return x.astype(np.float32), y.astype(np.int32)


def progress(output):
    lines = re.findall(r"^batch (\d+): loss (\S+), accuracy (\S+)$", output, re.M)
    return np.array([[float(loss), float(acc)] for _, loss, acc in lines])


def test_online_mlp_in_python_matches_cpp(tmp_path):
    x, y = spirals()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    rng = np.random.default_rng(11)
    params = tmp_path / "params"
    params.mkdir()
    sizes = [2, 16, 16, 3]
    for layer in range(3):
        np.save(params / f"w{layer + 1}.npy", (rng.uniform(-1, 1, sizes[layer:layer + 2]) * 0.5).astype(np.float32))
        np.save(params / f"b{layer + 1}.npy", np.zeros(sizes[layer + 1], np.float32))
    args = ["--features", str(tmp_path / "x.npy"), "--labels", str(tmp_path / "y.npy"), "--classes", "3",
            "--hidden", "16", "--batch", "32", "--epochs", "4", "--rate", "0.01", "--params", str(params),
            "--report-every", "1"]
    cpp = subprocess.run([os.path.join(BUILD, "samples", "online_mlp")] + args, capture_output=True, text=True,
                         timeout=120)
    python = subprocess.run([sys.executable, os.path.join(SOURCE, "samples", "online_mlp", "online_mlp.py")] + args,
                            capture_output=True, text=True, timeout=120)
    assert cpp.returncode == 0, cpp.stderr
    assert python.returncode == 0, python.stderr
    ours, theirs = progress(python.stdout), progress(cpp.stdout)
    assert ours.shape == theirs.shape == (48, 2)
    # The same ops traced from Python and from C++ make the same graph: the
    # same losses (here to the 7 digits printed; OpenBLAS, which the two
    # processes each call, keeps its right to round otherwise) and
    # accuracies (within one example of 32).
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], rtol=1e-5)
    assert np.abs(ours[:, 1] - theirs[:, 1]).max() <= 1 / 32 + 1e-6
    assert ours[-12:, 1].mean() > ours[:12, 1].mean()  # it learned


def test_sensor_monitor_stages_in_python_match_cpp(tmp_path):
    # stages.cpp's spectrum and detector over 40 chunks of the vibration
    # source (sensor_reference, built beside this test), and stages.py's
    # over the same signals in a pipeline built from Python, each in a
    # process of its own planning its FFTs by FFTW's heuristics
    # (SLUICE_FFT_PLANS=estimate): measured plans may differ between two
    # processes in their last bits, and the detector's Adam steps, whose size
    # does not shrink with a gradient's, make that a different detector.
    env = dict(os.environ, SLUICE_FFT_PLANS="estimate")
    reference = subprocess.run([os.path.join(BUILD, "tests", "python", "sensor_reference"), "40", str(tmp_path)],
                               capture_output=True, text=True, timeout=120, env=env)
    assert reference.returncode == 0, reference.stderr
    script = f"""
import sys
import numpy as np
sys.path.insert(0, {os.path.join(SOURCE, "samples", "sensor_monitor")!r})
import stages
signals, labels = np.load({str(tmp_path / "signals.npy")!r}), np.load({str(tmp_path / "labels.npy")!r})
features, scores = [], []
stages.pipeline([(signals[i], labels[i], np.int64(i)) for i in range(len(signals))], stages.Config(),
                on_scores=lambda s, chunk_labels, born: scores.append(s.copy()),
                on_features=lambda f, chunk_labels, born: features.append(f.copy())).run()
np.save({str(tmp_path / "python_features.npy")!r}, np.stack(features))
np.save({str(tmp_path / "python_scores.npy")!r}, np.stack(scores))
"""
    python = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert python.returncode == 0, python.stderr
    # The same ops traced from Python and from C++, the same plans: the same bits.
    np.testing.assert_array_equal(np.load(tmp_path / "python_features.npy"), np.load(tmp_path / "features.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "python_scores.npy"), np.load(tmp_path / "scores.npy"))
