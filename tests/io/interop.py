"""The Python end of the interop tests (python_interop_test.cpp drives it).

    interop.py produce ENDPOINT N   send N messages [f32[4][3], s64[5]] (and one error), then end of stream,
                                    reliably (wire.ReliableSender); exit 0 once all was acknowledged
    interop.py consume ENDPOINT N   receive N messages (wire.ReliableReceiver), check each is twice
                                    what produce sent, exit 0
    interop.py produce-barriers ENDPOINT   send data, checkpoint barrier, data, barrier, end of stream reliably:
                                    message 2k is s64[1] holding k, message 2k + 1 the barrier of checkpoint k + 1
    interop.py consume-barriers ENDPOINT   bind, receive what produce-barriers sends (from C++), check it, exit 0
    interop.py produce-updates ENDPOINT   send data, an update of "scale", an update of "missing", data and the end
                                    reliably (stream 5); exit 0 once all was acknowledged and the receiver refused
                                    exactly the update of "missing" (seq 2), saying REFUSAL
    interop.py consume-updates ENDPOINT   bind, receive what produce-updates sends (from C++), check it, refuse
                                    the update of "missing" saying REFUSAL, exit 0
    interop.py consume-shared ENDPOINT N SHARED   bind, receive N messages from a sluice sender on this host
                                    (wire_peer shm-send) with shared_memory SHARED (0 or 1), check each came
                                    as shared-memory references exactly when SHARED, that an array kept all
                                    along is never overwritten, that the small arrays kept hold no lease,
                                    and print the SHA-256 of every array's bytes
    interop.py selftest             sluice.wire alone: round trips, packed, control, barrier and update messages,
                                    malformed ones, and a reliable sender and receiver in one process

produce and consume take CurveZMQ certificates after N: produce SECRET SERVER (its secret certificate,
the receiver's public one), consume SECRET ALLOW (its secret certificate, a directory of allowed senders).

Every receive has a timeout; any failure exits non-zero with the reason.
"""

import io
import struct
import sys
import time

import numpy as np
import zmq

from sluice import wire

TIMEOUT_MS = 60000


def message(i):
    a = np.arange(12, dtype=np.float32).reshape(4, 3) * np.float32(i) + np.float32(0.5)
    b = np.arange(5, dtype=np.int64) - i
    return [a, b]


def produce(endpoint, n, curve=()):
    out = wire.ReliableSender(endpoint, peer_timeout=TIMEOUT_MS / 1000,
                                     curve_secret=curve[0] if curve else None, curve_server=curve[1] if curve else None)
    for i in range(n):
        if i == n // 2:
            out.send_error("python producer: halfway (not data)")
        # Every other message carries a CRC, which the C++ reader checks.
        out.crc = i % 2 == 0
        out.send(message(i))
    out.send_end_of_stream()
    out.flush(timeout=TIMEOUT_MS / 1000)
    out.close()


def stream_of(receiver, n):
    """Yields (i, message) for the n data messages of a stream, seq 0 to n - 1 in order,
    then checks that its end of stream comes next."""
    for i in range(n + 1):
        m = receiver.recv(timeout=TIMEOUT_MS / 1000)
        assert m is not None, f"message {i}: nothing within {TIMEOUT_MS} ms"
        if i == n:
            assert m.kind == wire.END_OF_STREAM, f"expected the end of stream, found kind {m.kind}"
            return
        assert m.kind == wire.DATA and m.seq == i, f"message {i}: kind {m.kind}, seq {m.seq}"
        yield i, m


def consume(endpoint, n, curve=()):
    inp = wire.ReliableReceiver("@" + endpoint, curve_secret=curve[0] if curve else None,
                                       curve_allow=curve[1] if curve else None)
    for i, m in stream_of(inp, n):
        want = [2 * x for x in message(i)]
        assert len(m.arrays) == 2, f"message {i}: expected 2 arrays, found {len(m.arrays)}"
        for got, w in zip(m.arrays, want):
            assert got.dtype == w.dtype and got.shape == w.shape, f"message {i}: {got.dtype}{got.shape} != {w.dtype}{w.shape}"
            assert np.array_equal(got, w), f"message {i}: {got} != {w}"
    inp.close()  # acknowledges the end of stream: the C++ sink's finish returns


