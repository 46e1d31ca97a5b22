#!/usr/bin/env bash
# Compare weft's OSU-style benchmarks with the same sources built against
# Open MPI.
#
#   osu_style_bench/compare.sh BUILD_DIR [NP]
#
# BUILD_DIR  weft build directory; its bin/ holds the programs built against
#            weft: the point-to-point tests osu_latency, osu_bw, osu_bibw and
#            the collective tests osu_allreduce, osu_barrier, osu_bcast,
#            osu_reduce, osu_allgather, osu_alltoall, osu_iallreduce.
# NP         ranks for the collective tests (default 2); the point-to-point
#            tests always run on exactly 2 ranks.
#
# What it does:
#   1. compiles the benchmark sources with `mpicc.openmpi -O2` into
#      BUILD_DIR/compare/ompi/;
#   2. for each program, runs the weft build and then the Open MPI build
#      (back to back) under `mpirun --oversubscribe -np N --bind-to none`
#      with --csv; the Open MPI run also gets `--mca btl self,vader`;
#   3. prints a table per program (size | weft | open-mpi | ratio, where
#      ratio = weft / open-mpi) and writes BUILD_DIR/compare/results.csv
#      (program,size,weft,ompi,ratio) and a plot per program,
#      BUILD_DIR/compare/PROGRAM.png.  Raw outputs are kept in
#      BUILD_DIR/compare/raw/.
#
# The value compared is the one the program prints with --csv: bandwidth for
# osu_bw and osu_bibw, average latency for the others (osu_barrier has one
# row, size 0), and for osu_iallreduce the overall time of the overlap pass
# (its raw CSV also holds the compute time, the pure collective time and the
# overlap %; the overlap % of both builds is printed below its table).
#
# Environment:
#   BENCH_ARGS     extra benchmark options for every run, e.g. "-m 1:65536 -i 1000 -x 10";
#                  with a layout option ("-t vector") only the point-to-point programs
#                  run (the collective tests have no -t)
#   BENCH_PROGS    programs to build and run, space separated (default: all of the above)
#   MPIRUN         launcher for both runs (default: mpirun)
#   BENCH_BIND     mpirun --bind-to value for both runs (default: none; e.g. core when the
#                  ranks do not outnumber the cores)
#   MPICC          Open MPI compiler wrapper (default: mpicc.openmpi)
#   BENCH_TIMEOUT  seconds allowed per run (default 600; needs `timeout`)
#   BENCH_PLOTS    0: no plots
#
# Exit status: 0 when every build and run succeeded, 1 otherwise (the tables
# are still printed for whatever ran), 2 on usage errors.
set -uo pipefail

BENCH_SCRIPT=compare.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

bench_start 2 "$@"
NP=${2:-2}
bench_count NP "$NP"

MPIRUN=${MPIRUN:-mpirun}
MPICC=${MPICC:-mpicc.openmpi}
bench_select_programs
bench_launch_setup "$MPIRUN" "$MPICC" awk
status=0

# --- 1. Build the Open MPI binaries ------------------------------------------
bench_ompi_setup compare bench_common.c "${PROGS[@]}"

# --- 2. Run ------------------------------------------------------------------
# run_one LABEL NP OUTFILE ERRFILE -- COMMAND...
run_one() {
    local label=$1 np=$2 out=$3 err=$4
    shift 5
    local cmd=("${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe -np "$np" --bind-to "${BENCH_BIND:-none}" "$@")
    echo "# [$label] ${cmd[*]}"
    "${cmd[@]}" </dev/null >"$out" 2>"$err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            echo "compare.sh: $label run timed out after ${TIMEOUT}s (BENCH_TIMEOUT); last lines of $err:" >&2
        else
            echo "compare.sh: $label run failed (exit $rc); last lines of $err:" >&2
        fi
        tail -n 12 "$err" | sed 's/^/    /' >&2
    fi
    return $rc
}

# print_table PROG NP WEFT_CSV OMPI_CSV: table on stdout, rows appended to $RESULTS.
print_table() {
    local prog=$1 np=$2 wcsv=$3 ocsv=$4 what better
    case "$prog" in
        osu_latency)   what="one-way latency (us)"; better="lower is better" ;;
        osu_bw)        what="bandwidth (MB/s)"; better="higher is better" ;;
        osu_bibw)      what="bi-directional bandwidth (MB/s)"; better="higher is better" ;;
        osu_allreduce) what="allreduce average latency (us)"; better="lower is better" ;;
        osu_barrier)   what="barrier average latency (us)"; better="lower is better" ;;
        osu_bcast)     what="broadcast average latency (us)"; better="lower is better" ;;
        osu_reduce)    what="reduce average latency (us)"; better="lower is better" ;;
        osu_allgather) what="allgather average latency (us), size per rank"; better="lower is better" ;;
        osu_alltoall)  what="alltoall average latency (us), size per rank pair"; better="lower is better" ;;
        osu_iallreduce) what="iallreduce overall time with overlapped compute (us)"; better="lower is better" ;;
        *)             what="value"; better="see the program" ;;
    esac
    echo
    echo "== $prog, np=$np: $what; ratio = weft/open-mpi, $better"
    { bench_rows W 2 "$wcsv"; bench_rows O 2 "$ocsv"; } |
        awk -v ratio=1 -v name="$prog" -v results="$RESULTS" "$BENCH_AWK_TABLE"
}

# print_overlap WEFT_CSV OMPI_CSV: osu_iallreduce's overlap % (5th CSV field) side by side.
print_overlap() {
    echo "-- overlap of computation and communication (%; higher is better)"
    { bench_rows W 5 "$1"; bench_rows O 5 "$2"; } | awk -v ratio=0 "$BENCH_AWK_TABLE"
}

echo "program,size,weft,ompi,ratio" >"$RESULTS"

for prog in "${PROGS[@]}"; do
    np=$NP
    is_pt2pt "$prog" && np=2
    wcsv=$RAW/$prog.weft.csv
    ocsv=$RAW/$prog.ompi.csv
    : >"$wcsv"
    : >"$ocsv"

    if [ -x "$BUILD_DIR/bin/$prog" ]; then
        run_one "weft $prog" "$np" "$wcsv" "$RAW/$prog.weft.err" -- \
            "$BUILD_DIR/bin/$prog" --csv "${EXTRA[@]}" || status=1
    else
        echo "compare.sh: $BUILD_DIR/bin/$prog not found (build weft first)" >&2
        status=1
    fi

    if [ -n "${OMPI_OK[$prog]:-}" ]; then
        run_one "open-mpi $prog" "$np" "$ocsv" "$RAW/$prog.ompi.err" -- \
            --mca btl self,vader "$OMPI_BIN/$prog" --csv "${EXTRA[@]}" || status=1
    fi

    print_table "$prog" "$np" "$wcsv" "$ocsv"
    if [ "$prog" = osu_iallreduce ]; then
        print_overlap "$wcsv" "$ocsv"
    fi
done

echo
echo "# results: $RESULTS"
bench_plot sweep "$RESULTS" -o "$OUT/{name}.png" --bench compare.sh \
    --setup "2 ranks (collectives $NP), shared memory, --bind-to ${BENCH_BIND:-none}" \
    --note "one run, $(date -u +%F)"
[ $status -eq 0 ] || echo "# some builds or runs failed, see the messages above and $RAW/" >&2
exit $status
