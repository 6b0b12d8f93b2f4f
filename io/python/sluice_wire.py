"""sluice's wire format, version 1, in Python: numpy and struct only.

A message is one ZeroMQ multipart message: a 32-byte header frame, then two
frames per array, an .npy version 1.0 header and the raw little-endian
C-order data (io/WIRE_FORMAT.md is the specification). encode() returns the
frames, decode() checks them as strictly as sluice's C++ reader does and
raises WireError saying what was wrong. send() and recv() wrap a pyzmq
socket (anything with send_multipart and recv_multipart).

    import numpy as np, zmq, sluice_wire
    push = zmq.Context.instance().socket(zmq.PUSH)
    push.connect("ipc:///tmp/sluice-in")
    sluice_wire.send(push, [np.arange(4, dtype=np.float32)], seq=0)
    sluice_wire.send_end_of_stream(push, seq=1)

Decoded arrays are read-only views of the received frames (no copy).
bf16 travels as the void type '<V2': view such an array as np.uint16, or as
ml_dtypes.bfloat16 where that is installed.
"""

import io
import struct
from typing import NamedTuple

import numpy as np

VERSION = 1
DATA, END_OF_STREAM, ERROR = 0, 1, 2
FLAG_CRC = 1 << 0
MAX_RANK = 16
DEFAULT_MAX_MESSAGE_BYTES = 1 << 30

# magic, version, kind, flags, stream id, sequence number, tensor count, crc
_HEADER = struct.Struct("<4sBBHQQII")
_MAGIC = b"SLCE"
_NPY_MAGIC = b"\x93NUMPY"
_KIND_NAMES = {DATA: "data", END_OF_STREAM: "end of stream", ERROR: "error",
               3: "credit", 4: "ack", 5: "checkpoint barrier", 6: "heartbeat"}
# The descrs sluice reads and writes; the single-byte ones carry no byte order.
_DESCRS = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
           "<f2", "<V2", "|V2", "<f4", "<f8", "<c8", "<c16"}


class WireError(ValueError):
    """A message that is not valid wire format version 1."""


