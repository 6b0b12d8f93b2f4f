#!/usr/bin/env bash
# run_sh_block.sh BLOCK SOURCE_DIR SLUICE: runs a shell block of README.md as
# a reader would after `make`, stopping at the first failing command: in a
# fresh directory holding build/tools/sluice (this build's), with `make`
# lines run as dry runs against the source tree (the targets exist and
# resolve; nothing is built), and python3 the one that has numpy.
set -euo pipefail
block=$1 src=$2 sluice=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/tools" "$work/bin"
ln -s "$sluice" "$work/build/tools/sluice"
ln -s /usr/bin/python3 "$work/bin/python3"
export PATH="$work/bin:$PATH"
make() { command make --no-print-directory -n -C "$src" "$@" > /dev/null; }
cd "$work"
# shellcheck source=/dev/null
source "$block"
