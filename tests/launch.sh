#!/usr/bin/env bash
# Launch wrapper for weft's multi-rank tests.
#
#   tests/launch.sh NP PROGRAM [ARGS...]
#
# NP 0 runs PROGRAM directly (singleton, no launcher).
# WEFT_TEST_LAUNCHER selects the launcher:
#   auto   (default) srun when a local Slurm is up and healthy, else mpirun
#   mpirun mpirun --oversubscribe --bind-to none -np NP
#   srun   srun --mpi=pmix -O -N1 -n NP
#   none   run PROGRAM directly (NP is ignored)
# WEFT_TEST_TIME_LIMIT  srun --time value in minutes (default 5)
# WEFT_TEST_MPIRUN_BIN      mpirun executable to use (default: mpirun)
# WEFT_TEST_SRUN_BIN        srun executable to use (default: srun)
# WEFT_TEST_KEEP_GOING=1    the job survives a rank that dies (mpirun --enable-recovery,
#                           srun --kill-on-bad-exit=0), for fault tests
# The wrapper exits with the program's (launcher's) status.
set -u

if [ $# -lt 2 ]; then
    echo "usage: $0 NP PROGRAM [ARGS...]" >&2
    exit 2
fi

np=$1
shift
case "$np" in
    ''|*[!0-9]*) echo "launch.sh: NP must be a non-negative integer, got '$np'" >&2; exit 2 ;;
esac

launcher=${WEFT_TEST_LAUNCHER:-auto}
[ "$np" -eq 0 ] && launcher=none

slurm_up() {
    command -v sinfo >/dev/null 2>&1 || return 1
    command -v srun >/dev/null 2>&1 || return 1
    timeout 5 scontrol ping >/dev/null 2>&1 || return 1
    timeout 5 sinfo -h -o %t 2>/dev/null | grep -Eq '^(idle|mix|mixed|alloc|allocated|comp|completing)[~#$@*]?$'
}

if [ "$launcher" = auto ]; then
    if slurm_up; then launcher=srun; else launcher=mpirun; fi
fi

case "$launcher" in
    none)
        echo "launch.sh: launcher=none (singleton): $*" >&2
        exec "$@"
        ;;
    mpirun)
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        mpirun_bin=${WEFT_TEST_MPIRUN_BIN:-mpirun}
        echo "launch.sh: launcher=mpirun np=$np: $*" >&2
        keep=()
        [ "${WEFT_TEST_KEEP_GOING:-0}" = 1 ] && keep=(--enable-recovery)
        # A session directory of its own: two mpiruns starting at once race on creating a
        # shared one (Open MPI 4.1: "mkdir ... /tmp/ompi.<host>.<uid>: File exists").
        session=$(mktemp -d "${TMPDIR:-/tmp}/weft-mpirun.XXXXXX")
        "$mpirun_bin" --oversubscribe --bind-to none --mca orte_tmpdir_base "$session" "${keep[@]}" \
            -np "$np" "$@" &
        child=$!
        trap 'kill -TERM "$child" 2>/dev/null' TERM INT
        wait "$child"
        rc=$?
        wait "$child" 2>/dev/null  # a trapped signal returns early from the first wait
        rm -rf "$session"
        exit "$rc"
        ;;
    srun)
        srun_bin=${WEFT_TEST_SRUN_BIN:-srun}
        echo "launch.sh: launcher=srun np=$np: $*" >&2
        exec "$srun_bin" --mpi=pmix -O -N1 -n "$np" --time="${WEFT_TEST_TIME_LIMIT:-5}" \
            --kill-on-bad-exit="$([ "${WEFT_TEST_KEEP_GOING:-0}" = 1 ] && echo 0 || echo 1)" "$@"
        ;;
    *)
        echo "launch.sh: unknown WEFT_TEST_LAUNCHER '$launcher' (auto|mpirun|srun|none)" >&2
        exit 2
        ;;
esac
