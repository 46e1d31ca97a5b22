#!/usr/bin/env bash
# Run weft's OSU-style benchmarks and print their OSU tables.
#
#   osu_style_bench/run_sweep.sh BUILD_DIR [NP]
#
# BUILD_DIR  weft build directory; its bin/ holds osu_latency, osu_bw,
#            osu_bibw and osu_allreduce.
# NP         ranks for osu_allreduce (default 2); the point-to-point tests
#            (latency, bw, bibw) always run on exactly 2 ranks.
#
# Each program runs under `mpirun --oversubscribe -np N --bind-to none`.
#
# Environment:
#   BENCH_ARGS     extra benchmark options for every program, e.g. "-m 1:65536 -i 1000"
#   MPIRUN         launcher (default: mpirun)
#   BENCH_TIMEOUT  seconds allowed per program (default 600; needs `timeout`)
#
# Exit status: 0 when all four programs succeeded, 1 otherwise, 2 on usage
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
for prog in osu_latency osu_bw osu_bibw osu_allreduce; do
    np=2
    [ "$prog" = osu_allreduce ] && np=$NP
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