BARRIER_ROUNDS = 3


def produce_barriers(endpoint):
    out = wire.ReliableSender(endpoint, stream_id=5, peer_timeout=TIMEOUT_MS / 1000)
    for k in range(BARRIER_ROUNDS):
        out.send([np.array([k], dtype=np.int64)])
        out.send_barrier(k + 1)
    out.send_end_of_stream()
    out.flush(timeout=TIMEOUT_MS / 1000)
    out.close()


def check_barrier_stream(next_message):
    """Checks what produce-barriers sends, one message from next_message() at a time."""
    for k in range(BARRIER_ROUNDS):
        m = next_message()
        assert m.kind == wire.DATA and m.seq == 2 * k, f"round {k}: expected data seq {2 * k}, found {m}"
        assert m.arrays[0].tolist() == [k], f"round {k}: found {m.arrays[0]}"
        m = next_message()
        assert m.kind == wire.BARRIER, f"round {k}: expected a barrier, found kind {m.kind}"
        assert (m.seq, m.checkpoint) == (2 * k + 1, k + 1), f"round {k}: found seq {m.seq}, checkpoint {m.checkpoint}"
    m = next_message()
    assert m.kind == wire.END_OF_STREAM, f"expected the end of stream, found kind {m.kind}"


def consume_barriers(endpoint):
    inp = wire.ReliableReceiver("@" + endpoint)

    def next_message():
        m = inp.recv(timeout=TIMEOUT_MS / 1000)
        assert m is not None, f"nothing within {TIMEOUT_MS} ms"
        return m
    check_barrier_stream(next_message)
    inp.close()


UPDATE_WEIGHTS = np.array([1.5, -2.0, 3.25], dtype=np.float32)
REFUSAL = "no stage named 'missing' (\u00e9)"


def produce_updates(endpoint):
    out = wire.ReliableSender(endpoint, stream_id=5, peer_timeout=TIMEOUT_MS / 1000)
    out.send([np.array([0], dtype=np.int64)])
    out.send_update("scale", [UPDATE_WEIGHTS])
    out.send_update("missing", [UPDATE_WEIGHTS])
    out.send([np.array([3], dtype=np.int64)])
    out.send_end_of_stream()
    out.flush(timeout=TIMEOUT_MS / 1000)
    assert out.refusals == [wire.Refusal(2, REFUSAL)], f"refusals when flush returned: {out.refusals}"
    out.close()


def check_update_stream(next_message, refuse, first=0):
    """Checks what produce-updates sends, numbered from first, one message from next_message()
    at a time, and refuses the update of "missing" with refuse(message)."""
    m = next_message()
    assert (m.kind, m.seq, m.arrays[0].tolist()) == (wire.DATA, first, [0]), f"expected data 0, found {m}"
    for seq, target in ((first + 1, "scale"), (first + 2, "missing")):
        m = next_message()
        assert (m.kind, m.seq, m.stream_id, m.target) == (wire.UPDATE, seq, 5, target), \
            f"expected the update of {target!r} at seq {seq}, found {m}"
        assert len(m.arrays) == 1 and np.array_equal(m.arrays[0], UPDATE_WEIGHTS), m.arrays
        if target == "missing":
            refuse(m)
    m = next_message()
    assert (m.kind, m.seq, m.arrays[0].tolist()) == (wire.DATA, first + 3, [3]), f"expected data 3, found {m}"
    m = next_message()
    assert m.kind == wire.END_OF_STREAM, f"expected the end of stream, found kind {m.kind}"


def consume_updates(endpoint):
    inp = wire.ReliableReceiver("@" + endpoint)

    def next_message():
        m = inp.recv(timeout=TIMEOUT_MS / 1000)
        assert m is not None, f"nothing within {TIMEOUT_MS} ms"
        return m
    check_update_stream(next_message, lambda m: inp.refuse(m, REFUSAL))
    inp.close()


def consume_burst(endpoint, n):
    """Takes n int64 scalars 0, 1, 2... in order, then the end of stream: a burst its C++
    sender coalesces into batches, which this receiver splits."""
    r = wire.ReliableReceiver("@" + endpoint)
    for i, m in stream_of(r, n):
        assert int(m.arrays[0]) == i, f"message {i}: {m.arrays[0]}"
    r.close()


