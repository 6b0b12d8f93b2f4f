#!/usr/bin/env bash
# The partitioned test pipeline as three processes started by Open MPI's
# mpirun (each finds its role in OMPI_COMM_WORLD_RANK): the same results as
# the pipeline in one process, bit for bit, its edges (ipc, one host) carrying
# shared-memory references, not frames. Skips (77) where mpirun is missing.
set -euo pipefail
peer=$1
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (Debian's openmpi-bin)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 16 KiB messages: above what travels packed, so the edges share memory.
timeout 60 "$peer" --width 4096 --out "$dir/whole.bin"
# As root, Open MPI wants to be told; --oversubscribe: 3 ranks on fewer cores.
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
timeout 120 mpirun "${as_root[@]}" --oversubscribe -np 3 \
  "$peer" --width 4096 --placement "a=ipc://$dir/ipc,b=ipc://$dir/ipc,c=ipc://$dir/ipc" --out "$dir/parts.bin" | tee "$dir/shared"
cmp "$dir/whole.bin" "$dir/parts.bin"
# Every process has an edge to another: each counts messages in shared memory.
[ "$(grep -c '^shared [1-9]' "$dir/shared")" -eq 3 ] || { echo "not every process shared memory:"; cat "$dir/shared"; exit 1; }
echo "mpirun -np 3: $(stat -c %s "$dir/parts.bin") bytes of results, identical to one process, over shared memory: $(tr "\n" " " < "$dir/shared")"
