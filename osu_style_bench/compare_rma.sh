#!/usr/bin/env bash
# Compare weft's OSU-style one-sided (RMA) benchmarks with the same sources built against
# Open MPI, run with Open MPI's UCX one-sided component.
#
#   osu_style_bench/compare_rma.sh BUILD_DIR [RUNS]
#
# BUILD_DIR  weft build directory; its bin/ holds osu_put_latency, osu_get_latency,
#            osu_put_bw, osu_get_bw, osu_acc_latency, osu_fop_latency, osu_cas_latency
#            and osu_get_acc_latency built against weft.
# RUNS       passes over every case (default 3); each value reported is the median of the
#            passes, each ratio the ratio of the medians.
#
# What it does:
#   1. compiles the sources with `mpicc.openmpi -O2` into BUILD_DIR/compare_rma/ompi/;
#   2. for each pass and each case (a program and its options, below), runs the weft build
#      and then the Open MPI build back to back, with --csv, both under
#      `mpirun --oversubscribe -np 2 --bind-to none -x UCX_NET_DEVICES=lo`; the Open MPI run
#      also gets `--mca osc ucx --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any`;
#   3. prints a table per case (size | weft | open-mpi | ratio, ratio = weft / open-mpi) and
#      writes BUILD_DIR/compare_rma/results.csv (case,size,weft,ompi,ratio) and a plot per
#      case, BUILD_DIR/compare_rma/CASE.png.  Raw outputs are kept in BUILD_DIR/compare_rma/raw/.
#
# Cases (name: program and options; OSU's defaults otherwise: MPI_Win_allocate, -s flush):
#   put_latency            osu_put_latency -m 8:1048576
#   put_latency.lock       osu_put_latency -m 8:1048576 -s lock
#   put_latency.fence      osu_put_latency -m 8:1048576 -s fence -i 1000 -x 10
#   get_latency            osu_get_latency -m 8:1048576
#   put_bw                 osu_put_bw -m 65536:4194304
#   get_bw                 osu_get_bw -m 65536:4194304
#   acc_latency            osu_acc_latency -m 4:1024 -i 1000 -x 100     (MPI_CHAR, as OSU)
#   acc_latency.int        osu_acc_latency -m 4:65536 -T int -i 1000 -x 100
#   get_acc_latency        osu_get_acc_latency -m 4:1024 -i 1000 -x 100 (MPI_CHAR)
#   get_acc_latency.int    osu_get_acc_latency -m 4:65536 -T int -i 1000 -x 100
# (The accumulate cases run 1000 iterations at every size, so that a sweep to 64 KiB stays short
# on both libraries. BENCH_ARGS="-w create" measures windows of user memory.)
#   fop_latency            osu_fop_latency
#   cas_latency            osu_cas_latency
#
# Environment:
#   RMA_CASES      case names to run, space separated (default: all of the above)
#   BENCH_ARGS     extra options appended to every case, e.g. "-i 100 -x 10"
#   MPIRUN         launcher for both runs (default: mpirun)
#   MPICC          Open MPI compiler wrapper (default: mpicc.openmpi)
#   BENCH_TIMEOUT  seconds allowed per run (default 600; needs `timeout`)
#   BENCH_PLOTS    0: no plots
#
# Exit status: 0 when every build and run succeeded, 1 otherwise (the tables are still
# printed for whatever ran), 2 on usage errors.
set -uo pipefail

BENCH_SCRIPT=compare_rma.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

bench_start 2 "$@"
RUNS=${2:-3}
bench_count RUNS "$RUNS"

MPIRUN=${MPIRUN:-mpirun}
MPICC=${MPICC:-mpicc.openmpi}
read -r -a EXTRA <<< "${BENCH_ARGS:-}"

declare -A CASE_PROG=() CASE_ARGS=()
ALL_CASES=()
add_case() {  # add_case NAME PROGRAM ARGS...
    local name=$1 prog=$2
    shift 2
    ALL_CASES+=("$name")
    CASE_PROG[$name]=$prog
    CASE_ARGS[$name]="$*"
}
add_case put_latency         osu_put_latency -m 8:1048576
add_case put_latency.lock    osu_put_latency -m 8:1048576 -s lock
add_case put_latency.fence   osu_put_latency -m 8:1048576 -s fence -i 1000 -x 10
add_case get_latency         osu_get_latency -m 8:1048576
add_case put_bw              osu_put_bw -m 65536:4194304
add_case get_bw              osu_get_bw -m 65536:4194304
add_case acc_latency         osu_acc_latency -m 4:1024 -i 1000 -x 100
add_case acc_latency.int     osu_acc_latency -m 4:65536 -T int -i 1000 -x 100
add_case get_acc_latency     osu_get_acc_latency -m 4:1024 -i 1000 -x 100
add_case get_acc_latency.int osu_get_acc_latency -m 4:65536 -T int -i 1000 -x 100
add_case fop_latency         osu_fop_latency
add_case cas_latency         osu_cas_latency