def expected_tags(i):
    """The tags C++ sends with message i (python_interop_test.cpp, TagsCrossFromCppToPython)."""
    return {("time_ns", -1): 1_000_000 + 250 * i, ("clock", -1): "monotonic", ("sample_rate", -1): 4000.0,
            ("source", -1): "capteur é", ("window", -1): np.arange(3, dtype=np.int16) * i, ("event", i % 4): i}


def consume_tags(endpoint, n):
    """Takes n messages from C++ (small: packed, and coalesced into batches) and checks each one's tags."""
    r = wire.ReliableReceiver("@" + endpoint)
    for i, m in stream_of(r, n):
        assert m.flags & wire.FLAG_TAGS, f"message {i}: no tags flag"
        want = expected_tags(i)
        assert m.tags.keys() == want.keys(), (i, m.tags)
        for k, v in want.items():
            got = m.tags[k]
            assert (np.array_equal(got, v) and got.dtype == v.dtype) if isinstance(v, np.ndarray) else got == v, \
                (i, k, got, v)
    r.close()


def consume_shared(endpoint, n, shared):
    import hashlib
    r = wire.ReliableReceiver("@" + endpoint, shared_memory=shared)
    digest, kept, count, read_only, seqs = hashlib.sha256(), None, 0, 0, []
    while True:
        m = r.recv(timeout=TIMEOUT_MS / 1000)
        assert m is not None, f"nothing for {TIMEOUT_MS} ms after {count} messages"
        if m.kind == wire.END_OF_STREAM:
            break
        assert m.kind == wire.DATA, m
        assert bool(m.flags & wire.FLAG_SHARED) == shared, f"message {count}: flags {m.flags}"
        for a in m.arrays:
            digest.update(a.tobytes())
            # Shared arrays view the sender's memory read-only (those past half the credit held
            # are copies): no write reaches the sender or another reader.
            if shared and not a.flags.writeable:
                read_only += 1
                try:
                    a.reshape(-1)[:1] = 0
                    raise AssertionError(f"message {count}: a write into the sender's memory went through")
                except ValueError:
                    pass
                assert a.copy().flags.writeable, "a copy is the reader's own, writable"
        if count == 5:
            kept = (m.arrays[0], m.arrays[0].tobytes())  # a view held: its memory is never reused meanwhile
        # Each message's seq (8 bytes) is kept: a small array is copied out of the sender's memory,
        # so that keeping it holds none of its message's (the 64 KiB array beside it).
        assert m.arrays[1].flags.writeable or not shared, f"message {count}: its small array views the sender's memory"
        assert int(m.arrays[1]) == count, f"message {count}: seq {int(m.arrays[1])}"
        seqs.append(m.arrays[1])
        count += 1
    assert count == n, f"{count} messages, expected {n}"
    assert kept[0].tobytes() == kept[1], "an array kept was overwritten"
    assert read_only > 0 if shared else read_only == 0, f"{read_only} read-only views of shared memory"
    assert r.shared == (n if shared else 0), f"{r.shared} messages shared"
    held = sorted(seq for p in r.peers.values() for seq in p.leased)
    assert held == ([5] if shared else []), f"leases held: {held} (only the array kept views the sender's memory)"
    r.close()
    print(digest.hexdigest(), flush=True)


def ack_batching_selftest():
    """A receiver that keeps up with its sender acknowledges in batches (credit_messages / 8), and
    everything once its socket has stayed quiet: not once a message, which doubles the traffic."""
    context = zmq.Context()
    inp = wire.ReliableReceiver("@inproc://acks", heartbeat_interval=0.05, context=context)
    out = wire.ReliableSender(">inproc://acks", heartbeat_interval=0.05, context=context)
    acks = []
    control = inp._control

    def counted(peer, kind):
        if kind == wire.ACK:
            acks.append(peer.acked)
        control(peer, kind)
    inp._control = counted
    n = 200
    for i in range(n):
        out.send([np.array([i], dtype=np.int64)])
        m = None
        for _ in range(1000):  # 5 s at most
            out.poll(0)
            m = inp.recv(timeout=0.005)
            if m is not None:
                break
        assert m is not None and m.kind == wire.DATA and int(m.arrays[0][0]) == i, (i, m)
    deadline = time.monotonic() + 5
    while out.kept and time.monotonic() < deadline:
        out.poll(0.005)
        assert inp.recv(timeout=0.005) is None
    assert not out.kept, f"{len(out.kept)} message(s) never acknowledged"
    assert len(acks) <= n // 100 + 2, f"{len(acks)} acknowledgements for {n} messages taken one by one"
    inp.close()
    out.close()
    context.term()


