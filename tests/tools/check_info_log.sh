#!/usr/bin/env bash
# The INFO log names the path each peer's messages take: weft shared memory on one node by
# default, and the UCX transports chosen per peer with WEFT_PT2PT=ucx.
#   check_info_log.sh LAUNCH_SH PROGRAM
set -uo pipefail
launch=$1
prog=$2
fail=0
out=$(WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=pt2pt "$launch" 2 "$prog" 2>&1)
for want in "point-to-point path: weft shared memory" "peer 1: transports weft-shm" "peer 0: transports weft-shm"; do
  if grep -q "$want" <<< "$out"; then echo "ok: '$want'"; else echo "missing: '$want'"; fail=1; fi
done
out=$(WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=pt2pt WEFT_PT2PT=ucx "$launch" 2 "$prog" 2>&1)
for want in "point-to-point path: ucx" "peer 1: transports .*memory" "peer 0: transports .*memory"; do
  if grep -q "$want" <<< "$out"; then echo "ok: '$want'"; else echo "missing: '$want'"; fail=1; fi
done
# No network lane on a single-node job: nothing over the machine's external interfaces.
if echo "$out" | grep "transports" | grep "tcp/eth\|tcp/en" > /dev/null; then
  echo "FAIL: a node-local peer uses an external network interface"; fail=1
fi
[ $fail -eq 0 ] || { echo "$out" | head -40; exit 1; }
