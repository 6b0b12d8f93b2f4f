"""The Python clients of bench_serving, in a process of their own:
    serving_load.py ENDPOINT CLIENTS IN_FLIGHT REQUESTS GO OUT
runs CLIENTS wire.ServingClients from one thread, each keeping IN_FLIGHT requests of
f32[16] in flight from the time GO (time.monotonic, the C++ clients' steady_clock) until
REQUESTS were answered, and writes to OUT the time its last reply came, then each request's
latency in seconds (its send to its reply), a line each. Exits 1 when a reply is missing (30 s), an error,
or not f32[16]; 77 when numpy or pyzmq is missing (the benchmark then runs without it)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))  # sluice.wire
try:
    import numpy as np
    import zmq
    from sluice import wire
except ImportError as e:
    print(f"serving_load.py: {e}", file=sys.stderr)
    sys.exit(77)

WAIT_S = 30


def main(endpoint, clients, in_flight, requests, go, out):
    rng = np.random.default_rng(1)
    poller = zmq.Poller()
    state = []
    for _ in range(clients):
        c = wire.ServingClient(endpoint)
        poller.register(c.socket, zmq.POLLIN)
        state.append({"client": c, "x": rng.uniform(-1, 1, 16).astype(np.float32), "asked": {}, "sent": 0,
                      "answered": 0})
    by_socket = {s["client"].socket: s for s in state}
    latencies = []
    time.sleep(max(0.0, go - time.monotonic()))
    while any(s["answered"] < requests for s in state):
        for s in state:
            while s["sent"] < requests and len(s["asked"]) < in_flight:
                s["asked"][s["client"].send([s["x"]], WAIT_S * 1000)] = time.monotonic()
                s["sent"] += 1
        ready = dict(poller.poll(WAIT_S * 1000))
        if not ready:
            raise SystemExit(f"serving_load.py: no reply within {WAIT_S} s")
        for socket in ready:
            s = by_socket[socket]
            m = s["client"].recv(0)
            if m is None:
                continue
            if m.kind != wire.DATA or len(m.arrays) != 1 or m.arrays[0].shape != (16,):
                raise SystemExit(f"serving_load.py: seq {m.seq}: not an f32[16] reply: {m.error}")
            sent = s["asked"].pop(m.seq, None)
            if sent is None:
                raise SystemExit(f"serving_load.py: a reply to seq {m.seq}, not asked or answered twice")
            latencies.append(time.monotonic() - sent)
            s["answered"] += 1
    end = time.monotonic()
    for s in state:
        s["client"].close()
    with open(out, "w") as f:
        f.write(f"{end!r}\n")
        f.writelines(f"{x}\n" for x in latencies)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