def reliable_selftest():
    """A reliable sender and receiver in one process, taking turns: barriers travel in order."""
    context = zmq.Context()
    inp = wire.ReliableReceiver("@inproc://selftest", heartbeat_interval=0.05, context=context)
    out = wire.ReliableSender(">inproc://selftest", stream_id=5, heartbeat_interval=0.05, context=context)
    for k in range(BARRIER_ROUNDS):
        out.send([np.array([k], dtype=np.int64)])
        out.send_barrier(k + 1)
    out.send_end_of_stream()

    def next_message():
        for _ in range(1000):  # 10 s at most
            out.poll(0.005)
            m = inp.recv(timeout=0.005)
            if m is not None:
                return m
        raise AssertionError("reliable selftest: nothing within 10 s")
    check_barrier_stream(next_message)

    # Updates in order, a refusal recorded before the acknowledgement that covers it.
    out.send([np.array([0], dtype=np.int64)])
    out.send_update("scale", [UPDATE_WEIGHTS])
    out.send_update("missing", [UPDATE_WEIGHTS])
    out.send([np.array([3], dtype=np.int64)])
    out.send_end_of_stream()
    first = out.next_seq - 5  # numbered on after the barrier stream
    check_update_stream(next_message, lambda m: inp.refuse(m, REFUSAL), first)
    for _ in range(1000):
        out.poll(0.005)
        inp.recv(timeout=0.005)
        if not out.kept:
            break
    assert out.refusals == [wire.Refusal(first + 2, REFUSAL)], out.refusals
    try:
        out.send_update("", [UPDATE_WEIGHTS])
        raise AssertionError("an update without a target: accepted")
    except wire.WireError as e:
        assert "update target" in str(e), e
    out.close()
    inp.close(linger=0)

    # A message the receiver cannot read takes its place in the stream: the one after it
    # comes next (a receiver that only skipped it would ask for it again for ever).
    inp = wire.ReliableReceiver("@inproc://selftest-malformed", heartbeat_interval=0.05, context=context)
    raw = context.socket(zmq.DEALER)
    session = 0x5EED0FBA7C4E5002
    raw.setsockopt(zmq.ROUTING_ID, b"S" + session.to_bytes(8, "little"))
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect("inproc://selftest-malformed")
    raw.send_multipart(wire.encode_control(wire.HEARTBEAT, wire.Control(session=session), 0))
    assert inp.recv(timeout=0.05) is None, "a heartbeat is not for the owner"
    bad = [bytes(f) for f in wire.encode([np.arange(3, dtype=np.float32)], seq=0)]
    bad[1] = bad[1].replace(b"'<f4'", b"'>f4'")  # a big-endian .npy header: refused
    raw.send_multipart(bad)
    raw.send_multipart(wire.encode([np.arange(4, dtype=np.float32)], seq=1))
    m = inp.recv(timeout=5)
    assert m is not None and m.seq == 1 and m.arrays[0].shape == (4,), f"after a malformed message: {m}"
    assert inp.rejected == 1, inp.rejected
    raw.close()
    inp.close(linger=0)
    context.term()


