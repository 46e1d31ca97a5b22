#!/usr/bin/env bash
# WEFT_FAKE_NODES splits one host into virtual nodes: ranks of one virtual node talk through
# weft shared memory, ranks of different ones through UCX tcp on the loopback device (never
# shared memory, never an external interface), as the INFO log reports per peer.
#   check_fake_nodes.sh LAUNCH_SH PROGRAM
set -uo pipefail
launch=$1
prog=$2
fail=0
out=$(WEFT_FAKE_NODES=2 WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=pt2pt "$launch" 4 "$prog" 2>&1)
check() {  # check NAME PATTERN
  if grep -q -- "$2" <<< "$out"; then echo "ok: $1"; else echo "FAIL: $1: no '$2'"; fail=1; fi
}
check "hybrid path" "for the 2 ranks of this node; ucx for the others (tcp on lo: virtual nodes)"
check "same virtual node: shared memory" ":0\] weft INFO pt2pt: peer 1: transports weft-shm"
check "other virtual node: tcp on lo" ":0\] weft INFO pt2pt: peer 2: transports tcp/lo"
check "other virtual node, other way: tcp on lo" ":3\] weft INFO pt2pt: peer 0: transports tcp/lo"
if echo "$out" | grep "transports" | grep -E ":0\] .*peer (2|3): |:3\] .*peer (0|1): " | grep -v "tcp/lo" > /dev/null; then
  echo "FAIL: traffic between virtual nodes took another transport than tcp on lo"; fail=1
fi
out=$(WEFT_FAKE_NODES=9 "$launch" 4 "$prog" 2>&1)
check "more virtual nodes than ranks is refused" "asks for more virtual nodes than the job's 4 ranks"
[ $fail -eq 0 ] || { echo "$out" | head -40; exit 1; }
