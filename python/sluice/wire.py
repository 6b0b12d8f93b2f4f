"""sluice.wire: sluice's wire format, version 1, in Python: numpy and
struct only (and the crc32c module where installed, for a faster CRC-32C),
so it works where the package's extension is not built (its folder,
python/, on PYTHONPATH is enough).

A message is one ZeroMQ multipart message: a 32-byte header frame, then two
frames per array, an .npy version 1.0 header and the raw little-endian
C-order data, or, packed (flag bit 1), everything in one frame
(io/WIRE_FORMAT.md is the specification). encode() returns the frames,
decode() checks them as strictly as sluice's C++ reader does and raises
WireError saying what was wrong.

Reliable mode, sluice's default between peers, is ReliableSender and
ReliableReceiver (pyzmq): credit, acknowledgements, heartbeats and
resending, so that nothing is lost when a side is slow, stops or restarts.

    import numpy as np
    from sluice import wire
    out = wire.ReliableSender("ipc:///tmp/sluice-in")
    out.send([np.arange(4, dtype=np.float32)])
    out.send_barrier(1)          # checkpoint 1 closes here
    out.send_end_of_stream()
    out.flush(timeout=60)        # returns once the receiver has taken everything

    inp = wire.ReliableReceiver("ipc:///tmp/sluice-out")   # binds
    while (m := inp.recv(timeout=60)).kind != wire.END_OF_STREAM:
        if m.kind == wire.DATA:
            print(m.arrays)      # acknowledged at the next recv
        elif m.kind == wire.BARRIER:
            print("checkpoint", m.checkpoint)
    inp.close()

A checkpoint barrier (kind BARRIER) is returned by recv like any message,
with its number in m.checkpoint; a receiver that does not checkpoint skips
it (it is acknowledged at the next recv all the same).

An update (kind UPDATE) asks the receiving process to apply new values to a
named target, a pipeline stage's accumulator: out.send_update("scale",
[weights]) sends one, recv returns it with m.target and m.arrays. A receiver
that cannot apply it says so with inp.refuse(m, "why") before its next recv;
the sender records the refusal (out.refusals, a list of Refusal(seq, why))
before the acknowledgement that covers it, so after out.flush() it is there.

ServingClient (pyzmq) calls a pipeline behind a sluice ServingEndpoint
(pipeline/serving.h): each request gets its own reply, matched by seq, and
an error reply raises WireError with the server's text.

    client = wire.ServingClient("tcp://127.0.0.1:5555")
    y, = client.call([np.arange(4, dtype=np.float32)], timeout_ms=10000)

Plain mode is send() and recv() on a pyzmq PUSH or PULL socket (anything
with send_multipart and recv_multipart), for peers that speak plain ZeroMQ.

Shared memory: a ReliableReceiver on the same host as a sluice sender
(shared_memory=True, the default) maps the sender's shared memory and
returns arrays that view it in place, no copy, read-only (the memory is
mapped read-only: no write reaches the sender or another reader; copy() gives
a writable array); the sender reuses that memory only once every array of
the message (and every view of one) is gone, so keep them no longer than
needed, or copy them. open_shared(handle) maps a handle a sluice process
printed (Tensor::to_pointer, mode ipc), read-only as well.

Decoded arrays are read-only views of the received frames (no copy).
bf16 travels as the void type '<V2': view such an array as np.uint16, or as
ml_dtypes.bfloat16 where that is installed.
"""

import collections
import fcntl
import functools
import io
import math
import mmap
import os
import struct
import time
import weakref
from typing import NamedTuple

import numpy as np

try:
    import crc32c as _crc32c_module  # Debian python3-crc32c, PyPI crc32c: CRC-32C in C
except ImportError:
    _crc32c_module = None

VERSION = 1
DATA, END_OF_STREAM, ERROR = 0, 1, 2
CREDIT, ACK, BARRIER, HEARTBEAT = 3, 4, 5, 6
UPDATE = 7
BATCH = 8  # reliable mode: one-frame messages of one sender coalesced in one frame (split_batch)
FLAG_CRC = 1 << 0
FLAG_PACKED = 1 << 1
FLAG_SHARED = 1 << 2  # data frames are shared-memory references; a receiver's leases (WIRE_FORMAT.md, "Shared memory")
FLAG_SHARE_OFFER = 1 << 3  # a sender's heartbeat offering shared memory: its probe follows the record
FLAG_TAKES_BATCHES = 1 << 4  # a receiver's control message: it takes batches (kind 8)
FLAG_PID = 1 << 5  # a receiver's control message taking shared memory: its pid (u64) follows the leases
FLAG_RING = 1 << 6  # a C++ receiver's control message taking shared memory: its ring's reference follows
FLAG_DEVICES = 1 << 7  # a C++ receiver's control message taking shared memory: the GPUs it opens follow
FLAG_CONFIRM = 1 << 8  # a receiver's control message: it is closing and waits for a heartbeat confirming it
FLAG_TAGS = 1 << 9  # data or update: a tags block follows the tensors (WIRE_FORMAT.md, "Tags")
DEVICES_BYTES = 8 + 16 * 8  # a count, then eight 16-byte device ids (WIRE_FORMAT.md, "Device memory")
DEVICE_REF_PREFIX = b"sluice-"  # a shared message's data frame naming a GPU's memory, not shared memory
MAX_LEASES = 256
MAX_RANK = 16
DEFAULT_MAX_MESSAGE_BYTES = 1 << 30
MAX_TARGET_BYTES = 1024   # an update's target name: 1 to this many bytes of UTF-8
MAX_REFUSAL_BYTES = 1024  # the most bytes of a refusal's reason that travel
# A reliable receiver acknowledges what was done with once its socket has stayed quiet this long
# (or a batch of credit_messages / 8 is done), as the C++ receiver does: one that keeps up with its
# sender runs dry after every message, and an acknowledgement each time would double the messages.
_ACK_DELAY = 0.001

# magic, version, kind, flags, stream id, sequence number, tensor count, crc
_HEADER = struct.Struct("<4sBBHQQII")
# A control message's record: session, next, credit messages, credit bytes,
# max message bytes, rewind.
_CONTROL = struct.Struct("<6Q")
# A barrier's checkpoint number, after its header in the same frame.
_CHECKPOINT = struct.Struct("<Q")
# A shared-memory reference: pid, fd, segment id, offset, bytes, generation.
_SHARED_REF = struct.Struct("<IIQQQQ")
# A shared-memory segment's first bytes: magic, version, slots, id, slot bytes, data offset;
# the slots' u64 generations start at byte 64 (devices/shared_memory.h).
_SEGMENT = struct.Struct("<8sIIQQQ")
_SEGMENT_MAGIC = b"SLUICESM"
# fcntl's names where Python has them (3.9+ on Linux), else Linux's numbers.
_F_GET_SEALS = getattr(fcntl, "F_GET_SEALS", 1034)
_SIZE_SEALS = getattr(fcntl, "F_SEAL_SHRINK", 0x0002) | getattr(fcntl, "F_SEAL_GROW", 0x0004)
_MAGIC = b"SLCE"
_NPY_MAGIC = b"\x93NUMPY"
_KIND_NAMES = {DATA: "data", END_OF_STREAM: "end of stream", ERROR: "error",
               3: "credit", 4: "ack", 5: "checkpoint barrier", 6: "heartbeat", 7: "update"}
# The descrs sluice reads and writes; the single-byte ones carry no byte order.
_DESCRS = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
           "<f2", "<V2", "|V2", "<f4", "<f8", "<c8", "<c16"}


class WireError(ValueError):
    """A message that is not valid wire format version 1."""


class Control(NamedTuple):
    """The record of a credit, ack or heartbeat message (WIRE_FORMAT.md, "Reliable mode")."""
    session: int = 0
    next: int = 0
    credit_messages: int = 0
    credit_bytes: int = 0
    max_message_bytes: int = 0
    rewind: int = 0


class Message(NamedTuple):
    kind: int            # DATA, END_OF_STREAM, ERROR, CREDIT, ACK, BARRIER, HEARTBEAT or UPDATE
    stream_id: int
    seq: int
    arrays: list         # DATA, UPDATE: numpy arrays
    error: str           # ERROR: the peer's message
    flags: int
    control: Control = Control()  # CREDIT, ACK, HEARTBEAT
    checkpoint: int = 0  # BARRIER: the number of the checkpoint it closes
    target: str = ""     # UPDATE: the name of what its arrays are applied to
    probe: "SharedRef" = None  # HEARTBEAT of a sender offering shared memory: its probe
    leases: tuple = ()   # a receiver's control message: seqs whose arrays still view the sender's memory
    tags: dict = {}      # DATA, UPDATE: {(key, offset): value}, offset -1 for the whole message (read-only)


