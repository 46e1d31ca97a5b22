#!/usr/bin/env bash
# Collective selection is visible and steerable: the cost model and every choice (with each
# candidate's estimate) are logged at INFO; WEFT_COLL_TUNE forces algorithms; bad rules and bad
# tuning files stop MPI_Init with a message naming the problem.
#   check_coll_tune.sh LAUNCH_SH COLL_MATRIX_PROGRAM
set -uo pipefail
launch=$1
prog=$2
fail=0
expect() {  # expect DESCRIPTION OUTPUT PATTERN
  if grep -q -- "$3" <<< "$2"; then echo "ok: $1"; else echo "FAIL: $1: no line matches '$3'"; echo "$2" | tail -20; fail=1; fi
}

# Rank 0's log goes to a file of its own: the launcher may split lines of different ranks.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
run_logged() {  # run_logged NP ARGS...: prints the job's output, then rank 0's log
  local np=$1; shift
  rm -f "$logs"/log.*
  WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=coll WEFT_DEBUG_FILE="$logs/log.%r" "$launch" "$np" "$prog" "$@" 2>&1
  cat "$logs"/log.0 2>/dev/null
}

out=$(run_logged 4 Allreduce Alltoall)
expect "run succeeds" "$out" "coll_matrix: OK (np 4)"
expect "model logged" "$out" "cost model: alpha [0-9.]* us, beta [0-9.]* us/KiB, gamma [0-9.]* us/KiB, gap [0-9.]* us; within a node: alpha [0-9.]* us, beta [0-9.]* us/KiB; between nodes: alpha [0-9.]* us, beta [0-9.]* us/KiB (0: unknown); shared memory: alpha [0-9.]* us, beta [0-9.]* us/KiB (measured at init"
expect "choice logged with estimates" "$out" "allreduce on MPI_COMM_WORLD (4 ranks), 1024-2047 bytes: [a-z_]* (lowest estimate; estimates in us: recursive_doubling [0-9.]*, ring [0-9.]*"
expect "alltoall choice logged" "$out" "alltoall on MPI_COMM_WORLD (4 ranks), .*estimates in us: pairwise"

out=$(WEFT_COLL_TUNE='allreduce:0-4k:@recursive_doubling#allreduce:4k-inf:@ring' run_logged 4 Allreduce)
expect "forced run succeeds" "$out" "coll_matrix: OK (np 4)"
expect "small sizes forced" "$out" "allreduce on MPI_COMM_WORLD (4 ranks), 16-31 bytes: recursive_doubling (forced by WEFT_COLL_TUNE"
expect "large sizes forced" "$out" "allreduce on MPI_COMM_WORLD (4 ranks), 4096-8191 bytes: ring (forced by WEFT_COLL_TUNE"

model=$logs/model
printf '# measured elsewhere\nalpha_us = 3.5\nbeta_us_per_byte = 0.0002\ngamma_us_per_byte = 0.0001\n' > "$model"
out=$(WEFT_COLL_MODEL="$model" run_logged 2 Barrier)
expect "tuning file used" "$out" "cost model: alpha 3.50 us, beta 0.205 us/KiB, gamma 0.102 us/KiB, gap 0.000 us; within a node: alpha 0.00 us, beta 0.000 us/KiB; between nodes: alpha 0.00 us, beta 0.000 us/KiB (0: unknown); shared memory: alpha 0.000 us, beta 0.000 us/KiB (tuning file"
printf 'alpha_us = 3.5\ndelta = 1\n' > "$model"
out=$(WEFT_COLL_MODEL="$model" "$launch" 2 "$prog" Barrier 2>&1)
expect "bad tuning file refused" "$out" "unknown parameter 'delta'"

bad() {  # bad RULE EXPECTED_MESSAGE
  local o
  o=$(WEFT_COLL_TUNE="$1" "$launch" 2 "$prog" Barrier 2>&1)
  if grep -q "coll_matrix: OK" <<< "$o"; then echo "FAIL: '$1' was accepted"; fail=1; return; fi
  expect "'$1' refused" "$o" "$2"
}
bad 'allreduce:@bogus' "'bogus' is not an algorithm of allreduce (known: recursive_doubling"
bad 'barrier:@ring' "'ring' is not an algorithm of barrier"
bad 'allreduc:@ring' "unknown collective 'allreduc'"
bad 'allreduce:4k-1k:@ring' "bad size range '4k-1k'"
bad 'allreduce:ring' "must be @algorithm or ^algorithm"
bad 'barrier:^dissemination,^tree,^shm,^hier,^offload' "excludes every algorithm of barrier"
exit $fail