def tags_selftest():
    tags = {"time_ns": 5, ("event", 3): "knock", "rate": 2.5, "w": np.arange(4, dtype=np.float32)}
    for pack_below in (0, 4096):
        frames = wire.encode([np.zeros((5, 2), np.float32)], seq=4, tags=tags, pack_below=pack_below)
        assert len(frames) == (1 if pack_below else 4), len(frames)
        m = wire.decode(frames)
        assert m.flags & wire.FLAG_TAGS
        assert m.tags.keys() == {("time_ns", -1), ("event", 3), ("rate", -1), ("w", -1)}, m.tags
        assert m.tags["time_ns", -1] == 5 and m.tags["event", 3] == "knock" and m.tags["rate", -1] == 2.5
        assert np.array_equal(m.tags["w", -1], tags["w"]) and not m.tags["w", -1].flags.writeable
    # The documented layout of one integer tag at row 3.
    assert wire.encode_tags({("n", 3): 0x0102030405060708}) == (
        b"TAGS" + bytes([1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]) + b"n" + bytes([8, 7, 6, 5, 4, 3, 2, 1]))
    # Malformed blocks and flags are refused by name.
    block = wire.encode_tags({("k", 2): "text"})
    for edit, reason in [(lambda b: b.__setitem__(0, ord("X")), "magic: expected 'TAGS'"),
                         (lambda b: b.__setitem__(4, 0), "count: expected 1 to 256, found 0"),
                         (lambda b: b.__setitem__(10, 4), "expected a type of 0 to 3"),
                         (lambda b: b.__setitem__(11, 1), "expected a reserved byte of 0"),
                         (lambda b: b.__setitem__(25, 0xc3), "expected UTF-8 text"),
                         (lambda b: b.append(0), "expected nothing after the last tag")]:
        bad = bytearray(block)
        edit(bad)
        try:
            wire.decode_tags(bad, "test")
            raise AssertionError(f"accepted: {reason}")
        except wire.WireError as e:
            assert reason in str(e), (reason, e)
    # A key of other bytes (asked twice: a key's check is remembered), a row below -1, a key twice.
    spaced = bytearray(wire.encode_tags({("k", 2): 1}))
    spaced[20] = ord(" ")  # the key, after the magic, the count and the tag's head
    two = wire.encode_tags({("k", 2): 1, ("j", 2): 2}).replace(b"j", b"k")
    for bad, reason in [(spaced, "key: expected printable ASCII"), (spaced, "key: expected printable ASCII"),
                        (wire.encode_tags({("k", 2): 1}).replace(bytes([2, 0, 0, 0, 0, 0, 0, 0]), b"\xfe" + b"\xff" * 7),
                         "offset: expected a row (0 or more) or -1, found -2"),
                        (two, "expected one value per key and offset, found two at 2")]:
        try:
            wire.decode_tags(bad, "test")
            raise AssertionError(f"accepted: {reason}")
        except wire.WireError as e:
            assert reason in str(e), (reason, e)
    # Cut anywhere, a block is refused, naming what it lacks.
    for n in range(len(block)):
        try:
            wire.decode_tags(block[:n], "test")
            raise AssertionError(f"a block cut to {n} bytes was accepted")
        except wire.WireError as e:
            assert "expected" in str(e) and "test: tags:" in str(e), (n, e)
    frames = wire.encode([np.zeros(2, np.float32)], tags={"k": 1})
    try:
        wire.decode(frames[:-1])
        raise AssertionError("the tags flag without its block was accepted")
    except wire.WireError as e:
        assert "frames" in str(e), e


