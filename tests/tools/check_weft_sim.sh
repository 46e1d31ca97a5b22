#!/usr/bin/env bash
# weft_sim at the largest shape it is meant for (4,096 nodes x 8 GPUs) and at a small one: every
# size gets a selector line and replayed candidates; the small shape is replayed with every rank
# together, the large one by sampled ranks; bad options are refused with a message.
#   check_weft_sim.sh WEFT_SIM
set -uo pipefail
sim=$1
fail() { echo "check_weft_sim: FAIL: $*"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$sim" --nodes 4 --ppn 4 --bytes 8,64k,4m > "$out" 2>&1 || { cat "$out"; fail "small shape: exit $?"; }
cat "$out"
[ "$(grep -c '| selector: ' "$out")" = 3 ] || fail "small shape: not one selector line per size"
grep -q '| ring .*all ranks' "$out" || fail "small shape: ring was not replayed with all ranks"
grep -q 'replay failed' "$out" && fail "small shape: a replay failed"
# The replay of a ring matches its estimate's closed form on one rank per node.
"$sim" --nodes 8 --ppn 1 --bytes 1m --gap 0 --net-alpha 2 --net-beta 0.0001 --gamma 0.0001 --shm-beta 0.00005 > "$out" 2>&1 ||
  fail "ring shape: exit $?"
awk -F'|' '$2 ~ /^ ring/ { e = $3 + 0; r = $4 + 0; d = (r - e) / e; if (d < 0) d = -d; print "ring estimate", e, "replay", r;
                           exit !(d < 0.02) }' "$out" || fail "ring: replay and estimate differ by more than 2%"

# A node from a topology file: one rank per GPU, its two NICs as two links (each pair of GPUs
# on the NIC behind its switch), which halve the shared link's load against one NIC.
topo=$(dirname "$0")/../data/topo_pcie_switches.json
"$sim" --nodes 16 --topology "$topo" --bytes 16m > "$out" 2>&1 || { cat "$out"; fail "topology: exit $?"; }
grep -q '16 nodes x 4 ranks (64 ranks)' "$out" || { cat "$out"; fail "topology: not 4 ranks per node"; }
grep -q '(4 GPUs, 2 NICs)' "$out" || { cat "$out"; fail "topology: the file's GPUs and NICs not read"; }
two=$(awk -F'|' '$2 ~ /^ rabenseifner/ { print $4 + 0 }' "$out")
"$sim" --nodes 16 --ppn 4 --bytes 16m > "$out" 2>&1 || fail "one NIC: exit $?"
one=$(awk -F'|' '$2 ~ /^ rabenseifner/ { print $4 + 0 }' "$out")
awk -v one="$one" -v two="$two" 'BEGIN { exit !(two > 0 && two < 0.8 * one) }' ||
  fail "topology: rabenseifner with 2 NICs ($two us) not faster than with 1 ($one us)"
"$sim" --topology /nonexistent.json > "$out" 2>&1 && fail "a missing topology file was accepted"

start=$SECONDS
"$sim" --nodes 4096 --gpus-per-node 8 --bytes 8,1m,256m --offload on > "$out" 2>&1 || { cat "$out"; fail "4096 x 8: exit $?"; }
cat "$out"
[ "$(grep -c '| selector: ' "$out")" = 3 ] || fail "4096 x 8: not one selector line per size"
grep -q '32768 ranks' "$out" || fail "4096 x 8: not 32768 ranks"
grep -q 'sampled' "$out" || fail "4096 x 8: no sampled replay"
grep -q '| offload ' "$out" || fail "4096 x 8: no offload row with --offload on"
grep -q 'device memory: gpu_hier' "$out" || fail "4096 x 8: no device-memory rule line"
grep -q 'replay failed' "$out" && fail "4096 x 8: a replay failed"
echo "check_weft_sim: 4096 x 8 took $((SECONDS - start)) s"

"$sim" --coll nonsense > "$out" 2>&1 && fail "an unknown collective was accepted"
grep -q 'unknown collective' "$out" || fail "no message for an unknown collective"
"$sim" --nodes 0 > "$out" 2>&1 && fail "--nodes 0 was accepted"
for c in bcast reduce allgather reduce_scatter alltoall barrier; do
  "$sim" --coll $c --nodes 3 --ppn 2 --bytes 96k > "$out" 2>&1 || { cat "$out"; fail "$c: exit $?"; }
  grep -q '| selector: [a-z]' "$out" || { cat "$out"; fail "$c: no algorithm chosen"; }
  grep -q 'replay failed' "$out" && { cat "$out"; fail "$c: a replay failed"; }
done
echo "check_weft_sim: ok"
