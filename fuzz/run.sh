#!/bin/sh
# Runs the wire fuzzer for a bounded time: seeds from fuzz/make_seeds.py
# (when a python3 with numpy is there), tokens from fuzz/wire.dict.
#   fuzz/run.sh FUZZER SECONDS WORKDIR
# Exits non-zero when the fuzzer finds a crash (the input is left in WORKDIR).
set -eu
fuzzer=$1
seconds=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/corpus"
for python in /usr/bin/python3 python3; do
  if "$python" -c 'import numpy' 2>/dev/null; then
    "$python" "$here/make_seeds.py" "$work/corpus"
    break
  fi
done
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -dict="$here/wire.dict" -max_len=4096 -print_final_stats=1 corpus
