#!/usr/bin/env bash
# Soak: 4 ranks (oversubscribed on small machines) run random mixed point-to-point, collectives
# and one-sided traffic for SECONDS (default 60), every byte checked (osu_style_bench/soak.c);
# resident memory must stay flat and no /dev/shm file may outlive the job.
#   scripts/soak.sh [BUILD_DIR] [SECONDS] [NP]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-60}
np=${3:-4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
before=$(ls /dev/shm | sort)
timeout $((seconds + 120)) mpirun --oversubscribe --bind-to none -np "$np" "$build/bin/soak" --seconds "$seconds"
rc=$?
after=$(ls /dev/shm | sort)
left=$(comm -13 <(echo "$before") <(echo "$after"))
if [ -n "$left" ]; then
  echo "soak.sh: FAIL: files left in /dev/shm after the job:"
  echo "$left"
  exit 3
fi
echo "soak.sh: /dev/shm as before the job"
[ "$rc" -eq 0 ] && echo "soak.sh: PASS" || echo "soak.sh: FAIL (status $rc)"
exit "$rc"
