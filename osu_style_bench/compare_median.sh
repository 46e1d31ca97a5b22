#!/usr/bin/env bash
# Runs the side-by-side comparison several times and reports, per program and size, the median
# of weft's and Open MPI's numbers and the ratio of the medians. The runs interleave weft and
# Open MPI program by program, so machine noise hits both alike.
#
#   osu_style_bench/compare_median.sh BUILD_DIR [RUNS] [NP]
#
# RUNS defaults to 5. NP (default 2) is the number of ranks of the collective programs
# (osu_allreduce, osu_barrier, osu_bcast, osu_reduce, osu_allgather, osu_alltoall,
# osu_iallreduce); the point-to-point programs always run on 2 ranks.
# Writes BUILD_DIR/compare/median.csv (program,size,weft,ompi,ratio), prints a table, and plots
# each program's medians and spread (BUILD_DIR/compare/median/PROGRAM.png) and every ratio
# (BUILD_DIR/compare/median/ratios.png).
# Environment is passed to compare.sh (BENCH_ARGS, BENCH_PROGS to pick programs, ...); BENCH_PLOTS=0:
# no plots.
set -euo pipefail
BENCH_SCRIPT=compare_median.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
runs=${2:-5}
np=${3:-2}
mkdir -p "$build/compare"
all=$build/compare/all_runs.csv
: > "$all"
for i in $(seq 1 "$runs"); do
  echo "# run $i of $runs" >&2
  BENCH_PLOTS=0 bash "$here/compare.sh" "$build" "$np" > "$build/compare/run$i.log" 2>&1 || {
    echo "compare_median.sh: run $i failed, see $build/compare/run$i.log" >&2
    echo "compare_median.sh: (BENCH_PROGS=\"...\" limits the runs to the programs that work)" >&2
    exit 1
  }
  tail -n +2 "$build/compare/results.csv" >> "$all"
done
# median per (program, size) of each column, then the ratio of the medians
sort -t, -k1,1 -k2,2n "$all" | awk -F, -v out="$build/compare/median.csv" "$BENCH_AWK_MEDIAN"'
  function flush() {
    if (key == "") return
    w = median(ws); o = median(os)
    split(key, k, SUBSEP)
    printf "%s,%s,%.2f,%.2f,%.2f\n", k[1], k[2], w, o, (o > 0 ? w / o : 0) >> out
    printf "%-14s %-10s %12.2f %12.2f %8.2f\n", k[1], k[2], w, o, (o > 0 ? w / o : 0)
  }
  BEGIN { print "program,size,weft,ompi,ratio" > out
          printf "%-14s %-10s %12s %12s %8s\n", "program", "size", "weft", "open-mpi", "ratio" }
  { cur = $1 SUBSEP $2; if (cur != key) { flush(); key = cur; ws = ""; os = "" }
    ws = ws " " $3; os = os " " $4 }
  END { flush() }'
echo "# medians of $runs runs: $build/compare/median.csv" >&2
setup="2 ranks (collectives $np), shared memory, --bind-to ${BENCH_BIND:-none}"
bench_plot sweep "$all" --header program,size,weft,ompi,ratio -o "$build/compare/median/{name}.png" \
  --bench compare_median.sh --setup "$setup" --note "$runs runs, $(date -u +%F)"
bench_plot ratios "$all" --header program,size,weft,ompi,ratio -o "$build/compare/median/ratios.png" \
  --title "compare_median.sh: weft / Open MPI per program and size" --setup "$setup" --note "$(date -u +%F)"
