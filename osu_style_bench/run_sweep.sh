#!/usr/bin/env bash
# Run weft's OSU-style benchmarks and print their OSU tables.
#
#   osu_style_bench/run_sweep.sh BUILD_DIR [NP]
#
# BUILD_DIR  weft build directory; its bin/ holds the programs: the
#            point-to-point tests osu_latency, osu_bw, osu_bibw and the
#            collective tests osu_allreduce, osu_barrier, osu_bcast,
#            osu_reduce, osu_allgather, osu_alltoall, osu_iallreduce.
# NP         ranks for the collective tests (default 2); the point-to-point
#            tests always run on exactly 2 ranks.
#
# Each program runs under `mpirun --oversubscribe -np N --bind-to none`, in
# the order above (or in the order of BENCH_PROGS).
#
# Environment:
#   BENCH_ARGS     extra benchmark options for every program, e.g. "-m 1:65536 -i 1000";
#                  with a layout option ("-t vector") only the point-to-point programs
#                  run (the collective tests have no -t)
#   BENCH_PROGS    programs to run, space separated (default: all of the above)
#   MPIRUN         launcher (default: mpirun)
#   BENCH_TIMEOUT  seconds allowed per program (default 600; needs `timeout`)
#
# Exit status: 0 when every program run succeeded, 1 otherwise, 2 on usage
# errors.
set -uo pipefail

usage() {
    sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
case "$1" in -h|--help) usage ;; esac

if [ ! -d "$1/bin" ]; then
    echo "run_sweep.sh: '$1/bin' does not exist (build weft first)" >&2
    exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
NP=${2:-2}
case "$NP" in
    ''|*[!0-9]*) echo "run_sweep.sh: NP must be a positive integer, got '$NP'" >&2; exit 2 ;;
esac
if [ "$NP" -lt 1 ]; then
    echo "run_sweep.sh: NP must be at least 1" >&2
    exit 2
fi

MPIRUN=${MPIRUN:-mpirun}
TIMEOUT=${BENCH_TIMEOUT:-600}
read -r -a EXTRA <<< "${BENCH_ARGS:-}"

PT2PT_PROGS=(osu_latency osu_bw osu_bibw)
COLL_PROGS=(osu_allreduce osu_barrier osu_bcast osu_reduce osu_allgather osu_alltoall
            osu_iallreduce)
is_pt2pt() {
    local p
    for p in "${PT2PT_PROGS[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}
PROGS=("${PT2PT_PROGS[@]}" "${COLL_PROGS[@]}")
if [ -n "${BENCH_PROGS:-}" ]; then
    read -r -a WANT <<< "$BENCH_PROGS"
    for w in "${WANT[@]}"; do
        case " ${PROGS[*]} " in
            *" $w "*) ;;
            *) echo "run_sweep.sh: unknown program '$w' in BENCH_PROGS (known: ${PROGS[*]})" >&2
               exit 2 ;;
        esac
    done
    PROGS=("${WANT[@]}")
fi
for arg in "${EXTRA[@]}"; do
    case "$arg" in
        -t*) SEL=()
             for p in "${PROGS[@]}"; do is_pt2pt "$p" && SEL+=("$p"); done
             PROGS=("${SEL[@]}")
             echo "# BENCH_ARGS selects a message layout: the collective programs are left out" ;;
    esac
done

if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "run_sweep.sh: '$MPIRUN' not found" >&2
    exit 1
fi

TIMEOUT_CMD=()
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT_CMD=(timeout -k 10 "$TIMEOUT")
fi

status=0
for prog in "${PROGS[@]}"; do
    np=$NP
    is_pt2pt "$prog" && np=2
    exe=$BUILD_DIR/bin/$prog
    echo
    echo "### $prog (np=$np)"
    if [ ! -x "$exe" ]; then
        echo "run_sweep.sh: $exe not found" >&2
        status=1
        continue
    fi
    "${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe -np "$np" --bind-to none \
        "$exe" "${EXTRA[@]}" </dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "run_sweep.sh: $prog failed (exit $rc)" >&2
        status=1
    fi
done
exit $status
