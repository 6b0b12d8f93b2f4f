"""sluice.wire without the package's extension: from the package's source
folder (python/) on the path, with numpy (and pyzmq) alone, as a peer on the
wire has it. Its CRC-32C (the crc32c module's and the pure-Python loop
agree, and the loop serves without the module), and the rest of the package
refusing with an ImportError that says what to build.

Usage: python_wire_test.py SOURCE_DIR
"""
import os
import random
import subprocess
import sys

source = os.path.abspath(sys.argv[1])
package = os.path.join(source, "python")
sys.path.insert(0, package)
import numpy as np  # noqa: E402
import sluice  # noqa: E402
from sluice import wire  # noqa: E402

assert wire.__file__.startswith(package), wire.__file__
try:
    sluice.jit
    raise AssertionError("sluice.jit without the extension: expected an ImportError, found none")
except ImportError as e:
    assert "pip install ./python" in str(e), f"the ImportError should say what to build: {e}"

# RFC 3720 (iSCSI), B.4, and the usual check value.
vectors = [(b"", 0), (b"123456789", 0xE3069283), (bytes(32), 0x8A9136AA),
           (b"\xff" * 32, 0x62A8AB43), (bytes(range(32)), 0x46DD794E), (bytes(range(31, -1, -1)), 0x113FDB5C)]
pure = wire._crc32c_pure
for data, want in vectors:
    assert pure(data) == want, f"pure CRC-32C of {data[:12]!r}: expected {want:#x}, found {pure(data):#x}"

try:
    import crc32c  # noqa: F401
    fast_available = True
except ImportError:
    fast_available = False
if fast_available:
    assert wire.crc32c is wire._crc32c_fast, "crc32c is importable but sluice_wire does not use it"
    fast = wire._crc32c_fast
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
    message = wire.encode([array], crc=True)
    assert np.array_equal(wire.decode([bytes(f) for f in message]).arrays[0], array)
    print(f"CRC-32C: crc32c module and pure loop agree on {len(vectors)} vectors and 31 random buffers")
else:
    print("CRC-32C: no crc32c module (Debian python3-crc32c), so only the pure loop checked")

# .npy headers are read once and remembered: each message still gets its own shape, dtype and
# data, a header once refused is refused again, and a long (padded) header, never remembered, reads.
for shape, dtype in [((2, 3), np.float32), ((3, 2), np.float32), ((2, 3), np.int64), ((2, 3), np.float32)]:
    for k in range(2):
        array = np.arange(6, dtype=dtype).reshape(shape) + k
        for pack_below in (0, 4096):
            m = wire.decode([bytes(f) for f in wire.encode([array], pack_below=pack_below)])
            assert m.arrays[0].dtype == dtype and np.array_equal(m.arrays[0], array), (shape, dtype, m.arrays[0])
good = [bytes(f) for f in wire.encode([np.arange(6, dtype=np.float32).reshape(2, 3)])]
big_endian = [good[0], good[1].replace(b"'<f4'", b"'>f4'"), good[2]]
for attempt in range(2):
    try:
        wire.decode(big_endian)
        raise AssertionError(f"a big-endian header accepted (attempt {attempt})")
    except wire.WireError as e:
        assert "descr" in str(e), e
text = good[1][10:].rstrip(b" \n") + b" " * 400 + b"\n"
padded = [good[0], good[1][:8] + len(text).to_bytes(2, "little") + text, good[2]]
assert np.array_equal(wire.decode(padded).arrays[0], np.arange(6, dtype=np.float32).reshape(2, 3))
print("npy headers: remembered ones give each message its own array; refusals and long headers unchanged")

# The flags a data message may not carry are refused whatever else it carries (decode skips
# those rules for data carrying only packed, crc and tags).
for flag, bit in [(wire.FLAG_SHARE_OFFER, 3), (wire.FLAG_PID, 5), (wire.FLAG_RING, 6), (wire.FLAG_DEVICES, 7),
                  (wire.FLAG_CONFIRM, 8)]:
    for pack_below in (0, 4096):
        frames = [bytes(f) for f in wire.encode([np.arange(3, dtype=np.float32)], pack_below=pack_below,
                                                 tags={"k": 1})]
        header = bytearray(frames[0])
        header[6:8] = (int.from_bytes(header[6:8], "little") | flag).to_bytes(2, "little")
        try:
            wire.decode([bytes(header)] + frames[1:])
            raise AssertionError(f"data with flag bit {bit} accepted (pack_below {pack_below})")
        except wire.WireError as e:
            assert f"(bit {bit})" in str(e), e
print("flags: data carrying a control's or a heartbeat's flag bits is refused, packed or not")

# Without the module (None in sys.modules makes its import fail), the loop.
fallback = subprocess.run([sys.executable, "-c", f"""
import sys
sys.modules["crc32c"] = None
sys.path.insert(0, {package!r})
from sluice import wire
assert wire.crc32c is wire._crc32c_pure
assert wire.crc32c(b"123456789") == 0xE3069283
"""], capture_output=True, text=True)
assert fallback.returncode == 0, f"without crc32c, wire.crc32c is not the pure loop:\n{fallback.stderr}"
print("sluice.wire works from python/ without the extension; sluice.jit says to build it")