class SharedRef(NamedTuple):
    """Where shared memory is: a slot of a segment that process pid holds open as fd."""
    pid: int
    fd: int
    segment: int
    offset: int
    bytes: int
    generation: int

    def __str__(self):
        return (f"sluice-shm:1:pid={self.pid}:fd={self.fd}:segment={self.segment:016x}:offset={self.offset}"
                f":bytes={self.bytes}:generation={self.generation}")

    @classmethod
    def parse(cls, text):
        """A handle as Tensor::to_pointer prints it; WireError when it is not one."""
        names = ("pid", "fd", "segment", "offset", "bytes", "generation")
        parts = text.split(":")
        if len(parts) != 8 or parts[:2] != ["sluice-shm", "1"]:
            raise WireError(f"shared memory handle: expected sluice-shm:1:pid=...:generation=..., found {text!r}")
        values = []
        for name, part in zip(names, parts[2:]):
            key, _, value = part.partition("=")
            try:
                if key != name:
                    raise ValueError
                values.append(int(value, 16 if name == "segment" else 10))
            except ValueError:
                raise WireError(f"shared memory handle: expected {name}=..., found {part!r}") from None
        return cls(*values)


class SharedMappings:
    """Segments of other processes mapped once each (mapping is what costs), and views of them."""

    def __init__(self):
        self.segments = {}  # (pid, fd, segment id) -> mmap

    def _segment(self, ref):
        key = (ref.pid, ref.fd, ref.segment)
        if key in self.segments:
            return self.segments[key]
        where = f"shared memory {ref}"
        path = f"/proc/{ref.pid}/fd/{ref.fd}"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise WireError(f"{where}: {path}: expected a descriptor of a live process of this user, "
                            f"found {e.strerror}") from None
        try:
            st = os.fstat(fd)
            if st.st_uid != os.geteuid():
                raise WireError(f"{where}: owner: expected uid {os.geteuid()}, found uid {st.st_uid}")
            # Sealed at its size, or a process that shrinks it kills this one with SIGBUS.
            seals = fcntl.fcntl(fd, _F_GET_SEALS)
            if seals & _SIZE_SEALS != _SIZE_SEALS:
                raise WireError(f"{where}: seals: expected a segment sealed against shrinking and growing "
                                f"(F_SEAL_SHRINK | F_SEAL_GROW), found seals {seals:#x}")
            if st.st_size < 4096:
                raise WireError(f"{where}: expected a sluice segment (a file of at least one page), "
                                f"found {st.st_size} bytes")
            # Read-only: a reader cannot write through to its sender and the other readers.
            m = mmap.mmap(fd, st.st_size, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        magic, version, _, segment_id, _, _ = _SEGMENT.unpack_from(m, 0)
        if magic != _SEGMENT_MAGIC or version != 1:
            raise WireError(f"{where}: segment: expected magic SLUICESM, version 1, found other bytes")
        if segment_id != ref.segment:
            raise WireError(f"{where}: segment id: expected {ref.segment:016x}, found {segment_id:016x}")
        self.segments[key] = m
        return m

    def view(self, ref):
        """The ref's bytes, checked against the segment's header: a read-only numpy array of
        uint8, which arrays made from it keep alive (a weakref.finalize on it runs once they are
        all gone)."""
        m = self._segment(ref)
        where = f"shared memory {ref}"
        _, _, slots, _, slot_bytes, first = _SEGMENT.unpack_from(m, 0)
        if not (0 < slots <= (4096 - 64) // 8 and slot_bytes > 0 and 4096 <= first <= len(m)
                and slot_bytes <= (len(m) - first) // slots):
            raise WireError(f"{where}: segment header: expected slots that fit its {len(m)} bytes")
        if not first <= ref.offset < first + slots * slot_bytes:
            raise WireError(f"{where}: offset: expected in [{first}, {first + slots * slot_bytes}), found {ref.offset}")
        slot = (ref.offset - first) // slot_bytes
        if ref.bytes > first + (slot + 1) * slot_bytes - ref.offset:
            raise WireError(f"{where}: bytes: expected at most the end of slot {slot}, found {ref.bytes}")
        (generation,) = struct.unpack_from("<Q", m, 64 + 8 * slot)
        if generation != ref.generation:
            raise WireError(f"{where}: generation: expected {ref.generation}, found {generation} "
                            f"(the slot was handed out again: the handle is stale)")
        return np.frombuffer(m, dtype=np.uint8, count=ref.bytes, offset=ref.offset)

    def clear(self):
        self.segments.clear()


def open_shared(handle, dtype, shape):
    """A numpy array viewing the shared memory a sluice handle names (Tensor::to_pointer with
    mode ipc prints one), no copy, read-only: it shows what the owner writes; copy() for a
    writable array."""
    ref = handle if isinstance(handle, SharedRef) else SharedRef.parse(handle)
    dtype = np.dtype(dtype)
    want = dtype.itemsize * int(np.prod(shape, dtype=object))
    if want > ref.bytes:
        raise WireError(f"shared memory {ref}: bytes: expected at least {want} for {dtype}{list(shape)}, "
                        f"found {ref.bytes}")
    view = SharedMappings().view(ref._replace(bytes=want))
    return np.frombuffer(view, dtype=dtype).reshape(shape)


class Refusal(NamedTuple):
    """A message a ReliableSender's receiver refused: its seq and the receiver's reason."""
    seq: int
    why: str


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def _crc32c_pure(data, crc=0):
    """CRC-32C (Castagnoli) of a bytes-like object, continuing from crc, in Python."""
    table = _CRC_TABLE
    crc ^= 0xFFFFFFFF
    for b in memoryview(data).cast("B"):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc32c_fast(data, crc=0):
    """CRC-32C (Castagnoli) of a bytes-like object, continuing from crc, by the crc32c module."""
    return _crc32c_module.crc32c(memoryview(data).cast("B"), crc)


def _fast_crc_works():
    # Another module could be named crc32c: use it only if it computes this CRC.
    try:
        return _crc32c_fast(b"56789", _crc32c_fast(b"1234")) == 0xE3069283
    except Exception:  # whatever went wrong, the pure loop is right
        return False


# The pure loop takes about 0.2 s a megabyte; the module, under a millisecond.
crc32c = _crc32c_fast if _crc32c_module is not None and _fast_crc_works() else _crc32c_pure


def npy_header(array):
    """The .npy version 1.0 header of an array, padded to a multiple of 64 bytes."""
    return _npy_header_of(array.dtype, array.shape)


@functools.lru_cache(maxsize=256)
def _npy_header_of(dtype, shape):
    """npy_header's, remembered: a stream sends a few specs again and again."""
    descr = np.lib.format.dtype_to_descr(dtype)
    if descr not in _DESCRS:
        raise WireError(f"dtype: expected one of {sorted(_DESCRS)}, found {descr!r}")
    shape = tuple(int(d) for d in shape)
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    padding = -(10 + len(text) + 1) % 64
    text = (text + " " * padding + "\n").encode("latin1")
    return _NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(text)) + text


def _little_endian_c_order(array):
    array = np.asarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array if array.flags.c_contiguous else array.copy(order="C")


def _tensor_frames(arrays, crc):
    """Two frames per array (.npy header, data: no copy of contiguous little-endian data),
    and the CRC-32C of the data frames when crc (else 0)."""
    frames, checksum = [], 0
    for a in (_little_endian_c_order(a) for a in arrays):
        data = memoryview(a.reshape(-1).view(np.uint8))
        frames += [npy_header(a), data]
        if crc:
            checksum = crc32c(data, checksum)
    return frames, checksum


# Tags (WIRE_FORMAT.md, "Tags"): the bounds devices/tags.h keeps them within.
MAX_TAGS = 256
MAX_TAG_KEY_BYTES = 128
MAX_TAG_VALUE_BYTES = 4096
_TAG_HEAD = struct.Struct("<HBBq")  # key length, type, 0, offset


def encode_tags(tags):
    """The tags block of {key or (key, offset): value}: an int, a float, a str or a numpy array
    (at most 4096 bytes); offset -1 (or a bare key) for the whole message, else a row."""
    if not 0 < len(tags) <= MAX_TAGS:
        raise WireError(f"tags: count: expected 1 to {MAX_TAGS}, found {len(tags)}")
    out = [b"TAGS", struct.pack("<I", len(tags))]
    for where, value in tags.items():
        key, offset = where if isinstance(where, tuple) else (where, -1)
        name = key.encode("ascii", "replace")
        if not 0 < len(name) <= MAX_TAG_KEY_BYTES or not all(0x20 < c < 0x7f for c in name):
            raise WireError(f"tags: key: expected 1 to {MAX_TAG_KEY_BYTES} bytes of printable ASCII, found {key!r}")
        if offset < -1:
            raise WireError(f"tags: {key}: offset: expected a row (0 or more) or -1, found {offset}")
        if isinstance(value, (bool, int, np.integer)):
            kind, payload = 0, struct.pack("<q", int(value))
        elif isinstance(value, (float, np.floating)):
            kind, payload = 1, struct.pack("<d", float(value))
        elif isinstance(value, str):
            kind, payload = 2, value.encode("utf-8")
        else:
            array = _little_endian_c_order(value)
            kind, payload = 3, npy_header(array) + array.tobytes()
            if array.nbytes > MAX_TAG_VALUE_BYTES:
                raise WireError(f"tags: {key}: expected a tensor of at most {MAX_TAG_VALUE_BYTES} bytes, "
                                f"found {array.nbytes}")
        if kind == 2 and len(payload) > MAX_TAG_VALUE_BYTES:
            raise WireError(f"tags: {key}: expected a string of at most {MAX_TAG_VALUE_BYTES} bytes, "
                            f"found {len(payload)}")
        out += [_TAG_HEAD.pack(len(name), kind, 0, offset), name,
                payload if kind < 2 else struct.pack("<I", len(payload)) + payload]
    return b"".join(out)


_TAG_COUNT, _TAG_INT, _TAG_FLOAT = struct.Struct("<I"), struct.Struct("<q"), struct.Struct("<d")


@functools.lru_cache(maxsize=256)
def _tag_key(name):
    """A tag's key as text, or None when its bytes are not printable ASCII: the keys of a stream
    repeat, so each is checked once (the check byte by byte cost as much as the rest of a block)."""
    return name.decode("ascii") if name and all(0x20 < c < 0x7f for c in name) else None


def decode_tags(block, where="wire"):
    """{(key, offset): value} from a tags block; WireError naming what is wrong."""
    block = bytes(block)
    end, at = len(block), 0

    def short(size, what):  # formatted only for an error: most blocks are whole
        raise WireError(f"{where}: tags: {what}: expected {size} bytes, found {end - at} left")

    if end < 4:
        short(4, "magic")
    if block[:4] != b"TAGS":
        raise WireError(f"{where}: tags: magic: expected 'TAGS', found other bytes")
    at = 4
    if end - at < 4:
        short(4, "count")
    (count,) = _TAG_COUNT.unpack_from(block, at)
    at += 4
    if not 0 < count <= MAX_TAGS:
        raise WireError(f"{where}: tags: count: expected 1 to {MAX_TAGS}, found {count}")
    tags = {}
    for i in range(count):
        if end - at < _TAG_HEAD.size:
            short(_TAG_HEAD.size, f"tag {i}")
        n, kind, reserved, offset = _TAG_HEAD.unpack_from(block, at)
        at += _TAG_HEAD.size
        if reserved != 0:
            raise WireError(f"{where}: tags: tag {i}: expected a reserved byte of 0, found another")
        if not 0 < n <= MAX_TAG_KEY_BYTES:
            raise WireError(f"{where}: tags: tag {i}: expected a key of 1 to {MAX_TAG_KEY_BYTES} bytes, found {n} bytes")
        if end - at < n:
            short(n, f"tag {i}")
        name = block[at:at + n]
        at += n
        key = _tag_key(name)
        if key is None:
            raise WireError(f"{where}: tags: tag {i}: key: expected printable ASCII, found {name!r}")
        if offset < -1:
            raise WireError(f"{where}: tags: {key}: offset: expected a row (0 or more) or -1, found {offset}")
        if kind == 0 or kind == 1:
            if end - at < 8:
                short(8, key)
            (value,) = (_TAG_INT if kind == 0 else _TAG_FLOAT).unpack_from(block, at)
            at += 8
        elif kind in (2, 3):
            if end - at < 4:
                short(4, key)
            (size,) = _TAG_COUNT.unpack_from(block, at)
            at += 4
            if kind == 2 and size > MAX_TAG_VALUE_BYTES:
                raise WireError(f"{where}: tags: {key}: expected a string of at most {MAX_TAG_VALUE_BYTES} bytes, "
                                f"found {size}")
            if end - at < size:
                short(size, key)
            raw = block[at:at + size]
            at += size
            if kind == 2:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise WireError(f"{where}: tags: {key}: expected UTF-8 text, found invalid bytes") from None
            else:
                shape, dtype, header_bytes = _parse_npy_header(raw, lambda: f"{where}: tag '{key}'", whole=False)
                want = dtype.itemsize * math.prod(shape)
                if want > MAX_TAG_VALUE_BYTES or want != len(raw) - header_bytes:
                    raise WireError(f"{where}: tags: {key}: expected a tensor of at most {MAX_TAG_VALUE_BYTES} "
                                    f"bytes, its data filling the value, found {want} in {len(raw) - header_bytes}")
                value = np.frombuffer(raw[header_bytes:], dtype=dtype).reshape(shape)
        else:
            raise WireError(f"{where}: tags: {key}: expected a type of 0 to 3 (integer, float, string, tensor), "
                            f"found {kind}")
        if (key, offset) in tags:
            raise WireError(f"{where}: tags: {key}: expected one value per key and offset, found two at {offset}")
        tags[key, offset] = value
    if at != end:
        raise WireError(f"{where}: tags: block: expected nothing after the last tag, found more bytes")
    return tags


def encode(arrays, seq=0, stream_id=0, crc=False, pack_below=0, tags=None):
    """The frames of a data message: a list of bytes and memoryviews (no copy of contiguous
    little-endian data); one packed frame when the message is smaller than pack_below bytes.
    tags: {key or (key, offset): value}, sent after the tensors (encode_tags)."""
    frames, checksum = _tensor_frames(arrays, crc)
    count = len(frames) // 2
    flags = FLAG_CRC if crc else 0
    block = [encode_tags(tags)] if tags else []
    if tags:
        flags |= FLAG_TAGS
    if _HEADER.size + sum(len(f) for f in frames + block) < pack_below:
        flags |= FLAG_PACKED
        header = _HEADER.pack(_MAGIC, VERSION, DATA, flags, stream_id, seq, count, checksum)
        return [header + b"".join(bytes(f) for f in frames + block)]
    return [_HEADER.pack(_MAGIC, VERSION, DATA, flags, stream_id, seq, count, checksum)] + frames + block


def _check_target(name, where):
    """An update's target name as bytes: 1 to MAX_TARGET_BYTES bytes of UTF-8."""
    if isinstance(name, str):
        name = name.encode("utf-8")
    name = bytes(name)
    if not 1 <= len(name) <= MAX_TARGET_BYTES:
        raise WireError(f"{where}: update target: expected a name of 1 to {MAX_TARGET_BYTES} bytes, "
                        f"found {len(name)}")
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        raise WireError(f"{where}: update target: expected UTF-8 text, found invalid bytes") from None
    return name


def encode_update(target, arrays, seq=0, stream_id=0, crc=False):
    """The frames of an update: the header (count = len(arrays)), the target's name (UTF-8),
    then two frames per array as in a data message. Never packed."""
    name = _check_target(target, f"encode: seq {seq}")
    if not arrays:
        raise WireError(f"encode: seq {seq}: update: expected at least 1 array, found 0")
    frames, checksum = _tensor_frames(arrays, crc)
    flags = FLAG_CRC if crc else 0
    return [_HEADER.pack(_MAGIC, VERSION, UPDATE, flags, stream_id, seq, len(frames) // 2, checksum), name] + frames


def encode_control(kind, control, seq, stream_id=0, leases=None, pid=0, takes_batches=False, confirm=False):
    """The one frame of a credit, ack or heartbeat message: its header, then its record (then, from a
    receiver taking shared memory, the seqs whose arrays still view the sender's memory, and its pid
    when given, so that the sender reuses what it lent once this process is gone). takes_batches: a
    receiver's, which splits batches (split_batch). confirm: a closing receiver's, asking its sender
    for a heartbeat that confirms it."""
    batches = (FLAG_TAKES_BATCHES if takes_batches else 0) | (FLAG_CONFIRM if confirm else 0)
    if leases is None:
        return [_HEADER.pack(_MAGIC, VERSION, kind, batches, stream_id, seq, 0, 0) + _CONTROL.pack(*control)]
    flags = FLAG_SHARED | batches | (FLAG_PID if pid else 0)
    header = _HEADER.pack(_MAGIC, VERSION, kind, flags, stream_id, seq, len(leases), 0)
    return [header + _CONTROL.pack(*control) + struct.pack(f"<{len(leases)}Q", *leases) +
            (struct.pack("<Q", pid) if pid else b"")]


def split_batch(frame, where="wire"):
    """The messages of a batch frame (kind 8, WIRE_FORMAT.md "Batches"), each the memoryview of its
    one frame, in order; WireError when the batch is malformed."""
    view = memoryview(frame)
    if len(view) < _HEADER.size:
        raise WireError(f"{where}: header frame: expected at least {_HEADER.size} bytes, found {len(view)}")
    magic, version, kind, _flags, _stream_id, seq, count, _crc = _HEADER.unpack(view[:_HEADER.size])
    if magic != _MAGIC or version != VERSION or kind != BATCH:
        raise WireError(f"{where}: kind: expected batch, found magic {magic!r}, version {version}, kind {kind}")
    at = f"{where}: batch from seq {seq}"
    smallest = 8 + _HEADER.size
    most = (len(view) - _HEADER.size) // smallest
    if count == 0 or count > most:
        raise WireError(f"{at}: message count: expected 1 to {most}, found {count}")
    entries, offset = [], _HEADER.size
    while offset < len(view):
        if len(entries) == count:
            raise WireError(f"{at}: size: expected {count} messages ending at byte {offset}, found {len(view)}")
        if len(view) - offset < smallest:
            raise WireError(f"{at}: message {len(entries)}: expected a length word and at least a header, "
                            f"found {len(view) - offset} bytes left")
        length, reserved = struct.unpack_from("<II", view, offset)
        end = offset + 8 + (length + 7) // 8 * 8
        if reserved != 0:
            raise WireError(f"{at}: message {len(entries)}: expected a reserved word of 0, found {reserved}")
        if length < _HEADER.size or end > len(view):
            raise WireError(f"{at}: message {len(entries)}: expected {_HEADER.size} to "
                            f"{len(view) - offset - 8} bytes, found {length}")
        if any(view[offset + 8 + length:end]):
            raise WireError(f"{at}: message {len(entries)}: expected zero padding, found other bytes")
        entries.append(view[offset + 8:offset + 8 + length])
        offset = end
    if len(entries) != count:
        raise WireError(f"{at}: message count: expected {count}, found {len(entries)}")
    return entries


def encode_end_of_stream(seq, stream_id=0):
    return [_HEADER.pack(_MAGIC, VERSION, END_OF_STREAM, 0, stream_id, seq, 0, 0)]


def encode_error(text, seq, stream_id=0):
    return [_HEADER.pack(_MAGIC, VERSION, ERROR, 0, stream_id, seq, 0, 0), text.encode("utf-8")]


def encode_barrier(checkpoint, seq, stream_id=0):
    """The one frame of a checkpoint barrier: its header, then the checkpoint number (u64)."""
    return [_HEADER.pack(_MAGIC, VERSION, BARRIER, 0, stream_id, seq, 0, 0) + _CHECKPOINT.pack(checkpoint)]


def _bytes_of(frame):
    # zmq.Frame exposes its bytes as .buffer; bytes and memoryviews are their own.
    return memoryview(frame.buffer if hasattr(frame, "buffer") else frame).cast("B")


def _parse_npy_header(frame, where, whole=True):
    """(shape, dtype, header length) of the .npy header at the start of frame (all of it when whole).
    where(): the text naming the frame in an error, made only for one."""
    if len(frame) < 10 or bytes(frame[:6]) != _NPY_MAGIC:
        raise WireError(f"{where()}: expected the .npy magic \\x93NUMPY")
    if bytes(frame[6:8]) != b"\x01\x00":
        raise WireError(f"{where()}: expected .npy version 1.0, found {frame[6]}.{frame[7]}")
    (length,) = struct.unpack("<H", frame[8:10])
    if 10 + length > len(frame) or (whole and 10 + length != len(frame)):
        raise WireError(f"{where()}: npy header frame: expected {10 + length} bytes, found {len(frame)}")
    header = bytes(frame[8:10 + length])
    try:
        # Only headers of the size numpy writes are kept: a sender's padded ones are not worth the room.
        shape, dtype = (_npy_header_fields if length <= 256 else _npy_header_fields.__wrapped__)(header)
    except ValueError as e:
        raise WireError(f"{where()}: {e}") from None
    return shape, dtype, 10 + length


@functools.lru_cache(maxsize=256)
def _npy_header_fields(header):
    """(shape, dtype) that a .npy 1.0 header says (header: its u16 length, then its dict);
    ValueError naming the field that is wrong. Cached, since a stream repeats a few headers:
    numpy's own parser takes tens of microseconds a call."""
    if not header[2:].decode("latin1").rstrip(" \n").endswith("}"):
        raise ValueError("header: expected only padding after the dict")
    try:
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(io.BytesIO(header))
    except ValueError as e:
        raise ValueError(f"header dict: {e}") from None
    descr = np.lib.format.dtype_to_descr(dtype)
    if descr not in _DESCRS:
        raise ValueError(f"descr: expected one of {sorted(_DESCRS)}, found {descr!r}")
    if fortran:
        raise ValueError("fortran_order: expected False (C order), found True")
    if len(shape) > MAX_RANK:
        raise ValueError(f"shape: expected rank <= {MAX_RANK}, found {len(shape)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape: expected dimensions >= 0, found {shape}")
    return shape, dtype


def decode(frames, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, where="wire", map_shared=None):
    """A Message from a list of frames (bytes-like or zmq.Frame); WireError when malformed.
    map_shared(ref) gives the memoryview a shared-memory reference names (a ReliableReceiver's
    SharedMappings.view); without it such a message is refused."""
    frames = [_bytes_of(f) for f in frames]
    if not frames:
        raise WireError(f"{where}: expected a header frame, found an empty message")
    total = sum(len(f) for f in frames)
    if total > max_message_bytes:
        raise WireError(f"{where}: message size: expected at most max_message_bytes = "
                        f"{max_message_bytes} bytes, found {total}")
    if len(frames[0]) < _HEADER.size:
        raise WireError(f"{where}: header frame: expected {_HEADER.size} bytes, found {len(frames[0])}")
    magic, version, kind, flags, stream_id, seq, count, crc = _HEADER.unpack(frames[0][:_HEADER.size])
    if magic != _MAGIC:
        raise WireError(f"{where}: header frame: expected magic SLCE, found {magic!r}")
    if version != VERSION:
        raise WireError(f"{where}: header frame: expected version 1, found {version}")
    if kind > UPDATE:
        raise WireError(f"{where}: header frame: expected kind 0 to 7 (data, end of stream, error, credit, "
                        f"ack, checkpoint barrier, heartbeat, update), found {kind}")
    packed = bool(flags & FLAG_PACKED)
    shared = bool(flags & FLAG_SHARED)
    control_kind = kind in (CREDIT, ACK, HEARTBEAT)
    header_frame = _HEADER.size + (_CONTROL.size if control_kind else _CHECKPOINT.size if kind == BARRIER else 0)
    if kind == HEARTBEAT and flags & FLAG_SHARE_OFFER:
        header_frame += _SHARED_REF.size  # a sender's offer: its probe
    if control_kind and shared:
        if count > MAX_LEASES:
            raise WireError(f"{where}: seq {seq}: lease count: expected at most {MAX_LEASES}, found {count}")
        header_frame += 8 * count  # a receiver's leases
        if flags & FLAG_PID:
            header_frame += 8  # and its pid
        if flags & FLAG_RING:
            header_frame += _SHARED_REF.size  # and its ring (WIRE_FORMAT.md, "Rings"), which Python does not read
        if flags & FLAG_DEVICES:
            header_frame += DEVICES_BYTES  # and its GPUs ("Device memory"), which Python does not read
    if len(frames[0]) != header_frame and not packed:
        what = " (the header, then its u64 checkpoint number)" if kind == BARRIER else ""
        raise WireError(f"{where}: header frame: expected {header_frame} bytes for kind {_KIND_NAMES[kind]}{what}, "
                        f"found {len(frames[0])}")
    def at():  # formatted only for an error: most messages have none
        return f"{where}: seq {seq}"

    # Data carrying only these flags breaks none of the rules below: the usual message skips them.
    if kind != DATA or flags & ~(FLAG_PACKED | FLAG_CRC | FLAG_TAGS):
        if packed and kind != DATA:
            raise WireError(f"{at()}: flags: expected packed (bit 1) only on data messages, found it on kind {kind}")
        if shared and (packed or kind not in (DATA, UPDATE, CREDIT, ACK, HEARTBEAT)):
            raise WireError(f"{at()}: flags: expected shared (bit 2) only on data, updates and control messages, "
                            f"never packed, found it on kind {_KIND_NAMES[kind]}")
        if flags & FLAG_PID and not (control_kind and shared):
            raise WireError(f"{at()}: flags: expected pid (bit 5) only on control messages that take shared memory "
                            f"(bit 2), found it on kind {_KIND_NAMES[kind]}")
        if flags & FLAG_DEVICES and not (control_kind and shared):
            raise WireError(f"{at()}: flags: expected devices (bit 7) only on control messages that take shared "
                            f"memory (bit 2), found it on kind {_KIND_NAMES[kind]}")
        if flags & FLAG_RING and not (control_kind and shared):
            raise WireError(f"{at()}: flags: expected ring (bit 6) only on control messages that take shared memory "
                            f"(bit 2), found it on kind {_KIND_NAMES[kind]}")
        if flags & FLAG_CONFIRM and not control_kind:
            raise WireError(f"{at()}: flags: expected confirm (bit 8) only on a receiver's control messages, found it "
                            f"on kind {_KIND_NAMES[kind]}")
        if flags & FLAG_TAGS and kind not in (DATA, UPDATE):
            raise WireError(f"{at()}: flags: expected tags (bit 9) only on data and updates, found it on kind "
                            f"{_KIND_NAMES[kind]}")
        if flags & FLAG_SHARE_OFFER and kind != HEARTBEAT:
            raise WireError(f"{at()}: flags: expected share offer (bit 3) only on heartbeats, found it on kind "
                            f"{_KIND_NAMES[kind]}")
    if not flags & FLAG_CRC and crc != 0:
        raise WireError(f"{at()}: crc: expected 0 when flag bit 0 (crc) is clear, found {crc}")
    if kind not in (DATA, UPDATE) and count != 0 and not (control_kind and shared):
        raise WireError(f"{at()}: tensor count: expected 0 for kind {_KIND_NAMES[kind]}, found {count}")
    if kind == UPDATE and count == 0:
        raise WireError(f"{at()}: tensor count: expected at least 1 for kind update, found 0")
    first = 2 if kind == UPDATE else 1  # the frame of tensor 0's .npy header: an update's target comes first
    tagged = bool(flags & FLAG_TAGS)
    expected = (1 if packed else first + 2 * count + tagged if kind in (DATA, UPDATE) else 2 if kind == ERROR
                else 1)
    tensors = count if kind in (DATA, UPDATE) else 0  # a control's count is its leases
    if len(frames) != expected:
        raise WireError(f"{at()}: expected {expected} frames, found {len(frames)}")
    error, control, target = "", Control(), ""
    if kind == ERROR:
        try:
            error = bytes(frames[1]).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError(f"{at()}: error message: expected UTF-8 text, found invalid bytes") from None
    if kind == UPDATE:
        target = _check_target(frames[1], at()).decode("utf-8")
    probe, leases = None, ()
    if control_kind:
        after = _HEADER.size + _CONTROL.size
        control = Control(*_CONTROL.unpack(frames[0][_HEADER.size:after]))
        if kind == HEARTBEAT and flags & FLAG_SHARE_OFFER:
            probe = SharedRef(*_SHARED_REF.unpack(frames[0][after:after + _SHARED_REF.size]))
            after += _SHARED_REF.size
        if shared:
            leases = struct.unpack_from(f"<{count}Q", frames[0], after)
    checkpoint = _CHECKPOINT.unpack(frames[0][_HEADER.size:])[0] if kind == BARRIER else 0
    rest = frames[0][_HEADER.size:] if packed else None
    if packed and tensors > len(rest) // 64:
        raise WireError(f"{at()}: packed frame: expected room for {count} tensors, found {len(rest)} bytes")
    arrays, checksum = [], 0
    for i in range(tensors):
        if packed:
            shape, dtype, header_bytes = _parse_npy_header(rest, lambda: f"{at()}, tensor {i}", whole=False)
            want = dtype.itemsize * math.prod(shape)
            if want > len(rest) - header_bytes:
                raise WireError(f"{at()}, tensor {i}: packed frame: expected {want} bytes of data, "
                                f"found {len(rest) - header_bytes}")
            data, rest = rest[header_bytes:header_bytes + want], rest[header_bytes + want:]
        else:
            shape, dtype, _ = _parse_npy_header(frames[first + 2 * i], lambda: f"{at()}, tensor {i}")
            data = frames[first + 1 + 2 * i]
            want = dtype.itemsize * math.prod(shape)
            if not shared and len(data) != want:
                raise WireError(f"{at()}, tensor {i}: data frame: expected {want} bytes, found {len(data)}")
        if flags & FLAG_CRC:
            checksum = crc32c(data, checksum)
        if shared:
            if bytes(data[:len(DEVICE_REF_PREFIX)]) == DEVICE_REF_PREFIX:
                name = bytes(data[:64]).split(b":")[0].decode("ascii", "replace")
                raise WireError(f"{at()}, tensor {i}: a device reference ({name}), which Python does not open: the "
                                f"tensor is on a GPU of the sender's host (a C++ receiver that names its GPUs takes it)")
            if len(data) != _SHARED_REF.size:
                raise WireError(f"{at()}, tensor {i}: shared-memory reference: expected {_SHARED_REF.size} bytes, "
                                f"found {len(data)}")
            ref = SharedRef(*_SHARED_REF.unpack(data))
            if ref.bytes != want:
                raise WireError(f"{at()}, tensor {i}: shared-memory reference: expected {want} bytes, "
                                f"found {ref.bytes}")
            if map_shared is None:
                raise WireError(f"{at()}, tensor {i}: a shared-memory reference, which only a ReliableReceiver takes")
            data = map_shared(ref)
        arrays.append(np.frombuffer(data, dtype=dtype).reshape(shape))
    tags = {}
    if tagged:  # the last frame, or the rest of a packed one
        block, rest = (rest, b"") if packed else (frames[-1], rest)
        if not len(block):
            raise WireError(f"{at()}: tags: expected a tags block (flag bit 9), found none")
        tags = decode_tags(block, at())
    if packed and len(rest):
        raise WireError(f"{at()}: packed frame: expected nothing after tensor {count}, found {len(rest)} more bytes")
    if flags & FLAG_CRC and checksum != crc:
        raise WireError(f"{at()}: CRC-32C mismatch: the header says {crc}, the data frames give {checksum}")
    return Message(kind, stream_id, seq, arrays, error, flags, control, checkpoint, target, probe, leases, tags)


def send(socket, arrays, seq=0, stream_id=0, crc=False, tags=None):
    """Sends arrays as one data message, with their tags if any; their data is not copied."""
    socket.send_multipart(encode(arrays, seq, stream_id, crc, tags=tags), copy=False)


def send_end_of_stream(socket, seq, stream_id=0):
    socket.send_multipart(encode_end_of_stream(seq, stream_id))


def send_error(socket, text, seq, stream_id=0):
    socket.send_multipart(encode_error(text, seq, stream_id))


def send_barrier(socket, checkpoint, seq, stream_id=0):
    socket.send_multipart(encode_barrier(checkpoint, seq, stream_id))


def send_update(socket, target, arrays, seq, stream_id=0, crc=False):
    """Sends an update of target (a pipeline stage) to arrays; their data is not copied."""
    socket.send_multipart(encode_update(target, arrays, seq, stream_id, crc), copy=False)


def recv(socket, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES):
    """The next message on the socket (blocking as the socket does); WireError when malformed."""
    return decode(socket.recv_multipart(copy=False), max_message_bytes)


# ---- reliable mode (WIRE_FORMAT.md, "Reliable mode"): pyzmq from here on.

def _zmq():
    import zmq  # only reliable mode needs pyzmq
    return zmq


def _new_session():
    import secrets
    return secrets.randbits(64) or 1


def _endpoint(endpoint, bind_by_default):
    if endpoint[:1] in "@>":
        return endpoint[1:], endpoint[0] == "@"
    return endpoint, bind_by_default


def _curve_client(socket, secret, server):
    """CurveZMQ client keys on a sender's socket: its own certificate (the _secret file)
    and the receiver's public certificate, both as `sluice keygen` or zcert write them."""
    import zmq.auth
    public, secret_key = zmq.auth.load_certificate(secret)
    if not secret_key:
        raise WireError(f"curve: {secret}: expected a secret certificate, found a public one")
    socket.curve_publickey, socket.curve_secretkey = public, secret_key
    socket.curve_serverkey, _ = zmq.auth.load_certificate(server)


_authenticators = {}  # context -> [its ZAP handler, the receivers using it]


def _curve_server(socket, context, secret, allow):
    """CurveZMQ server keys on a receiver's socket, and a ZAP handler (pyzmq's own) that
    lets in the senders whose public certificates are in the directory `allow`; a
    context's handler runs while a receiver uses it (_curve_server_closed)."""
    import os
    import zmq.auth
    from zmq.auth.thread import ThreadAuthenticator
    public, secret_key = zmq.auth.load_certificate(secret)
    if not secret_key:
        raise WireError(f"curve: {secret}: expected a secret certificate, found a public one")
    if not allow or not os.path.isdir(allow):
        raise WireError(f"curve: expected a directory of allowed senders' public certificates, found {allow!r}")
    # Every file of the directory, as sluice's C++ receiver reads it (pyzmq's own
    # configure_curve would take only files named *.key).
    allowed = {zmq.auth.load_certificate(os.path.join(allow, name))[0]
               for name in os.listdir(allow) if os.path.isfile(os.path.join(allow, name))}

    class AllowList:
        def callback(self, domain, key):
            return key in allowed

    if context not in _authenticators:
        _authenticators[context] = [ThreadAuthenticator(context), 0]
        _authenticators[context][0].start()
    auth = _authenticators[context][0]
    _authenticators[context][1] += 1
    domain = f"sluice-{id(socket)}"
    auth.configure_curve_callback(domain=domain, credentials_provider=AllowList())
    socket.zap_domain = domain.encode()
    socket.curve_server = True
    socket.curve_publickey, socket.curve_secretkey = public, secret_key


def _curve_server_closed(context):
    """One receiver fewer on the context's ZAP handler: the last stops its thread, which
    would otherwise keep the interpreter from exiting."""
    entry = _authenticators.get(context)
    if entry:
        entry[1] -= 1
        if entry[1] == 0:
            entry[0].stop()
            del _authenticators[context]


class ReliableSender:
    """Sends messages that are kept until the receiver acknowledges them, within the
    receiver's credit, and sent again to a receiver that restarts. The protocol runs
    inside send, flush and poll: call poll() while idle for long, so the receiver
    keeps hearing heartbeats."""

    def __init__(self, endpoint, stream_id=0, credit_messages=1000, credit_bytes=256 << 20,
                 heartbeat_interval=0.5, missed_heartbeats=6, peer_timeout=60.0, pack_below=4096,
                 crc=False, context=None, curve_secret=None, curve_server=None, first_seq=0):
        """curve_secret and curve_server: CurveZMQ over tcp, with this sender's secret
        certificate and the receiver's public one. first_seq: the seq of the first message
        (a sender restored from a checkpoint goes on with its stream's numbering)."""
        zmq = _zmq()
        self.session = _new_session()
        self.stream_id, self.crc, self.pack_below = stream_id, crc, pack_below
        self.own_messages, self.own_bytes = credit_messages, credit_bytes
        self.interval, self.dead_after, self.peer_timeout = heartbeat_interval, heartbeat_interval * missed_heartbeats, peer_timeout
        self.socket = (context or zmq.Context.instance()).socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, b"S" + struct.pack("<Q", self.session))
        self.socket.setsockopt(zmq.IMMEDIATE, 1)
        self.socket.setsockopt(zmq.SNDHWM, 0)
        self.socket.setsockopt(zmq.RECONNECT_IVL, 100)
        self.socket.setsockopt(zmq.RECONNECT_IVL_MAX, 5000)
        if curve_secret:
            _curve_client(self.socket, curve_secret, curve_server)
        address, bind = _endpoint(endpoint, False)
        (self.socket.bind if bind else self.socket.connect)(address)
        self.where = f"sender {address}"
        self.kept = []                  # [seq, frames, bytes] in seq order; [:sent] are on the wire
        self.sent = self.sent_bytes = self.kept_bytes = 0
        self.next_seq = first_seq
        self.receiver, self.grant, self.rewind_seen = 0, Control(), 0
        # The least credit the receiver granted: what it grants above is for messages it has
        # finished and not committed (a checkpointing receiver), kept beyond this sender's own.
        self.base_messages = self.base_bytes = 0
        now = time.monotonic()
        self.opened = self.last_heard = now
        self.last_sent = now - heartbeat_interval
        self.heard = False
        self.first_seq = first_seq
        self.refusals = []  # Refusal(seq, why): messages the receiver refused, once per seq, in order

    def _oldest(self):
        return self.kept[0][0] if self.kept else self.next_seq

    def _alive(self, now):
        return self.heard and now - self.last_heard <= self.dead_after

    def _check_receiver(self, now, waiting):
        if self._alive(now):
            return
        since = self.last_heard + self.dead_after if self.heard else self.opened
        if now - since >= self.peer_timeout:
            lost = len(self.kept) + waiting
            what = "the receiver went silent" if self.heard else "no receiver answered"
            raise WireError(f"{self.where}: {what} for {now - since:.1f} s: {lost} message(s) not delivered")

    def _heartbeat(self, now):
        zmq = _zmq()
        # Its own credit, so that its receiver acknowledges in batches that fit it.
        frames = encode_control(HEARTBEAT, Control(self.session, self._oldest() + self.sent, self.own_messages),
                                self._oldest(), self.stream_id)
        try:
            self.socket.send_multipart(frames, flags=zmq.DONTWAIT)
            self.last_sent = now
        except zmq.Again:
            pass  # no connection yet: tried again soon

    def _handle(self, m, now):
        c = m.control
        if c.session == 0 or c.credit_messages == 0 or c.credit_bytes == 0:
            raise WireError(f"{self.where}: expected a receiver's record (a session and credit)")
        self.last_heard, self.heard = now, True
        if c.session != self.receiver:
            # A receiver new to this sender: everything kept goes to it again.
            self.receiver, self.rewind_seen, self.sent, self.sent_bytes = c.session, c.rewind, 0, 0
            self.base_messages, self.base_bytes = c.credit_messages, c.credit_bytes
            self._heartbeat(now)
        elif c.rewind > self.rewind_seen:
            self.rewind_seen = c.rewind
            if c.next >= self._oldest():
                keep = min(c.next - self._oldest(), self.sent)
                self.sent, self.sent_bytes = keep, sum(k[2] for k in self.kept[:keep])
            else:
                self._heartbeat(now)
        self.grant = c
        self.base_messages = min(self.base_messages, c.credit_messages)
        self.base_bytes = min(self.base_bytes, c.credit_bytes)
        while self.kept and self.kept[0][0] < m.seq:
            seq, frames, size = self.kept.pop(0)
            self.kept_bytes -= size
            if self.sent > 0:
                self.sent -= 1
                self.sent_bytes -= size
        if m.flags & FLAG_CONFIRM:
            self._heartbeat(now)  # a closing receiver waits to know the acknowledgement arrived

    def _record_refusal(self, m):
        """An error record from the receiver: it refused message m.seq. One of a seq this sender
        never sent (stale) is ignored, and a seq refused again (sent again to a receiver that
        restarted) is recorded once."""
        if self.first_seq <= m.seq < self.next_seq and all(r.seq != m.seq for r in self.refusals):
            self.refusals.append(Refusal(m.seq, m.error))

    def _transmit(self, now):
        zmq = _zmq()
        if not self.receiver or not self._alive(now):
            return
        g = self.grant
        while self.sent < len(self.kept) and self.sent < g.credit_messages and (
                self.sent == 0 or self.sent_bytes + self.kept[self.sent][2] <= g.credit_bytes):
            seq, frames, size = self.kept[self.sent]
            if size > g.max_message_bytes:
                raise WireError(f"{self.where}: seq {seq}: message size: the receiver takes at most "
                                f"{g.max_message_bytes} bytes, found {size}")
            try:
                self.socket.send_multipart(frames, flags=zmq.DONTWAIT, copy=False)
            except zmq.Again:
                return
            self.sent += 1
            self.sent_bytes += size
            self.last_sent = now

    def poll(self, wait=0.0):
        """Reads the receiver's messages, beats and sends what the credit allows, waiting up to wait seconds."""
        zmq = _zmq()
        while True:
            now = time.monotonic()
            if self.socket.poll(0, zmq.POLLIN):
                try:
                    m = decode(self.socket.recv_multipart(copy=False), 4096, self.where)
                    if m.kind == ERROR:
                        self._record_refusal(m)
                        continue
                    if m.kind not in (CREDIT, ACK, HEARTBEAT):
                        raise WireError(f"{self.where}: expected credit, ack, heartbeat or error, found kind {m.kind}")
                    self._handle(m, now)
                except WireError:
                    pass  # a receiver sends nothing else; a malformed record is dropped like noise
                continue
            if now - self.last_sent >= self.interval:
                self._heartbeat(now)
            self._transmit(now)
            if wait <= 0:
                return
            step = min(wait, 0.005 if not self.receiver or now - self.last_sent >= self.interval else self.interval)
            self.socket.poll(int(step * 1000) + 1, zmq.POLLIN)
            wait -= step

    def _room_for(self, size):
        """Room to keep one more message: this sender's own credit, and what the receiver grants
        above its least grant (messages it finished and has not committed)."""
        if not self.kept:
            return True
        finished_messages = self.grant.credit_messages - self.base_messages if self.receiver else 0
        finished_bytes = self.grant.credit_bytes - self.base_bytes if self.receiver else 0
        return (len(self.kept) < self.own_messages + finished_messages
                and self.kept_bytes + size <= self.own_bytes + finished_bytes)

    def _send(self, frames_of_seq, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.poll()
            frames = frames_of_seq(self.next_seq)
            size = sum(len(f) for f in frames)
            if self._room_for(size):
                break
            now = time.monotonic()
            self._check_receiver(now, 1)
            if deadline is not None and now >= deadline:
                return False
            self.poll(self.interval if deadline is None else min(self.interval, deadline - now))
        self.kept.append([self.next_seq, frames, size])
        self.kept_bytes += size
        self.next_seq += 1
        self._transmit(time.monotonic())
        return True

    def send(self, arrays, timeout=None):
        """Keeps and sends one data message; False when there was no room within timeout seconds."""
        return self._send(lambda seq: [bytes(f) for f in encode(arrays, seq, self.stream_id, self.crc, self.pack_below)],
                          timeout)

    def send_end_of_stream(self, timeout=None):
        return self._send(lambda seq: encode_end_of_stream(seq, self.stream_id), timeout)

    def send_error(self, text, timeout=None):
        return self._send(lambda seq: encode_error(text, seq, self.stream_id), timeout)

    def send_barrier(self, checkpoint, timeout=None):
        """Keeps and sends a checkpoint barrier, numbered and delivered in order like data."""
        return self._send(lambda seq: encode_barrier(checkpoint, seq, self.stream_id), timeout)

    def send_update(self, target, arrays, timeout=None):
        """Keeps and sends an update of target (a pipeline stage) to arrays, numbered and delivered
        in order like data; a refusal from the receiver lands in self.refusals. WireError at once
        for an empty or non-UTF-8 target, or no arrays."""
        _check_target(target, f"{self.where}: send_update")  # before anything is kept
        if not arrays:
            raise WireError(f"{self.where}: send_update: expected at least 1 array, found 0")
        return self._send(lambda seq: [bytes(f) for f in encode_update(target, arrays, seq, self.stream_id, self.crc)],
                          timeout)

    def flush(self, timeout=60.0):
        """Returns once the receiver has acknowledged everything; WireError naming the count otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if not self.kept:
                return
            now = time.monotonic()
            self._check_receiver(now, 0)
            if now >= deadline:
                raise WireError(f"{self.where}: flush: {len(self.kept)} message(s) not acknowledged within {timeout} s")
            self.poll(min(self.interval, deadline - now))

    def close(self):
        self.socket.close(linger=0)


class _Peer:
    def __init__(self, routing_id, stream_id, start):
        self.routing_id, self.stream_id = routing_id, stream_id
        self.expected = self.acked = self.acked_sent = start
        self.done, self.rewind, self.rewound, self.last_sent = set(), 0, 0.0, 0.0
        self.confirmed = 0  # what the sender's last heartbeat says it has had acknowledged
        self.sender_credit = 0  # the credit its heartbeats say it keeps (0: not said)
        # Shared memory: whether this receiver takes the sender's references (None: not decided
        # yet), its segments mapped, and the seqs whose arrays still view them (arrays left), which
        # every record lists: the sender reuses a message's memory once it is acked and not listed.
        self.share, self.mappings, self.leased, self.leases_changed = None, SharedMappings(), {}, False


class ReliableReceiver:
    """Takes each sender's messages once and in order, grants credit, and counts a message
    done with when recv is called again (or at close): a message being worked on when the
    process dies is sent again to the receiver that takes its place. What is done with is
    acknowledged in batches, and all of it once the socket has stayed quiet (_ACK_DELAY)."""

    def __init__(self, endpoint, credit_messages=1000, credit_bytes=256 << 20,
                 max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, heartbeat_interval=0.5, context=None,
                 curve_secret=None, curve_allow=None, shared_memory=True, pack_below=4096):
        """curve_secret and curve_allow: CurveZMQ over tcp, with this receiver's secret
        certificate and a directory of the allowed senders' public certificates. shared_memory:
        take a same-host sluice sender's shared memory in place (arrays view it, no copy); an
        array below pack_below bytes is copied out of it at once (holding none of its memory)."""
        self.shared_memory, self.shared, self.pack_below = shared_memory, 0, pack_below
        zmq = _zmq()
        self.session = _new_session()
        self.credit_messages, self.credit_bytes = credit_messages, credit_bytes
        self.max_message_bytes, self.interval = max_message_bytes, heartbeat_interval
        context = context or zmq.Context.instance()
        self.socket = context.socket(zmq.ROUTER)
        self.curve_context = context if curve_secret else None
        if curve_secret:
            _curve_server(self.socket, context, curve_secret, curve_allow)
        self.socket.setsockopt(zmq.ROUTER_HANDOVER, 1)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.socket.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        address, bind = _endpoint(endpoint, True)
        (self.socket.bind if bind else self.socket.connect)(address)
        self.endpoint = self.socket.getsockopt(zmq.LAST_ENDPOINT).decode()
        self.where = f"receiver {self.endpoint}"
        self.peers, self.handed, self.duplicates, self.rejected = {}, None, 0, 0
        self.ready = collections.deque()  # (routing id, message) taken and not yet returned: a batch's rest
        self.closing = False  # its control messages ask for a confirming heartbeat (FLAG_CONFIRM)

    def _control(self, peer, kind):
        zmq = _zmq()
        record = Control(self.session, peer.expected, self.credit_messages, self.credit_bytes,
                         self.max_message_bytes, peer.rewind)
        try:
            frames = encode_control(kind, record, peer.acked, peer.stream_id,
                                    leases=sorted(peer.leased) if peer.share else None,
                                    pid=os.getpid() if peer.share else 0, takes_batches=True,
                                    confirm=self.closing)
            self.socket.send_multipart([peer.routing_id] + frames, flags=zmq.DONTWAIT)
            peer.last_sent = time.monotonic()
            peer.acked_sent = max(peer.acked_sent, peer.acked)
            peer.leases_changed = False
        except (zmq.Again, zmq.ZMQError):
            pass  # the next heartbeat says it again

    def _ask_resend(self, peer):
        now = time.monotonic()
        if peer.rewind and now - peer.rewound < self.interval:
            return
        peer.rewind, peer.rewound = peer.rewind + 1, now
        self._control(peer, CREDIT)

    def _settle(self, flush):
        if self.handed:
            routing_id, seq = self.handed
            self.handed = None
            p = self.peers.get(routing_id)
            if p and seq >= p.acked:
                p.done.add(seq)
                while p.acked in p.done:
                    p.done.discard(p.acked)
                    p.acked += 1
        for p in self.peers.values():
            # An eighth of the smaller credit, as the C++ receiver's (its sender's heartbeats say its own).
            credit = min(self.credit_messages, p.sender_credit) if p.sender_credit else self.credit_messages
            batch = max(1, credit // 8)
            if p.acked > p.acked_sent and (flush or p.acked - p.acked_sent >= batch):
                self._control(p, ACK)
            elif p.leases_changed and flush:
                self._control(p, CREDIT)

    def _takes_shared(self, m):
        """Whether this receiver maps the memory of the sender whose heartbeat m offers it."""
        if not self.shared_memory or m.probe is None:
            return False
        try:
            (session,) = struct.unpack("<Q", bytes(SharedMappings().view(m.probe._replace(bytes=8))))
            return session == m.control.session
        except (WireError, OSError, ValueError):
            return False  # another host, user or process namespace: the sender sends copies

    def _lease(self, p, m, views):
        """The arrays of a shared message view the sender's memory (views[i], arrays[i]'s), which
        it reuses once they are gone (the records list the seq until then). A small array is
        copied out at once: viewed, it would keep the memory of its whole message (a chunk's
        labels, kept, holding the chunk's signal). Past half the credit held so, all are copies."""
        self.shared += 1
        arrays = [a.copy() if a.nbytes < self.pack_below else a for a in m.arrays]
        views = [v for a, v in zip(arrays, views) if not a.flags.writeable]
        if len(p.leased) >= min(MAX_LEASES, max(1, self.credit_messages // 2)) or not views:
            return m._replace(arrays=[a if a.flags.writeable else a.copy() for a in arrays])
        m = m._replace(arrays=arrays)
        seq = m.seq
        p.leased[seq] = len(views)

        def release():
            left = p.leased.get(seq, 0) - 1
            if left > 0:
                p.leased[seq] = left
            else:
                p.leased.pop(seq, None)
                p.leases_changed = True
        for v in views:
            weakref.finalize(v, release)
        return m

    def _accept(self, frames):
        """Takes what one read holds: the messages for the owner go to self.ready (a batch's, in order)."""
        routing_id = bytes(frames[0])
        if len(routing_id) != 9 or routing_id[:1] != b"S":
            return  # not a sluice sender
        first = frames[1].buffer if len(frames) > 1 and hasattr(frames[1], "buffer") else None
        if len(frames) == 2 and first is not None and len(first) >= _HEADER.size and first[5] == BATCH:
            if routing_id not in self.peers:
                self._control(_Peer(routing_id, 0, 0), CREDIT)  # makes the sender say where it stands
                return
            try:
                entries = split_batch(first, self.where)
            except WireError:
                self._take_unreadable(routing_id, first, batch=True)
                return
            for entry in entries:
                self._accept_one(routing_id, [entry])
            return
        self._accept_one(routing_id, frames[1:])

    def _accept_one(self, routing_id, frames):
        p = self.peers.get(routing_id)
        views = []  # of the sender's shared memory, which its arrays keep alive

        def map_shared(ref):
            if p is None or not p.share:
                raise WireError(f"{self.where}: a shared-memory reference from a sender not agreed to share")
            views.append(p.mappings.view(ref))
            return views[-1]
        try:
            m = decode(frames, self.max_message_bytes, self.where, map_shared)
        except WireError:
            if frames:
                self._take_unreadable(routing_id, frames[0])
            return
        if m.kind == HEARTBEAT:
            if p is None:
                p = self.peers[routing_id] = _Peer(routing_id, m.stream_id, m.seq)
            if p.share is None:
                p.share = self._takes_shared(m)
            p.confirmed = max(p.confirmed, m.seq)
            if m.control.credit_messages:
                p.sender_credit = m.control.credit_messages
            if m.seq > p.expected:
                p.expected = p.acked = m.seq
                p.done = {s for s in p.done if s >= m.seq}
            if m.control.next > p.expected:
                self._ask_resend(p)
            else:
                self._control(p, CREDIT)
            return
        if m.kind not in (DATA, END_OF_STREAM, ERROR, BARRIER, UPDATE):
            return
        if p is None:
            self._control(_Peer(routing_id, m.stream_id, 0), CREDIT)  # makes the sender say where it stands
            return
        if m.seq < p.expected:
            self.duplicates += 1
            return
        if m.seq > p.expected:
            self._ask_resend(p)
            return
        p.expected += 1
        self.ready.append((routing_id, self._lease(p, m, views) if m.flags & FLAG_SHARED else m))

    def _take_unreadable(self, routing_id, header_frame, batch=False):
        """A message that could not be read still takes its place in its sender's stream (its header,
        when that reads, says which; a batch's, its count of places, at most one per 40 bytes), or the
        sender would send it again for ever. Done with at once: acknowledged with the next record."""
        self.rejected += 1
        p = self.peers.get(routing_id)
        head = _bytes_of(header_frame)
        if p is None or len(head) < _HEADER.size:
            return
        magic, version, _kind, _flags, _stream_id, seq, count, _crc = _HEADER.unpack(head[:_HEADER.size])
        if magic != _MAGIC or version != VERSION or seq != p.expected:
            return
        places = min(count, len(head) // (8 + _HEADER.size)) if batch else 1
        for _ in range(places):
            p.done.add(p.expected)
            p.expected += 1
        while p.acked in p.done:
            p.done.discard(p.acked)
            p.acked += 1

    def refuse(self, message, why):
        """Tells the sender of message, the last one recv returned (the only one not yet
        acknowledged), that it is refused, saying why (cut to MAX_REFUSAL_BYTES). Sent at once,
        so before the acknowledgement at the next recv; it does not acknowledge by itself."""
        if self.handed is None or self.handed[1] != message.seq:
            raise WireError(f"{self.where}: refuse: seq {message.seq}: expected the last message recv returned, "
                            f"found another")
        routing_id, seq = self.handed
        text = why.encode("utf-8")[:MAX_REFUSAL_BYTES].decode("utf-8", "ignore")  # never half a character
        try:
            self.socket.send_multipart([routing_id] + encode_error(text, seq, message.stream_id))
        except _zmq().ZMQError as e:
            raise WireError(f"{self.where}: refuse: seq {seq}: the sender is not connected ({e})") from None

    def recv(self, timeout=None):
        """The next message (DATA, END_OF_STREAM, ERROR, BARRIER or UPDATE), or None after timeout seconds."""
        zmq = _zmq()
        self._settle(False)
        deadline = None if timeout is None else time.monotonic() + timeout
        quiet_since = None  # when the socket ran dry in this call
        while True:
            if self.ready:
                routing_id, m = self.ready.popleft()
                self.handed = (routing_id, m.seq)
                return m
            if self.socket.poll(0, zmq.POLLIN):
                self._accept(self.socket.recv_multipart(copy=False))
                continue
            now = time.monotonic()
            quiet_since = now if quiet_since is None else quiet_since
            quiet = now - quiet_since >= _ACK_DELAY
            self._settle(quiet)
            for p in self.peers.values():
                if now - p.last_sent >= self.interval:
                    self._control(p, HEARTBEAT)
            if deadline is not None and now >= deadline:
                return None
            step = self.interval if quiet else _ACK_DELAY
            step = step if deadline is None else min(step, deadline - now)
            self.socket.poll(int(step * 1000) + 1, zmq.POLLIN)

    def close(self, linger=2.0):
        """Acknowledges the last message received, waits (up to linger seconds) until each
        sender's heartbeat confirms it has the acknowledgement, and closes the socket."""
        zmq = _zmq()
        self.closing, closing_at = True, time.monotonic()
        self._settle(True)
        for p in self.peers.values():  # an acknowledgement sent before without asking goes again
            if p.confirmed < p.acked_sent and p.last_sent < closing_at:
                self._control(p, ACK)
        deadline = time.monotonic() + linger
        while any(p.confirmed < p.acked_sent for p in self.peers.values()) and time.monotonic() < deadline:
            if self.socket.poll(10, zmq.POLLIN):
                self._accept(self.socket.recv_multipart(copy=False))
        # Taken and never returned: not taken after all, its sender sends it to the next receiver.
        while self.ready:
            routing_id, _ = self.ready.pop()
            self.peers[routing_id].expected -= 1
        self.socket.close(linger=int(linger * 1000))
        if self.curve_context is not None:
            _curve_server_closed(self.curve_context)
            self.curve_context = None


class ServingClient:
    """A client of a sluice ServingEndpoint: a DEALER socket (connecting unless the endpoint
    starts with '@') that sends each request as a data message with a fresh seq and takes the
    reply with that seq. One thread at a time, as any pyzmq socket."""

    def __init__(self, endpoint, stream_id=0, max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES, pack_below=4096,
                 context=None):
        zmq = _zmq()
        self.stream_id, self.max_message_bytes, self.pack_below = stream_id, max_message_bytes, pack_below
        self.socket = (context or zmq.Context.instance()).socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)  # a client that is gone wants no replies
        address, bind = _endpoint(endpoint, False)
        (self.socket.bind if bind else self.socket.connect)(address)
        self.where = f"serving client {address}"
        self.next_seq = 0

    def send(self, arrays, timeout_ms=60000):
        """Sends arrays as one request (their data is not copied); returns its seq. WireError when
        the socket takes it not within timeout_ms (a DEALER has no room while no server is
        connected, and one that refused this client at the handshake never is)."""
        zmq = _zmq()
        seq = self.next_seq
        frames = encode(arrays, seq, self.stream_id, pack_below=self.pack_below)
        try:  # a connected DEALER has room: no poll first
            self.socket.send_multipart(frames, zmq.NOBLOCK, copy=False)
        except zmq.Again:
            if not self.socket.poll(max(0, int(timeout_ms)), zmq.POLLOUT):
                raise WireError(f"{self.where}: request seq {seq}: expected a server taking it within "
                                f"{timeout_ms} ms, found none connected") from None
            self.socket.send_multipart(frames, copy=False)
        self.next_seq += 1
        return seq

    def recv(self, timeout_ms):
        """The next reply, DATA or ERROR, its seq saying which request it answers; None after
        timeout_ms. WireError when it is malformed."""
        zmq = _zmq()
        try:  # a reply waiting (a poller said so): no poll of the socket's own first
            frames = self.socket.recv_multipart(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            if not self.socket.poll(max(0, int(timeout_ms)), zmq.POLLIN):
                return None
            frames = self.socket.recv_multipart(copy=False)
        return decode(frames, self.max_message_bytes, self.where)

    def call(self, arrays, timeout_ms=60000):
        """Sends arrays and returns the reply's arrays. WireError with the server's text for an
        error reply, or naming the endpoint and timeout_ms when no reply came."""
        deadline = time.monotonic() + timeout_ms / 1000
        seq = self.send(arrays, timeout_ms)
        while True:
            left = deadline - time.monotonic()
            # Polled first: right after the send, a reply is seldom there already.
            m = self.recv(0) if left > 0 and self.socket.poll(int(left * 1000), _zmq().POLLIN) else None
            if m is None:
                raise WireError(f"{self.where}: request seq {seq}: expected a reply within {timeout_ms} ms, found none")
            if m.seq != seq:
                continue  # a late reply to an earlier request
            if m.kind == ERROR:
                raise WireError(f"{self.where}: request seq {seq}: error reply: {m.error}")
            if m.kind != DATA:
                raise WireError(f"{self.where}: request seq {seq}: expected a data or error reply, "
                                f"found kind {_KIND_NAMES[m.kind]}")
            return list(m.arrays)

    def close(self):
        self.socket.close(linger=0)
