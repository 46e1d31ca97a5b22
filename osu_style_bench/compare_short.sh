#!/usr/bin/env bash
# The regression guard of the hot paths: a few key rows, weft and Open MPI side by side, the same
# sources compiled for both, interleaved run by run; prints each row's medians, their ratio and
# the target it must meet. Run it before and after any change to the point-to-point or
# collective fast paths, and quote its table in the commit message.
#
#   osu_style_bench/compare_short.sh BUILD_DIR [RUNS]
#
# Rows (RUNS runs each, default 5; 2 ranks unless said):
#   osu_latency 8 B and 1 MiB     ratio weft/ompi, lower is better   targets 0.8 and 1.0
#   osu_bw 8 B and 4 MiB          ratio weft/ompi, higher is better  target 1.0
#   osu_allreduce 8 B, 4 ranks    ratio weft/ompi, lower is better   target 1.0
#   osu_mbw_mr 8 B, 2 pairs       ratio weft/ompi, higher is better  target 1.0
# Environment: MPICC (Open MPI's wrapper, default mpicc.openmpi), MPIRUN (default mpirun),
# BENCH_BIND (--bind-to for every run, default core, none where there are fewer cores than
# ranks; "none" for unbound runs).
# Exit status 0 when every run worked (missed targets are reported, not failed: the guard is for
# people, timing belongs to no test), 1 when a run failed.
# Writes BUILD_DIR/short/ratios.csv (the rows, their .vals files and targets) and ratios.png.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BENCH_SCRIPT=compare_short.sh
# shellcheck source=bench_lib.sh
. "$here/bench_lib.sh"
[ $# -ge 1 ] || { sed -n 2,20p "$0"; exit 2; }
build=$(cd "$1" && pwd)
runs=${2:-5}
MPICC=${MPICC:-mpicc.openmpi}
MPIRUN=${MPIRUN:-mpirun}
bind=${BENCH_BIND:-core}
out=$build/short
mkdir -p "$out/ompi"
for p in osu_latency osu_bw osu_allreduce; do
  "$MPICC" -O2 -std=c11 -o "$out/ompi/$p" "$here/$p.c" "$here/bench_common.c" || exit 1
done
"$MPICC" -O2 -std=c11 -o "$out/ompi/osu_mbw_mr" "$here/osu_mbw_mr.c" || exit 1

# name prog np size lower|higher target
rows=(
  "latency_8B osu_latency 2 8 lower 0.8"
  "latency_1MiB osu_latency 2 1048576 lower 1.0"
  "bw_8B osu_bw 2 8 higher 1.0"
  "bw_4MiB osu_bw 2 4194304 higher 1.0"
  "allreduce_8B_np4 osu_allreduce 4 8 lower 1.0"
  "mbw_mr_8B_2pairs osu_mbw_mr 4 8 higher 1.0"
)
status=0
rm -f "$out"/*.vals
for r in $(seq 1 "$runs"); do
  echo "# run $r of $runs" >&2
  for row in "${rows[@]}"; do
    read -r name prog np size _ _ <<< "$row"
    bench_one "weft $prog $size" "$np" "$size" "$out/$name.weft.vals" "$build/bin/$prog"
    bench_one "ompi $prog $size" "$np" "$size" "$out/$name.ompi.vals" --mca btl self,vader "$out/ompi/$prog"
  done
done

median() { sort -g "$1" 2>/dev/null | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print ""}'; }
echo
# The commit measured: "+changes" when the tree differs from it, "unknown" outside a clone.
rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null) || rev=unknown
[ "$rev" != unknown ] && ! git -C "$here" diff --quiet HEAD -- 2>/dev/null && rev="$rev+changes"
echo "== hot-path guard: medians of $runs runs, --bind-to $bind ($(date -u +%F), $rev)"
printf "%-18s %12s %12s %7s  %s\n" row weft open-mpi ratio target
for row in "${rows[@]}"; do
  read -r name _ _ _ better target <<< "$row"
  w=$(median "$out/$name.weft.vals")
  o=$(median "$out/$name.ompi.vals")
  awk -v n="$name" -v w="$w" -v o="$o" -v b="$better" -v t="$target" 'BEGIN {
    if (w == "" || o == "" || o + 0 == 0) { printf "%-18s %12s %12s %7s  %s\n", n, w, o, "-", "no result"; exit }
    r = w / o
    ok = (b == "lower") ? (r <= t) : (r >= t)
    printf "%-18s %12.2f %12.2f %7.2f  %s %s %s\n", n, w, o, r, (b == "lower" ? "<=" : ">="), t, (ok ? "met" : "MISSED")
  }'
done
echo "row,numerator,denominator,better,target" > "$out/ratios.csv"
for row in "${rows[@]}"; do
  read -r name _ _ _ better target <<< "$row"
  echo "$name,$name.weft.vals,$name.ompi.vals,$better,$target" >> "$out/ratios.csv"
done
bench_plot ratios "$out/ratios.csv" -o "$out/ratios.png" --xlabel "weft / Open MPI (ratio of medians, log scale)" \
  --title "compare_short.sh: hot-path guard, weft against Open MPI" \
  --setup "2 ranks (allreduce 4, mbw_mr 2 pairs), shared memory, --bind-to $bind" \
  --note "$(date -u +%F), $rev"
exit $status
