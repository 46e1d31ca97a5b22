#!/usr/bin/env bash
# The selector chooses hierarchical algorithms by estimate where a communicator spans nodes and
# the model's levels make leaving the node dear (a two-level tuning file), logs the choice with
# every estimate at INFO, and never offers them on one node. The hierarchical algorithms'
# traffic goes through shared memory inside a virtual node and UCX tcp on lo between them.
#   check_hier_select.sh LAUNCH_SH OSU_ALLREDUCE MODEL_FILE
set -uo pipefail
launch=$1
bench=$2
model=$3
fail=0
check() {  # check NAME PATTERN TEXT
  if grep -q -- "$2" <<< "$3"; then echo "ok: $1"; else echo "FAIL: $1: no '$2'"; fail=1; fi
}
run() {  # run NODES SIZE [extra env]
  env WEFT_COLL_MODEL="$model" WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=coll,pt2pt WEFT_FAKE_NODES=$1 "${@:3}" \
    "$launch" 4 "$bench" -m "$2:$2" -i 3 -x 1 2>&1
}
small=$(run 2 8)
check "small, two nodes: hierarchical by estimate" \
  ":0\] weft INFO coll: allreduce on MPI_COMM_WORLD (4 ranks), 8-15 bytes: hier\(_multi\)\? (lowest estimate" "$small"
check "every candidate's estimate is logged" "estimates in us: recursive_doubling [0-9.]*, ring" "$small"
large=$(run 2 16777216)
check "16 MiB, two nodes: multi-leader or pipelined by estimate" \
  ":0\] weft INFO coll: allreduce on MPI_COMM_WORLD (4 ranks), 16777216-33554431 bytes: hier_\(multi\|pipelined\) (lowest estimate" "$large"
check "inside a virtual node: shared memory" ":0\] weft INFO pt2pt: peer 1: sent [0-9]* messages, [0-9]* bytes over weft shared memory" "$large"
check "between virtual nodes: tcp on lo" ":0\] weft INFO pt2pt: peer 2: sent [0-9]* messages, [0-9]* bytes over tcp/lo" "$large"
if echo "$large" | grep " sent " | grep -E ":[01]\] .*peer (2|3): |:[23]\] .*peer (0|1): " | grep -v "tcp/lo" > /dev/null; then
  echo "FAIL: traffic between virtual nodes took another transport than tcp on lo"; fail=1
fi
if echo "$large" | grep " sent " | grep -E ":[01]\] .*peer (0|1): |:[23]\] .*peer (2|3): " | grep -v "weft shared memory" > /dev/null; then
  echo "FAIL: traffic inside a virtual node took another transport than shared memory"; fail=1
fi
one=$(run 1 16777216)
check "one node: no hierarchical candidate" "hier n/a, hier_multi n/a" "$one"
if grep -q "bytes: hier" <<< "$one"; then echo "FAIL: a hierarchical algorithm chosen on one node"; fail=1; fi
[ $fail -eq 0 ] || { echo "$small" | grep -E "coll:|sent" | head -20; echo "$large" | grep -E "coll:|sent" | head -30; exit 1; }