class Message(NamedTuple):
    kind: int            # DATA, END_OF_STREAM or ERROR
    stream_id: int
    seq: int
    arrays: list         # DATA: numpy arrays
    error: str           # ERROR: the peer's message
    flags: int


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli) of a bytes-like object, continuing from crc."""
    table = _CRC_TABLE
    crc ^= 0xFFFFFFFF
    for b in memoryview(data).cast("B"):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def npy_header(array):
    """The .npy version 1.0 header of an array, padded to a multiple of 64 bytes."""
    descr = np.lib.format.dtype_to_descr(array.dtype)
    if descr not in _DESCRS:
        raise WireError(f"dtype: expected one of {sorted(_DESCRS)}, found {descr!r}")
    shape = tuple(int(d) for d in array.shape)
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    padding = -(10 + len(text) + 1) % 64
    text = (text + " " * padding + "\n").encode("latin1")
    return _NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(text)) + text


def _little_endian_c_order(array):
    array = np.asarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array if array.flags.c_contiguous else array.copy(order="C")


def encode(arrays, seq=0, stream_id=0, crc=False):
    """The frames of a data message: a list of bytes and memoryviews (no copy of contiguous little-endian data)."""
    arrays = [_little_endian_c_order(a) for a in arrays]
    frames, checksum = [None], 0
    for a in arrays:
        data = memoryview(a.reshape(-1).view(np.uint8))
        frames += [npy_header(a), data]
        if crc:
            checksum = crc32c(data, checksum)
    flags = FLAG_CRC if crc else 0
    frames[0] = _HEADER.pack(_MAGIC, VERSION, DATA, flags, stream_id, seq, len(arrays), checksum)
    return frames


def encode_end_of_stream(seq, stream_id=0):
    return [_HEADER.pack(_MAGIC, VERSION, END_OF_STREAM, 0, stream_id, seq, 0, 0)]


def encode_error(text, seq, stream_id=0):
    return [_HEADER.pack(_MAGIC, VERSION, ERROR, 0, stream_id, seq, 0, 0), text.encode("utf-8")]


def _bytes_of(frame):
    # zmq.Frame exposes its bytes as .buffer; bytes and memoryviews are their own.
    return memoryview(frame.buffer if hasattr(frame, "buffer") else frame).cast("B")


def _parse_npy_header(frame, where):
    if len(frame) < 10 or bytes(frame[:6]) != _NPY_MAGIC:
        raise WireError(f"{where}: expected the .npy magic \\x93NUMPY")
    if bytes(frame[6:8]) != b"\x01\x00":
        raise WireError(f"{where}: expected .npy version 1.0, found {frame[6]}.{frame[7]}")
    (length,) = struct.unpack("<H", frame[8:10])
    if 10 + length != len(frame):
        raise WireError(f"{where}: npy header frame: expected {10 + length} bytes, found {len(frame)}")
    text = bytes(frame[10:]).decode("latin1")
    if not text.rstrip(" \n").endswith("}"):
        raise WireError(f"{where}: header: expected only padding after the dict")
    try:
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(io.BytesIO(bytes(frame[8:])))
    except ValueError as e:
        raise WireError(f"{where}: header dict: {e}") from None
    descr = np.lib.format.dtype_to_descr(dtype)
    if descr not in _DESCRS:
        raise WireError(f"{where}: descr: expected one of {sorted(_DESCRS)}, found {descr!r}")
    if fortran:
        raise WireError(f"{where}: fortran_order: expected False (C order), found True")
    if len(shape) > MAX_RANK:
        raise WireError(f"{where}: shape: expected rank <= {MAX_RANK}, found {len(shape)}")
    if any(d < 0 for d in shape):
        raise WireError(f"{where}: shape: expected dimensions >= 0, found {shape}")
    return shape, dtype


def decode(frames, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, where="wire"):
    """A Message from a list of frames (bytes-like or zmq.Frame); WireError when malformed."""
    frames = [_bytes_of(f) for f in frames]
    if not frames:
        raise WireError(f"{where}: expected a header frame, found an empty message")
    total = sum(len(f) for f in frames)
    if total > max_message_bytes:
        raise WireError(f"{where}: message size: expected at most max_message_bytes = "
                        f"{max_message_bytes} bytes, found {total}")
    if len(frames[0]) != _HEADER.size:
        raise WireError(f"{where}: header frame: expected {_HEADER.size} bytes, found {len(frames[0])}")
    magic, version, kind, flags, stream_id, seq, count, crc = _HEADER.unpack(frames[0])
    if magic != _MAGIC:
        raise WireError(f"{where}: header frame: expected magic SLCE, found {magic!r}")
    if version != VERSION:
        raise WireError(f"{where}: header frame: expected version 1, found {version}")
    if kind > ERROR:
        raise WireError(f"{where}: header frame: expected kind 0 (data), 1 (end of stream) or 2 (error), "
                        f"found {kind} ({_KIND_NAMES.get(kind, 'unknown')})")
    at = f"{where}: seq {seq}"
    if not flags & FLAG_CRC and crc != 0:
        raise WireError(f"{at}: crc: expected 0 when flag bit 0 (crc) is clear, found {crc}")
    if kind != DATA and count != 0:
        raise WireError(f"{at}: tensor count: expected 0 in a {_KIND_NAMES[kind]} message, found {count}")
    expected = 1 + 2 * count if kind == DATA else 2 if kind == ERROR else 1
    if len(frames) != expected:
        raise WireError(f"{at}: expected {expected} frames, found {len(frames)}")
    error = ""
    if kind == ERROR:
        try:
            error = bytes(frames[1]).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"{at}: error message: expected UTF-8 text, found invalid bytes") from None
    arrays, checksum = [], 0
    for i in range(count):
        shape, dtype = _parse_npy_header(frames[1 + 2 * i], f"{at}, tensor {i}")
        data = frames[2 + 2 * i]
        want = dtype.itemsize * int(np.prod(shape, dtype=object))
        if len(data) != want:
            raise WireError(f"{at}, tensor {i}: data frame: expected {want} bytes, found {len(data)}")
        if flags & FLAG_CRC:
            checksum = crc32c(data, checksum)
        arrays.append(np.frombuffer(data, dtype=dtype).reshape(shape))
    if flags & FLAG_CRC and checksum != crc:
        raise WireError(f"{at}: CRC-32C mismatch: the header says {crc}, the data frames give {checksum}")
    return Message(kind, stream_id, seq, arrays, error, flags)


def send(socket, arrays, seq=0, stream_id=0, crc=False):
    """Sends arrays as one data message; their data is not copied."""
    socket.send_multipart(encode(arrays, seq, stream_id, crc), copy=False)


def send_end_of_stream(socket, seq, stream_id=0):
    socket.send_multipart(encode_end_of_stream(seq, stream_id))


def send_error(socket, text, seq, stream_id=0):
    socket.send_multipart(encode_error(text, seq, stream_id))


def recv(socket, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES):
    """The next message on the socket (blocking as the socket does); WireError when malformed."""
    return decode(socket.recv_multipart(copy=False), max_message_bytes)
