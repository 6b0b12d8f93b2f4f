#!/usr/bin/env bash
# The partitioned test pipeline as three processes started by Open MPI's
# mpirun (each finds its role in OMPI_COMM_WORLD_RANK): the same results as
# the pipeline in one process, bit for bit. Skips (77) where mpirun is missing.
set -euo pipefail
peer=$1
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (Debian's openmpi-bin)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
timeout 60 "$peer" --out "$dir/whole.bin"
# As root, Open MPI wants to be told; --oversubscribe: 3 ranks on fewer cores.
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
timeout 120 mpirun "${as_root[@]}" --oversubscribe -np 3 \
  "$peer" --placement "a=ipc://$dir/ipc,b=ipc://$dir/ipc,c=ipc://$dir/ipc" --out "$dir/parts.bin"
cmp "$dir/whole.bin" "$dir/parts.bin"
echo "mpirun -np 3: $(stat -c %s "$dir/parts.bin") bytes of results, identical to one process"