CASES=("${ALL_CASES[@]}")
if [ -n "${RMA_CASES:-}" ]; then
    read -r -a CASES <<< "$RMA_CASES"
    for c in "${CASES[@]}"; do
        if [ -z "${CASE_PROG[$c]:-}" ]; then
            echo "compare_rma.sh: unknown case '$c' in RMA_CASES (known: ${ALL_CASES[*]})" >&2
            exit 2
        fi
    done
fi

bench_launch_setup "$MPIRUN" "$MPICC" awk
status=0

# --- 1. Build the Open MPI binaries ------------------------------------------
progs=()
for c in "${CASES[@]}"; do progs+=("${CASE_PROG[$c]}"); done
bench_ompi_setup compare_rma "bench_common.c bench_rma.c" "${progs[@]}"

# Every run stays on loopback.
LAUNCH=("${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe -np 2 --bind-to none -x UCX_NET_DEVICES=lo)
OMPI_MCA=(--mca osc ucx --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)

# run_one LABEL OUTFILE ERRFILE -- COMMAND...
run_one() {
    local label=$1 out=$2 err=$3
    shift 4
    local cmd=("${LAUNCH[@]}" "$@")
    echo "# [$label] ${cmd[*]}"
    "${cmd[@]}" </dev/null >"$out" 2>"$err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "compare_rma.sh: $label failed (exit $rc); last lines of $err:" >&2
        tail -n 12 "$err" | sed 's/^/    /' >&2
    fi
    return $rc
}

# --- 2. Run, interleaved: each pass runs every case under weft, then Open MPI -
for run in $(seq 1 "$RUNS"); do
    for c in "${CASES[@]}"; do
        prog=${CASE_PROG[$c]}
        read -r -a args <<< "${CASE_ARGS[$c]}"
        wcsv=$RAW/$c.weft.$run.csv
        ocsv=$RAW/$c.ompi.$run.csv
        : >"$wcsv"
        : >"$ocsv"
        if [ -x "$BUILD_DIR/bin/$prog" ]; then
            run_one "pass $run, weft $c" "$wcsv" "$RAW/$c.weft.$run.err" -- \
                "$BUILD_DIR/bin/$prog" --csv "${args[@]}" "${EXTRA[@]}" || status=1
        else
            echo "compare_rma.sh: $BUILD_DIR/bin/$prog not found (build weft first)" >&2
            status=1
        fi
        if [ -n "${OMPI_OK[$prog]:-}" ]; then
            run_one "pass $run, open-mpi $c" "$ocsv" "$RAW/$c.ompi.$run.err" -- \
                "${OMPI_MCA[@]}" "$OMPI_BIN/$prog" --csv "${args[@]}" "${EXTRA[@]}" || status=1
        fi
    done
done

# --- 3. Medians and tables ---------------------------------------------------
echo "case,size,weft,ompi,ratio" >"$RESULTS"
for c in "${CASES[@]}"; do
    case "$c" in
        *_bw*) what="bandwidth (MB/s), higher is better" ;;
        *)     what="latency (us), lower is better" ;;
    esac
    echo
    echo "== $c (${CASE_PROG[$c]} ${CASE_ARGS[$c]}): $what; median of $RUNS; ratio = weft/open-mpi"
    for run in $(seq 1 "$RUNS"); do
        bench_rows W 2 "$RAW/$c.weft.$run.csv"
        bench_rows O 2 "$RAW/$c.ompi.$run.csv"
    done | awk -v ratio=1 -v name="$c" -v results="$RESULTS" "$BENCH_AWK_TABLE"
done

echo
echo "# results: $RESULTS"
bench_plot sweep "$RESULTS" -o "$OUT/{name}.png" --bench compare_rma.sh \
    --setup "2 ranks, one host, UCX on loopback (Open MPI: osc ucx)" \
    --note "medians of $RUNS pass(es), $(date -u +%F)"
[ $status -eq 0 ] || echo "# some builds or runs failed, see the messages above and $RAW/" >&2
exit $status
