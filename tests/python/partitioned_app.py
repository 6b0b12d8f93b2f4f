"""One partitioned pipeline program in three processes (source, compute,
sink), as `mpirun -np 3 python partitioned_app.py DIR OUT` runs it: each
process finds its role from the launcher's rank, or from ROLE when given.
The sink process writes what it received to OUT as a .npy file.
Usage: partitioned_app.py SOCKET_DIR OUT [ROLE]"""
import sys

import numpy as np

import sluice

socket_dir, out_path = sys.argv[1:3]
given = sys.argv[3] if len(sys.argv) > 3 else ""
placement = sluice.local_placement(["source", "compute", "sink"], socket_dir)
role = sluice.role(placement, given)
assert role is not None, "no role: give one, or run under mpirun"

data = np.arange(32 * 8, dtype=np.float32).reshape(32, 8)
p = sluice.Pipeline(process=role, placement=placement)
src = p.source("rows", sluice.to_batched(data, 4), process="source")
stage = p.stage("scale", lambda x, acc: (x * 2 + acc, acc + 1), acc=np.float32(0), process="compute")
received = []
sink = p.sink("keep", lambda rows: received.append(rows.copy()), process="sink")
p.connect(src, stage)
p.connect(stage, sink)
result = p.run()
if role == "sink":
    np.save(out_path, np.concatenate(received))
if role == "compute":
    assert float(result["accumulators"]["scale"]) == 8.0