def selftest():
    tags_selftest()
    arrays = [np.float32(1.5), np.arange(6, dtype=np.complex64).reshape(2, 3), np.zeros((3, 0), np.uint16),
              np.array([True, False]), np.arange(4, dtype=">i4")]
    m = wire.decode(wire.encode(arrays, seq=7, stream_id=3, crc=True))
    assert (m.kind, m.seq, m.stream_id, m.flags) == (wire.DATA, 7, 3, wire.FLAG_CRC)
    for got, want in zip(m.arrays, arrays):
        assert got.shape == np.shape(want) and np.array_equal(got, want), (got, want)
    assert m.arrays[4].dtype == np.dtype("<i4"), "big-endian arrays travel little-endian"
    # The frames of one array are an .npy file.
    frames = wire.encode([np.arange(3.0)])
    assert np.array_equal(np.load(io.BytesIO(bytes(frames[1]) + bytes(frames[2]))), np.arange(3.0))

    # A packed message is one frame; after its 32-byte header it is an .npy file.
    small = np.arange(6, dtype=np.int16).reshape(3, 2)
    (packed,) = wire.encode([small], seq=2, crc=True, pack_below=4096)
    assert np.array_equal(np.load(io.BytesIO(bytes(packed[32:]))), small)
    m = wire.decode([packed])
    assert m.flags == wire.FLAG_CRC | wire.FLAG_PACKED and np.array_equal(m.arrays[0], small)
    # Control messages carry their record.
    record = wire.Control(7, 8, 9, 10, 11, 12)
    m = wire.decode(wire.encode_control(wire.CREDIT, record, seq=3, stream_id=4))
    assert (m.kind, m.seq, m.stream_id, m.control) == (wire.CREDIT, 3, 4, record), m
    # A C++ receiver that opens a GPU's memory names its GPUs after its record, which Python skips.
    (credit,) = wire.encode_control(wire.CREDIT, record, seq=3, leases=[1, 2])
    header = bytearray(credit[:32])
    struct.pack_into("<H", header, 6, wire.FLAG_SHARED | wire.FLAG_DEVICES)
    devices = struct.pack("<Q", 1) + bytes(range(16)) + bytes(wire.DEVICES_BYTES - 24)
    m = wire.decode([bytes(header) + bytes(credit[32:]) + devices])
    assert list(m.leases) == [1, 2] and m.control == record, m
    # A device reference in a shared message is refused, saying what it is.
    shared_header = bytearray(wire.encode([np.arange(3.0)])[0])
    struct.pack_into("<H", shared_header, 6, wire.FLAG_SHARED)
    frames = wire.encode([np.arange(3.0)])
    try:
        wire.decode([bytes(shared_header), frames[1], b"sluice-cuda-ipc:1:device=00"], map_shared=lambda ref: None)
        raise AssertionError("a device reference was taken")
    except wire.WireError as e:
        assert "device reference (sluice-cuda-ipc)" in str(e), e
    # An update: the header, the target's name, then the tensors as in data; never packed.
    frames = wire.encode_update("scale", [small, np.arange(3.0)], seq=9, stream_id=2, crc=True)
    assert len(frames) == 6 and bytes(frames[1]) == b"scale", frames
    assert [bytes(f) for f in frames[2:]] == [bytes(f) for f in wire.encode([small, np.arange(3.0)])[1:]]
    m = wire.decode(frames)
    assert (m.kind, m.seq, m.stream_id, m.target, m.flags) == (wire.UPDATE, 9, 2, "scale", wire.FLAG_CRC), m
    assert np.array_equal(m.arrays[0], small) and np.array_equal(m.arrays[1], np.arange(3.0)), m.arrays
    update = [bytes(f) for f in frames]
    for reason, bad_update in {
        "expected 6 frames, found 5": update[:1] + update[2:],
        "expected a name of 1 to 1024 bytes, found 0": update[:1] + [b""] + update[2:],
        "update target: expected UTF-8": update[:1] + [b"sc\xffle"] + update[2:],
        "expected at least 1 for kind update": [update[0][:24] + b"\x00" + update[0][25:], update[1]],
        "expected packed (bit 1) only on data": [update[0][:6] + b"\x03" + update[0][7:]] + update[1:],
    }.items():
        try:
            wire.decode(bad_update)
        except wire.WireError as e:
            assert reason in str(e), f"{reason}: {e}"
        else:
            raise AssertionError(f"{reason}: accepted")
    # A barrier is one frame: its header, then its checkpoint number.
    (barrier,) = wire.encode_barrier(2**40 + 3, seq=6, stream_id=4)
    assert len(barrier) == 40 and barrier[32:] == (2**40 + 3).to_bytes(8, "little"), barrier
    m = wire.decode([barrier])
    assert (m.kind, m.seq, m.stream_id, m.checkpoint, m.arrays) == (wire.BARRIER, 6, 4, 2**40 + 3, []), m

    good = [bytes(f) for f in wire.encode([np.arange(6, dtype=np.float32).reshape(2, 3)], seq=5)]
    def changed(index, new):
        frames = list(good)
        frames[index] = new(frames[index])
        return frames
    bad = {
        "magic": changed(0, lambda f: b"X" + f[1:]),
        "version": changed(0, lambda f: f[:4] + b"\x02" + f[5:]),
        "expected kind 0 to 7": changed(0, lambda f: f[:5] + b"\x08" + f[6:]),
        "expected 4 frames, found 3": changed(0, lambda f: f[:5] + b"\x07" + f[6:]),
        "40 bytes for kind checkpoint barrier": changed(0, lambda f: f[:5] + b"\x05" + f[6:]),
        "checkpoint barrier (the header, then its u64": [barrier[:36]],
        "expected 1 frames": [barrier, b"x"],
        "80 bytes for kind credit": changed(0, lambda f: f[:5] + b"\x03" + f[6:]),
        "descr": changed(1, lambda f: f.replace(b"'<f4'", b"'>f4'")),
        "fortran_order": changed(1, lambda f: f.replace(b"False", b"True ")),
        "data frame": changed(2, lambda f: f[:-1]),
        "frames": good[:2],
        "header frame": changed(0, lambda f: f[:20]),
        "max_message_bytes": None,
    }
    for reason, frames in bad.items():
        try:
            if frames is None:
                wire.decode(good, max_message_bytes=64)
            else:
                wire.decode(frames)
        except wire.WireError as e:
            assert reason in str(e), f"{reason}: {e}"
        else:
            raise AssertionError(f"{reason}: accepted")
    # A batch (WIRE_FORMAT.md, "Batches"): split into its messages, each read as one; every
    # malformed class refused.
    one = bytes(wire.encode([np.arange(3, dtype=np.float32)], seq=7, pack_below=4096)[0])
    (end,) = wire.encode_end_of_stream(8)
    def batch(messages, count=None):
        body = b"".join(struct.pack("<II", len(m), 0) + m + b"\0" * (-len(m) % 8) for m in messages)
        return struct.pack("<4sBBHQQII", b"SLCE", 1, wire.BATCH, 0, 0, 7,
                           len(messages) if count is None else count, 0) + body
    entries = wire.split_batch(batch([one, end]))
    assert [bytes(e) for e in entries] == [one, bytes(end)], entries
    first = wire.decode([entries[0]])
    assert first.seq == 7 and np.array_equal(first.arrays[0], np.arange(3, dtype=np.float32)), first
    assert wire.decode([entries[1]]).kind == wire.END_OF_STREAM
    assert len(one) % 8 != 0, "the padding case needs a message short of a multiple of 8"
    good_batch = batch([one, end])
    for reason, frame in {
        "message count": batch([one, end], count=0),
        "expected 1 to": batch([one, end], count=99),
        "size": batch([one, end], count=1),
        "reserved word": good_batch[:36] + b"\x01" + good_batch[37:],
        "zero padding": good_batch[:40 + len(one)] + b"\x01" + good_batch[41 + len(one):],
        "message 1": good_batch[:-4],
        "expected batch": good,
    }.items():
        try:
            wire.split_batch(frame if isinstance(frame, bytes) else frame[0])
        except wire.WireError as e:
            assert reason in str(e), f"{reason}: {e}"
        else:
            raise AssertionError(f"batch, {reason}: accepted")
    crc = [bytes(f) for f in wire.encode([np.arange(4.0)], crc=True)]
    crc[2] = b"\x01" + crc[2][1:]
    try:
        wire.decode(crc)
        raise AssertionError("crc: accepted")
    except wire.WireError as e:
        assert "CRC-32C" in str(e), e
    reliable_selftest()
    ack_batching_selftest()


if __name__ == "__main__":
    try:
        if sys.argv[1] == "produce":
            produce(sys.argv[2], int(sys.argv[3]), sys.argv[4:6])
        elif sys.argv[1] == "consume":
            consume(sys.argv[2], int(sys.argv[3]), sys.argv[4:6])
        elif sys.argv[1] == "produce-barriers":
            produce_barriers(sys.argv[2])
        elif sys.argv[1] == "consume-barriers":
            consume_barriers(sys.argv[2])
        elif sys.argv[1] == "produce-updates":
            produce_updates(sys.argv[2])
        elif sys.argv[1] == "consume-updates":
            consume_updates(sys.argv[2])
        elif sys.argv[1] == "consume-burst":
            consume_burst(sys.argv[2], int(sys.argv[3]))
        elif sys.argv[1] == "consume-tags":
            consume_tags(sys.argv[2], int(sys.argv[3]))
        elif sys.argv[1] == "consume-shared":
            consume_shared(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1")
        else:
            selftest()
    except (AssertionError, wire.WireError, zmq.ZMQError) as e:
        print(f"interop.py {sys.argv[1]}: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
