#!/usr/bin/env bash
# run_fault.sh for programs whose survivors cannot report to each other at the end (after
# MPI_Finalize): EXPECT must appear once per survivor, COUNT times in all.
#   run_fault_survivors.sh COUNT EXPECT NP PROGRAM [ARGS...]
set -uo pipefail
count=$1
expect=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
out=$("$here/run_fault.sh" "$expect" "$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || exit $rc
seen=$(echo "$out" | grep -cF "$expect")
if [ "$seen" -ne "$count" ]; then
  echo "run_fault_survivors.sh: expected output seen $seen times, not $count"
  exit 1
fi
echo "run_fault_survivors.sh: ok ($count survivors)"
