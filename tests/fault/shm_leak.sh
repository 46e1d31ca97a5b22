#!/usr/bin/env bash
# A job in which a rank dies must leave no file in /dev/shm once it has ended.
#   shm_leak.sh NP PROGRAM [ARGS...]
# PROGRAM prints "job NAMESPACE pid PID rank R" per rank and "PASS finalized R" per survivor.
# Every weft file name carries the job's namespace (non-alphanumerics as '_') or its creator's
# pid; after the job none may remain.
set -uo pipefail
np=$1
here=$(cd "$(dirname "$0")" && pwd)
out=$(WEFT_TEST_KEEP_GOING=1 "$here/../launch.sh" "$@" 2>&1)
rc=$?
echo "$out"
echo "shm_leak.sh: launcher exit status $rc"
if grep -q "FAIL" <<< "$out"; then
  echo "shm_leak.sh: the program reported a failure"
  exit 1
fi
survivors=$(echo "$out" | grep -c "^PASS finalized")
if [ "$survivors" -ne $((np - 1)) ]; then
  echo "shm_leak.sh: expected $((np - 1)) survivors to finalize, saw $survivors"
  exit 1
fi
ns=$(echo "$out" | sed -n 's/^job \([^ ]*\) pid .*/\1/p' | head -1)
pids=$(echo "$out" | sed -n 's/^job [^ ]* pid \([0-9]*\) .*/\1/p')
if [ -z "$ns" ] || [ "$ns" = "(none)" ] || [ -z "$pids" ]; then
  echo "shm_leak.sh: the job did not name its namespace and pids"
  exit 1
fi
clean=$(printf '%s' "${ns:0:96}" | tr -c 'A-Za-z0-9' '_')
left=$(ls /dev/shm 2>/dev/null | grep '^weft-' | grep -F -- "-$clean-")
for pid in $pids; do
  left+=$'\n'$(ls /dev/shm 2>/dev/null | grep '^weft-' | grep -E -- "-$pid-")
done
left=$(echo "$left" | sed '/^$/d' | sort -u)
if [ -n "$left" ]; then
  echo "shm_leak.sh: files of the job remain in /dev/shm:"
  echo "$left"
  for f in $left; do rm -f "/dev/shm/$f"; done
  exit 1
fi
echo "shm_leak.sh: ok (nothing of job $ns left in /dev/shm)"
