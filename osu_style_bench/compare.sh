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
#      (program,size,weft,ompi,ratio).  Raw outputs are kept in
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
            *) echo "compare.sh: unknown program '$w' in BENCH_PROGS (known: ${PROGS[*]})" >&2
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

# print_overlap WEFT_CSV OMPI_CSV: osu_iallreduce's overlap % (5th CSV field) side by side.
print_overlap() {
    echo "-- overlap of computation and communication (%; higher is better)"
    awk -F, '
        function isnum(s) { return s ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ }
        FILENAME == ARGV[1] && /^[0-9]+,/ && isnum($5) {
            if (!(($1) in seen)) { seen[$1] = 1; order[n++] = $1 + 0 }
            w[$1] = $5; next
        }
        FILENAME == ARGV[2] && /^[0-9]+,/ && isnum($5) {
            if (!(($1) in seen)) { seen[$1] = 1; order[n++] = $1 + 0 }
            o[$1] = $5; next
        }
        END {
            for (i = 1; i < n; i++) {
                v = order[i]
                for (j = i - 1; j >= 0 && order[j] > v; j--) order[j + 1] = order[j]
                order[j + 1] = v
            }
            printf "%-10s | %14s | %14s\n", "size", "weft", "open-mpi"
            printf "%-10s-+-%14s-+-%14s\n", "----------", "--------------", "--------------"
            for (i = 0; i < n; i++) {
                s = order[i] ""
                printf "%-10s | %14s | %14s\n", s, ((s in w) ? w[s] : "-"),
                       ((s in o) ? o[s] : "-")
            }
            if (n == 0)
                print "(no results)"
        }' "$1" "$2"
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
[ $status -eq 0 ] || echo "# some builds or runs failed, see the messages above and $RAW/" >&2
exit $status
