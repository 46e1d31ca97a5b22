#!/usr/bin/env bash
# Runs profiled_job under the example profiler plugin and checks the plugin's counts against
# what the job did (profiled_job.c), or checks that a plugin that must be refused fails MPI_Init.
#   check_count.sh count NP PROGRAM PLUGIN     the counts, on every rank
#   check_count.sh rma NP PROGRAM PLUGIN       the same with the program's one-sided epochs
#   check_count.sh kv NP PROGRAM PLUGIN        the same with KV-cache transfers between ranks 0 and 1
#   check_count.sh refuse NP PROGRAM PLUGIN TEXT   MPI_Init fails, naming TEXT; no rank runs past it
set -uo pipefail
mode=$1 np=$2 program=$3 plugin=$4
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export WEFT_PROFILER_PLUGIN=$plugin PROFILER_COUNT_OUT="$out/count.%r"
args=()
[ "$mode" = rma ] && args=(rma)
[ "$mode" = kv ] && args=(kv)
log=$("$here/../launch.sh" "$np" "$program" "${args[@]}" 2>&1)
rc=$?
echo "$log"
fail() { echo "check_count.sh: $*"; exit 1; }
if [ "$mode" = refuse ]; then
  text=$5
  [ $rc -ne 0 ] || fail "the job succeeded with a plugin that must be refused"
  # Each rank refuses the plugin on its own; the launcher may end the job at the first exit,
  # before the others print.
  n=$(grep -c "MPI_Init failed: .*$text" <<< "$log")
  [ "$n" -ge 1 ] || fail "no rank failed MPI_Init naming '$text'"
  grep -q "^PASS" <<< "$log" && fail "a rank ran past MPI_Init"
  echo "check_count.sh: ok (MPI_Init refused the plugin on $n of $np ranks before the job ended)"
  exit 0
fi
[ $rc -eq 0 ] || fail "the job failed (exit $rc)"
[ "$(grep -c '^PASS rank' <<< "$log")" -eq "$np" ] || fail "not every rank passed"
# value RANK PATTERN: the count (field after "count") of the one line of RANK's file matching PATTERN.
count_of() {
  local f="$out/count.$1"
  [ -f "$f" ] || fail "rank $1 wrote no summary"
  awk -v pat="$2" '$0 ~ pat { for (i = 1; i < NF; ++i) if ($i == "count") s += $(i + 1) } END { print s + 0 }' "$f"
}
bytes_of() {
  awk -v pat="$2" '$0 ~ pat { for (i = 1; i < NF; ++i) if ($i == "bytes") s += $(i + 1) } END { print s + 0 }' "$out/count.$1"
}
want() {  # RANK PATTERN EXPECTED (count)
  local got
  got=$(count_of "$1" "$2")
  [ "$got" -eq "$3" ] || fail "rank $1: '$2' counted $got, expected $3 (summary: $(cat "$out/count.$1"))"
}
# The kv part adds a barrier, and rank 0's token to rank 1 (one MPI_Send of an int).
extra=0 token_bytes=0
[ "$mode" = kv ] && extra=1 token_bytes=4
for r in $(seq 0 $((np - 1))); do
  cat "$out/count.$r"
  want "$r" ": api MPI_Allreduce " 4
  want "$r" ": api MPI_Barrier " $((2 + extra))
  if [ "$mode" = rma ]; then
    # One fence epoch per rank (opened by the first fence, closed by the MPI_MODE_NOSUCCEED one).
    want "$r" ": rma_epoch MPI_Win_fence " 1
    want "$r" ": api MPI_Win_fence " 2
    [ "$r" = 1 ] && want 1 ": rma_epoch MPI_Win_lock " 1
  else
    want "$r" ": coll allreduce:" 4
    want "$r" ": coll barrier:" $((2 + extra))
  fi
  # Every event stopped, every parent open when its child started, nothing failed.
  grep -q "totals started \([0-9]*\) stopped \1 unstopped 0 bad_parent 0 failed 0" "$out/count.$r" ||
    fail "rank $r: events unbalanced: $(grep totals "$out/count.$r")"
  # Collectives: their transfers nest under rounds; rounds under the collective.
  if [ "$np" -gt 1 ]; then
    [ "$(count_of "$r" ": round round ")" -gt 0 ] || fail "rank $r: no rounds"
  fi
done
want 0 ": api MPI_Send " $((10 + extra))
want 0 ": p2p MPI_Send " $((10 + extra))
want 0 ": transfer send [a-z]+ under p2p " $((10 + extra))
[ "$(bytes_of 0 ": transfer send [a-z]+ under p2p ")" -eq $((80 + token_bytes)) ] || fail "rank 0: blocking sends' bytes are not $((80 + token_bytes))"
want 1 ": api MPI_Recv " $((10 + extra))
want 1 ": transfer recv [a-z]+ under p2p " $((10 + extra))
want 1 ": api MPI_Isend " 3
want 1 ": transfer send [a-z]+ under api " 3
[ "$(bytes_of 1 ": transfer send [a-z]+ under api ")" -eq 192 ] || fail "rank 1: non-blocking sends' bytes are not 192"
want 0 ": api MPI_Irecv " 3
want 0 ": transfer recv [a-z]+ under api " 3
want 0 ": api MPI_Waitall " 1
if [ "$mode" = kv ]; then
  # Two posts of one 4096-byte WRITE, one READ of two 1000-byte blocks; none on rank 1.
  want 0 ": kv kv_write " 2
  [ "$(bytes_of 0 ": kv kv_write ")" -eq 8192 ] || fail "rank 0: KV writes' bytes are not 8192"
  want 0 ": kv kv_read " 1
  [ "$(bytes_of 0 ": kv kv_read ")" -eq 2000 ] || fail "rank 0: KV reads' bytes are not 2000"
  want 1 ": kv kv_" 0
fi
echo "check_count.sh: ok"
