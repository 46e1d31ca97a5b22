#!/usr/bin/env bash
# mpit_list, the MPI_T lister built on the MPI standard alone: its listing covers every variable
# once, shows the environment's values, and, inside a job, counters that moved. Where Open MPI's
# wrapper is installed, the same source must also build against Open MPI (standard MPI only);
# where MPICH's is, the lister built by it must list the same variables from weft's libmpich.so.12
# (the MPICH ABI of MPI_T).
#
#   tests/tools/check_mpit_list.sh LAUNCH_SH MPIT_LIST SOURCE LIBDIR
set -euo pipefail
launch=$1 lister=$2 source=$3 libdir=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check_mpit_list: FAIL: $*" >&2; exit 1; }

WEFT_SPIN_COUNT=77 WEFT_PT2PT=shm "$lister" > "$out/plain.txt"
read -r ncvar npvar ncat < <(awk '/control variables,/ { print $1, $4, $7 }' "$out/plain.txt")
[ -n "${ncvar:-}" ] || fail "no summary line"
[ "$(grep -c '^  cvar ' "$out/plain.txt")" = "$ncvar" ] || fail "listed $(grep -c '^  cvar ' "$out/plain.txt") of $ncvar control variables"
[ "$(grep -c '^  pvar ' "$out/plain.txt")" = "$npvar" ] || fail "listed $(grep -c '^  pvar ' "$out/plain.txt") of $npvar performance variables"
[ "$(grep -c '^category ' "$out/plain.txt")" = "$ncat" ] || fail "categories listed differ from $ncat"
dups=$(awk '/^  [cp]var / { print $2 }' "$out/plain.txt" | sort | uniq -d)
[ -z "$dups" ] || fail "listed twice: $dups"
grep -Eq '^  cvar WEFT_SPIN_COUNT +count +readonly += 77$' "$out/plain.txt" || fail "WEFT_SPIN_COUNT=77 not shown"
grep -Eq '^  cvar WEFT_PT2PT +choice +readonly += shm$' "$out/plain.txt" || fail "WEFT_PT2PT=shm not shown"
grep -Eq '^  cvar WEFT_DEBUG +choice +local ' "$out/plain.txt" || fail "WEFT_DEBUG is not writable (scope local)"

"$launch" 2 "$lister" --init > "$out/job.txt"
calls=$(awk '/^  pvar weft_coll_allreduce_.*_calls/ { s += $NF } END { print s + 0 }' "$out/job.txt")
[ "$calls" -ge 1 ] || fail "no allreduce call counted in a job that made one"
sent=$(awk '/^  pvar weft_pt2pt_(shm|ucx)_messages_sent/ { s += $NF } END { print s + 0 }' "$out/job.txt")
[ "$sent" -ge 1 ] || fail "no message counted in a job of two ranks"
echo "check_mpit_list: $ncvar control, $npvar performance variables, $ncat categories; in a job: $calls allreduce calls, $sent messages"

if command -v mpicc.openmpi > /dev/null; then
  mpicc.openmpi -std=c11 -Wall -o "$out/mpit_list_openmpi" "$source" || fail "does not build against Open MPI"
  echo "check_mpit_list: builds against Open MPI too"
else
  echo "check_mpit_list: mpicc.openmpi not installed, the Open MPI build is not checked"
fi

if command -v mpicc.mpich > /dev/null; then
  mpicc.mpich -std=c11 -Wall -o "$out/mpit_list_mpich" "$source" || fail "does not build against MPICH"
  WEFT_SPIN_COUNT=77 WEFT_PT2PT=shm "$(dirname "$0")/../abi/run_abi.sh" "$libdir" 0 "$out/mpit_list_mpich" > "$out/mpich.txt" \
    || fail "the MPICH-built lister failed on weft"
  grep -v '^run_abi' "$out/mpich.txt" | diff -q - "$out/plain.txt" > /dev/null \
    || fail "the MPICH-built lister shows another listing: $(grep -v '^run_abi' "$out/mpich.txt" | diff - "$out/plain.txt" | head -5)"
  echo "check_mpit_list: built by MPICH's wrapper, it lists the same from weft's libmpich.so.12"
else
  echo "check_mpit_list: mpicc.mpich not installed, the MPICH ABI of MPI_T is not checked"
fi
