#!/usr/bin/env bash
# Two hosts: two network namespaces joined by a veth pair, the partitioned
# test pipeline's processes "a" and "b" on one and "c" on the other, over
# tcp with CurveZMQ keys named in the placement: the same results as the
# pipeline in one process, bit for bit. Skips (77) where namespaces cannot
# be made (not root, no iproute2, no CAP_NET_ADMIN).
set -euo pipefail
peer=$1
sluice=$2
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "no ip (Debian's iproute2)"
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"

tag=$$
h1=sluice-h1-$tag h2=sluice-h2-$tag v1=sv1-$tag v2=sv2-$tag
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  ip netns del "$h1" 2>/dev/null || true
  ip netns del "$h2" 2>/dev/null || true
  ip link del "$v1" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
ip netns add "$h1" 2>/dev/null || skip "cannot make a network namespace here"
ip netns add "$h2"
ip link add "$v1" type veth peer name "$v2" || skip "cannot make a veth pair here"
ip link set "$v1" netns "$h1"
ip link set "$v2" netns "$h2"
ip -n "$h1" addr add 10.231.0.1/24 dev "$v1"
ip -n "$h2" addr add 10.231.0.2/24 dev "$v2"
for h in "$h1" "$h2"; do ip -n "$h" link set lo up; done
ip -n "$h1" link set "$v1" up
ip -n "$h2" link set "$v2" up

mkdir "$dir/keys"
for p in a b c; do "$sluice" keygen "$dir/keys/$p" >/dev/null; done
cat >"$dir/placement.json" <<JSON
{"processes": [
  {"name": "a", "host": "10.231.0.1", "port": 47100, "curve_secret": "$dir/keys/a_secret", "curve_public": "$dir/keys/a"},
  {"name": "b", "host": "10.231.0.1", "port": 47200, "curve_secret": "$dir/keys/b_secret", "curve_public": "$dir/keys/b"},
  {"name": "c", "host": "10.231.0.2", "port": 47300, "curve_secret": "$dir/keys/c_secret", "curve_public": "$dir/keys/c"}]}
JSON

timeout 60 "$peer" --out "$dir/whole.bin"
ip netns exec "$h1" timeout 120 "$peer" --placement "$dir/placement.json" --role a --out "$dir/a.bin" & pids+=($!)
ip netns exec "$h1" timeout 120 "$peer" --placement "$dir/placement.json" --role b --out "$dir/b.bin" & pids+=($!)
ip netns exec "$h2" timeout 120 "$peer" --placement "$dir/placement.json" --role c --out "$dir/parts.bin" & pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
pids=()
[ "$status" -eq 0 ] || { echo "FAIL: a process of the two-host run failed"; exit 1; }
cmp "$dir/whole.bin" "$dir/parts.bin"
echo "two hosts over tcp with CurveZMQ: $(stat -c %s "$dir/parts.bin") bytes of results, identical to one process"
