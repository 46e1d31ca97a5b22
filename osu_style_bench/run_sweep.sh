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

BENCH_SCRIPT=run_sweep.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

bench_start 2 "$@"
if [ ! -d "$BUILD_DIR/bin" ]; then
    echo "run_sweep.sh: '$BUILD_DIR/bin' does not exist (build weft first)" >&2
    exit 2
fi
NP=${2:-2}
bench_count NP "$NP"

MPIRUN=${MPIRUN:-mpirun}
bench_select_programs
bench_launch_setup "$MPIRUN"

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
