#!/usr/bin/env bash
# `mpirun -np 3 sluice demo`: Open MPI starts the demo's one program three
# times and each rank runs its process (OMPI_COMM_WORLD_RANK); it exits 0
# with the same summary as the pipeline in one process for the same chunks
# (the detector's figures; times differ). Skips (77) where mpirun is missing.
set -euo pipefail
sluice=$1
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (Debian's openmpi-bin)"; exit 77; }
# FFTW's measured plans may differ between processes, and with them the rounding.
export SLUICE_FFT_PLANS=estimate
args=(demo --chunks 400 --seconds 120 --channels 4 --seed 3)
figures() { grep -E "^  (windows|accuracy, whole run|second half) " | sed -E 's/\(([0-9.]+) s of signal in .*/\1/'; }
one=$(timeout 120 "$sluice" "${args[@]}" --in-process | figures)
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
out=$(timeout 180 mpirun "${as_root[@]}" --oversubscribe -np 3 "$sluice" "${args[@]}")
echo "$out" | tail -8
three=$(echo "$out" | figures)
[ -n "$one" ] || { echo "FAIL: no summary from the one-process run"; exit 1; }
if [ "$one" != "$three" ]; then
  echo "FAIL: the summaries differ"; echo "one process:"; echo "$one"; echo "mpirun -np 3:"; echo "$three"; exit 1
fi
echo "mpirun -np 3 sluice demo: exit 0, the same summary as one process"
