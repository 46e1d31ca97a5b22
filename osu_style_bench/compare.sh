#!/usr/bin/env bash
# Compare weft's OSU-style benchmarks with the same sources built against
# Open MPI.
#
#   osu_style_bench/compare.sh BUILD_DIR [NP]
#
# BUILD_DIR  weft build directory; its bin/ holds osu_latency, osu_bw,
#            osu_bibw and osu_allreduce built against weft.
# NP         ranks for osu_allreduce (default 2); the point-to-point tests
#            always run on exactly 2 ranks.
#
# What it does:
#   1. compiles the benchmark sources with `mpicc.openmpi -O2` into
#      BUILD_DIR/compare/ompi/;
#   2. for each program, runs the weft build and then the Open MPI build
#      (back to back) under `mpirun --oversubscribe -np N --bind-to none`
#      with --csv; the Open MPI run also gets `--mca btl self,vader`;
#   3. prints a table per program (size | weft | open-mpi | ratio, where
#      ratio = weft / open-mpi) and writes BUILD_DIR/compare/results.csv
#      (program,size,weft,ompi,ratio).  Raw outputs are kept in
#      BUILD_DIR/compare/raw/.
#
# Environment:
#   BENCH_ARGS     extra benchmark options for every run, e.g. "-m 1:65536 -i 1000 -x 10";
#                  with a layout option ("-t vector") only the point-to-point programs
#                  run (osu_allreduce has no -t)
#   MPIRUN         launcher for both runs (default: mpirun)
#   MPICC          Open MPI compiler wrapper (default: mpicc.openmpi)
#   BENCH_TIMEOUT  seconds allowed per run (default 600; needs `timeout`)
#
# Exit status: 0 when every build and run succeeded, 1 otherwise (the tables
# are still printed for whatever ran), 2 on usage errors.
set -uo pipefail

usage() {
    sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
case "$1" in -h|--help) usage ;; esac

if [ ! -d "$1" ]; then
    echo "compare.sh: build directory '$1' does not exist" >&2
    exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
NP=${2:-2}
case "$NP" in
    ''|*[!0-9]*) echo "compare.sh: NP must be a positive integer, got '$NP'" >&2; exit 2 ;;
esac
if [ "$NP" -lt 1 ]; then
    echo "compare.sh: NP must be at least 1" >&2
    exit 2
fi

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MPIRUN=${MPIRUN:-mpirun}
MPICC=${MPICC:-mpicc.openmpi}
TIMEOUT=${BENCH_TIMEOUT:-600}
read -r -a EXTRA <<< "${BENCH_ARGS:-}"

PROGS=(osu_latency osu_bw osu_bibw osu_allreduce)
for arg in "${EXTRA[@]}"; do
    case "$arg" in
        -t*) PROGS=(osu_latency osu_bw osu_bibw)
             echo "# BENCH_ARGS selects a message layout: osu_allreduce is left out" ;;
    esac
done
OUT=$BUILD_DIR/compare
OMPI_BIN=$OUT/ompi
RAW=$OUT/raw
RESULTS=$OUT/results.csv

if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

for tool in "$MPIRUN" "$MPICC" awk; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "compare.sh: '$tool' not found" >&2
        exit 1
    fi
done

TIMEOUT_CMD=()
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT_CMD=(timeout -k 10 "$TIMEOUT")
fi

mkdir -p "$OMPI_BIN" "$RAW" || exit 1
status=0

# --- 1. Build the Open MPI binaries ------------------------------------------
echo "# building Open MPI binaries with $MPICC -O2 into $OMPI_BIN"
declare -A OMPI_OK=()
for prog in "${PROGS[@]}"; do
    if "$MPICC" -O2 -std=c11 -o "$OMPI_BIN/$prog" \
        "$SRC_DIR/$prog.c" "$SRC_DIR/bench_common.c"; then
        OMPI_OK[$prog]=1
    else
        echo "compare.sh: building $prog against Open MPI failed" >&2
        status=1
    fi
done

# --- 2. Run ------------------------------------------------------------------
# run_one LABEL NP OUTFILE ERRFILE -- COMMAND...
run_one() {
    local label=$1 np=$2 out=$3 err=$4
    shift 5
    local cmd=("${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe -np "$np" --bind-to none "$@")
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
    esac
    echo
    echo "== $prog, np=$np: $what; ratio = weft/open-mpi, $better"
    awk -F, -v prog="$prog" -v results="$RESULTS" '
        function isnum(s) { return s ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
        FILENAME == ARGV[1] && /^[0-9]+,/ && isnum($2) {
            if (!(($1) in seen)) { seen[$1] = 1; order[n++] = $1 + 0 }
            w[$1] = $2; next
        }
        FILENAME == ARGV[2] && /^[0-9]+,/ && isnum($2) {
            if (!(($1) in seen)) { seen[$1] = 1; order[n++] = $1 + 0 }
            o[$1] = $2; next
        }
        END {
            # sizes in increasing order (insertion sort; the lists are short)
            for (i = 1; i < n; i++) {
                v = order[i]
                for (j = i - 1; j >= 0 && order[j] > v; j--) order[j + 1] = order[j]
                order[j + 1] = v
            }
            printf "%-10s | %14s | %14s | %8s\n", "size", "weft", "open-mpi", "ratio"
            printf "%-10s-+-%14s-+-%14s-+-%8s\n", "----------", "--------------", "--------------", "--------"
            logsum = 0; nr = 0
            for (i = 0; i < n; i++) {
                s = order[i] ""
                wv = (s in w) ? w[s] : ""
                ov = (s in o) ? o[s] : ""
                r = ""
                if (wv != "" && ov != "" && ov + 0 > 0 && wv + 0 > 0) {
                    r = sprintf("%.2f", wv / ov)
                    logsum += log(wv / ov); nr++
                }
                printf "%-10s | %14s | %14s | %8s\n", s, (wv == "" ? "-" : wv),
                       (ov == "" ? "-" : ov), (r == "" ? "-" : r)
                printf "%s,%s,%s,%s,%s\n", prog, s, wv, ov, r >> results
            }
            if (n == 0)
                print "(no results)"
            else if (nr > 0)
                printf "%-10s | %14s | %14s | %8.2f\n", "geomean", "", "", exp(logsum / nr)
        }' "$wcsv" "$ocsv"
}

echo "program,size,weft,ompi,ratio" >"$RESULTS"

for prog in "${PROGS[@]}"; do
    np=2
    [ "$prog" = osu_allreduce ] && np=$NP
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
done

echo
echo "# results: $RESULTS"
[ $status -eq 0 ] || echo "# some builds or runs failed, see the messages above and $RAW/" >&2
exit $status
