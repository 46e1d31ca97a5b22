#!/usr/bin/env bash
# A rank whose launcher is gone must exit. Starts PROGRAM (every rank blocks in a receive that
# never matches and prints "rank R pid P ready"), kills the launcher with SIGKILL, and waits
# up to WAIT seconds for every rank's process to be gone.
#   orphans.sh NP WAIT PROGRAM [ARGS...]
set -uo pipefail
np=$1
wait_s=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$here/../launch.sh" "$np" "$@" >"$log" 2>&1 &
wrapper=$!
for _ in $(seq 1 300); do
  [ "$(grep -c ' ready$' "$log")" -ge "$np" ] && break
  sleep 0.1
done
cat "$log"
pids=$(sed -n 's/^rank [0-9]* pid \([0-9]*\) ready$/\1/p' "$log")
if [ "$(echo "$pids" | grep -c .)" -ne "$np" ]; then
  echo "orphans.sh: the ranks did not all start"
  kill -9 "$wrapper" $pids 2>/dev/null
  exit 1
fi
sleep 0.5  # into the receive
# launch.sh runs mpirun as its child (and removes mpirun's session directory after it).
launcher=$(pgrep -P "$wrapper" -x mpirun || pgrep -P "$wrapper" -x orterun || echo "$wrapper")
kill -9 "$launcher"
echo "orphans.sh: launcher $launcher killed; waiting for ranks $(echo $pids)"
start=$(date +%s.%N)
for _ in $(seq 1 $((wait_s * 10))); do
  alive=
  for p in $pids; do
    # A zombie (state Z) has exited already.
    if [ -e /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null; then alive+=" $p"; fi
  done
  if [ -z "$alive" ]; then
    echo "orphans.sh: ok, every rank exited within $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    exit 0
  fi
  sleep 0.1
done
echo "orphans.sh: ranks still running ${wait_s} s after their launcher was killed:$alive"
ps -o pid,ppid,stat,pcpu,etime,cmd -p "${alive# }" 2>/dev/null
kill -9 $alive 2>/dev/null
exit 1
