"""Writes the fuzzer's seed corpus: valid messages of each kind, in the
fuzzer's framing (a limit byte, then a u16 length before each frame), made
by python/sluice/wire.py.

    make_seeds.py DIRECTORY
"""

import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import numpy as np  # noqa: E402

from sluice import wire  # noqa: E402


def framed(frames, limit_byte=15):
    out = bytes([limit_byte])
    for f in frames:
        f = bytes(f)
        out += struct.pack("<H", len(f)) + f
    return out


# Same-host shared memory (io/WIRE_FORMAT.md, "Shared memory"), which the
# Python helper reads but does not write: the documented layouts spelled out.
HEADER = struct.Struct("<4sBBHQQII")
CONTROL = struct.Struct("<6Q")
SHARED_REF = struct.Struct("<IIQQQQ")  # pid, fd, segment, offset, bytes, generation


def shared_data(array, seq):
    """A data message whose tensor is a reference to shared memory."""
    header = HEADER.pack(b"SLCE", wire.VERSION, wire.DATA, wire.FLAG_SHARED, 0, seq, 1, 0)
    return [header, wire.npy_header(array), SHARED_REF.pack(4321, 7, 0x5EED5EED5EED5EED, 4096, array.nbytes, 3)]


def offering_heartbeat(seq):
    """A sender's heartbeat offering shared memory: its probe follows the record."""
    header = HEADER.pack(b"SLCE", wire.VERSION, wire.HEARTBEAT, wire.FLAG_SHARE_OFFER, 0, seq,
                         0, 0)
    return [header + CONTROL.pack(3, 9, 0, 0, 0, 0) + SHARED_REF.pack(4321, 5, 0x5EED5EED5EED5EED, 64, 8, 1)]


def credit_naming_a_ring(seq):
    """A C++ receiver's credit taking shared memory, with its pid and its ring (WIRE_FORMAT.md, "Rings")."""
    flags = wire.FLAG_SHARED | wire.FLAG_PID | wire.FLAG_RING
    header = HEADER.pack(b"SLCE", wire.VERSION, wire.CREDIT, flags, 0, seq, 1, 0)
    return [header + CONTROL.pack(1, 20, 16, 1 << 20, 1 << 30, 0) + struct.pack("<QQ", 12, 4321) +
            SHARED_REF.pack(4321, 9, 0x5EED5EED5EED5EED, 0, 1 << 20, 0)]


def main(directory):
    os.makedirs(directory, exist_ok=True)
    seeds = {
        "f32_2x3": wire.encode([np.arange(6, dtype=np.float32).reshape(2, 3)], seq=1),
        "crc_two_tensors": wire.encode([np.arange(3, dtype=np.int64), np.ones((2, 2), np.complex64)],
                                              seq=2, crc=True),
        "scalar_bool": wire.encode([np.array(True)]),
        "empty_u16": wire.encode([np.zeros((3, 0), np.uint16)]),
        "end_of_stream": wire.encode_end_of_stream(seq=9),
        "error": wire.encode_error("stage 'x' failed", seq=4),
        "no_tensors": wire.encode([]),
        "packed_two_tensors": wire.encode([np.arange(4, dtype=np.int16), np.ones(3, np.float64)], seq=5,
                                                 crc=True, pack_below=4096),
        "credit": wire.encode_control(wire.CREDIT, wire.Control(1, 2, 1000, 1 << 20, 1 << 30, 0),
                                             seq=7),
        "heartbeat": wire.encode_control(wire.HEARTBEAT, wire.Control(3, 9), seq=8),
        "barrier": wire.encode_barrier(12, seq=10, stream_id=2),
        "shared_f32_2x3": shared_data(np.arange(6, dtype=np.float32).reshape(2, 3), seq=13),
        "heartbeat_offering_shared_memory": offering_heartbeat(seq=14),
        "credit_with_leases": wire.encode_control(wire.CREDIT,
                                                         wire.Control(1, 20, 16, 1 << 20, 1 << 30, 0),
                                                         seq=15, leases=[12, 17, 19]),
        "credit_naming_a_ring": credit_naming_a_ring(seq=16),
        "update_two_tensors": wire.encode_update("scale", [np.ones((2, 2), np.float32),
                                                                  np.arange(3, dtype=np.int64)],
                                                        seq=11, stream_id=2, crc=True),
    }
    for name, frames in seeds.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(framed(frames))


if __name__ == "__main__":
    main(sys.argv[1])
