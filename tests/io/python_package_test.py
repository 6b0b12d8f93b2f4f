"""io/python as a package: sluice_wire's CRC-32C (the crc32c module's and the
pure-Python loop agree), its version (the same as CMakeLists.txt's project
version), and `pip install io/python` (no network: no build isolation, no
index, no dependencies) giving an importable sluice_wire of that version.

Usage: python_package_test.py SOURCE_DIR; exits 77 (skipped) without pip,
setuptools or wheel.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

source = os.path.abspath(sys.argv[1])
package = os.path.join(source, "io", "python")
sys.path.insert(0, package)
import numpy as np  # noqa: E402
import sluice_wire  # noqa: E402

with open(os.path.join(source, "CMakeLists.txt")) as f:
    cmake_version = re.search(r"project\(sluice\s+VERSION\s+([0-9.]+)", f.read()).group(1)
assert sluice_wire.__version__ == cmake_version, \
    f"sluice_wire.__version__: expected {cmake_version} (CMakeLists.txt), found {sluice_wire.__version__}"

# RFC 3720 (iSCSI), B.4, and the usual check value.
vectors = [(b"", 0), (b"123456789", 0xE3069283), (bytes(32), 0x8A9136AA),
           (b"\xff" * 32, 0x62A8AB43), (bytes(range(32)), 0x46DD794E), (bytes(range(31, -1, -1)), 0x113FDB5C)]
pure = sluice_wire._crc32c_pure
for data, want in vectors:
    assert pure(data) == want, f"pure CRC-32C of {data[:12]!r}: expected {want:#x}, found {pure(data):#x}"

try:
    import crc32c  # noqa: F401
    fast_available = True
except ImportError:
    fast_available = False
if fast_available:
    assert sluice_wire.crc32c is sluice_wire._crc32c_fast, "crc32c is importable but sluice_wire does not use it"
    fast = sluice_wire._crc32c_fast
    for data, want in vectors:
        assert fast(data) == want, f"crc32c module on {data[:12]!r}: expected {want:#x}, found {fast(data):#x}"
    rng = random.Random(16)
    for length in [1, 3, 7, 8, 9, 63, 64, 65, 1000, 4096, 65537] + [rng.randrange(20000) for _ in range(20)]:
        data = rng.randbytes(length)
        cut = rng.randrange(length + 1)
        start = rng.randrange(1 << 32)
        assert fast(data, start) == pure(data, start), f"{length} bytes from crc {start:#x}: fast and pure differ"
        assert fast(data[cut:], fast(data[:cut])) == pure(data), f"{length} bytes cut at {cut}: continuing differs"
    # What encode passes: a memoryview of an array's bytes.
    array = np.arange(1000, dtype=np.float64).reshape(10, 100)
    view = memoryview(array.reshape(-1).view(np.uint8))
    assert fast(view) == pure(view) == pure(array.tobytes())
    message = sluice_wire.encode([array], crc=True)
    assert np.array_equal(sluice_wire.decode([bytes(f) for f in message]).arrays[0], array)
    print(f"CRC-32C: crc32c module and pure loop agree on {len(vectors)} vectors and 31 random buffers")
else:
    print("CRC-32C: no crc32c module (Debian python3-crc32c), so only the pure loop checked")

# Without the module (None in sys.modules makes its import fail), the loop.
fallback = subprocess.run([sys.executable, "-c", f"""
import sys
sys.modules["crc32c"] = None
sys.path.insert(0, {package!r})
import sluice_wire
assert sluice_wire.crc32c is sluice_wire._crc32c_pure
assert sluice_wire.crc32c(b"123456789") == 0xE3069283
"""], capture_output=True, text=True)
assert fallback.returncode == 0, f"without crc32c, sluice_wire.crc32c is not the pure loop:\n{fallback.stderr}"

# pip builds in the source tree (build/, *.egg-info): build a copy instead.
python = sys.executable
missing = [m for m in ("pip", "setuptools", "wheel")
           if subprocess.run([python, "-c", f"import {m}"], capture_output=True).returncode != 0]
if missing:
    print(f"skipped the install: {python} has no {', '.join(missing)} (Debian python3-pip, python3-setuptools, "
          "python3-wheel)")
    sys.exit(77)
with tempfile.TemporaryDirectory(prefix="sluice-wire-") as tmp:
    copy, target = os.path.join(tmp, "src"), os.path.join(tmp, "site")
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                              "--no-index", "--target", target, copy], env=env, capture_output=True, text=True)
    assert install.returncode == 0, f"pip install io/python failed:\n{install.stdout}{install.stderr}"
    check = f"""
import importlib.metadata, sys
sys.path.insert(0, {target!r})
import sluice_wire
assert sluice_wire.__file__.startswith({target!r}), sluice_wire.__file__
dist = importlib.metadata.distribution("sluice-wire")
requires = sorted(r.split()[0].split(";")[0] for r in dist.requires if "extra" not in r)
print(sluice_wire.__version__, dist.version, ",".join(requires))
"""
    run = subprocess.run([python, "-c", check], env=env, capture_output=True, text=True, cwd=tmp)
    assert run.returncode == 0, f"importing the installed sluice_wire failed:\n{run.stdout}{run.stderr}"
    module_version, dist_version, requires = run.stdout.split()
    assert module_version == dist_version == cmake_version, \
        f"installed version: expected {cmake_version}, found module {module_version}, metadata {dist_version}"
    assert requires == "numpy,pyzmq", f"installed requirements: expected numpy,pyzmq, found {requires}"
print(f"pip install io/python: sluice-wire {cmake_version} imports from its target directory")
