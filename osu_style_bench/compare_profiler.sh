#!/usr/bin/env bash
# What seeing inside a job costs: the same two rows with no consumer, with the example profiler
# plugin loaded, and with WEFT_TRACE on, interleaved run by run beside Open MPI (the same
# sources); with OLD_LIB, also a library from before the event sites, to show that with none
# loaded they cost nothing measurable.
#
#   osu_style_bench/compare_profiler.sh BUILD_DIR [RUNS] [OLD_LIB_DIR]
#
# Rows (2 ranks): osu_latency 8 B, osu_allreduce 1 MiB (µs, lower is better). Prints each
# variant's median and its ratio to "off" and to Open MPI. Environment: MPICC (default
# mpicc.openmpi), MPIRUN (default mpirun), BENCH_BIND (default core; none with fewer cores
# than ranks). Writes BUILD_DIR/profiler_cost/ratios.csv and ratios.png.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BENCH_SCRIPT=compare_profiler.sh
# shellcheck source=bench_lib.sh
. "$here/bench_lib.sh"
[ $# -ge 1 ] || { sed -n 2,13p "$0"; exit 2; }
build=$(cd "$1" && pwd)
runs=${2:-5}
old=${3:-}
MPICC=${MPICC:-mpicc.openmpi}
MPIRUN=${MPIRUN:-mpirun}
bind=${BENCH_BIND:-core}
[ "$(nproc)" -lt 2 ] && bind=none
out=$build/profiler_cost
rm -rf "$out"
mkdir -p "$out/ompi" "$out/trace"
for p in osu_latency osu_allreduce; do
  "$MPICC" -O2 -std=c11 -o "$out/ompi/$p" "$here/$p.c" "$here/bench_common.c" || exit 1
done
variants=(off plugin trace ompi)
[ -n "$old" ] && variants=(old "${variants[@]}")
rows=("latency_8B osu_latency 8" "allreduce_1MiB osu_allreduce 1048576")
status=0
one() {  # VARIANT PROG SIZE FILE
  local variant=$1 prog=$2 size=$3 file=$4 bin=$build/bin/$2 env=() args=()
  case $variant in
    old) env=(-x "LD_LIBRARY_PATH=$old") ;;
    plugin) env=(-x "WEFT_PROFILER_PLUGIN=$build/lib/libweft_profiler_count.so" -x "PROFILER_COUNT_OUT=/dev/null") ;;
    trace) env=(-x "WEFT_TRACE=$out/trace/run") ;;
    ompi) bin=$out/ompi/$prog; args=(--mca btl self,vader) ;;
  esac
  bench_one "$variant $prog $size" 2 "$size" "$file" "${env[@]}" "${args[@]}" "$bin"
}
for r in $(seq 1 "$runs"); do
  echo "# run $r of $runs" >&2
  for row in "${rows[@]}"; do
    read -r name prog size <<< "$row"
    for v in "${variants[@]}"; do one "$v" "$prog" "$size" "$out/$name.$v.vals"; done
  done
done
median() { sort -g "$1" 2>/dev/null | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print ""}'; }
rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null) || rev=unknown
[ "$rev" != unknown ] && ! git -C "$here" diff --quiet HEAD -- 2>/dev/null && rev="$rev+changes"
echo "== profiler cost: medians of $runs runs, 2 ranks, --bind-to $bind ($(date -u +%F), $rev)"
printf "%-16s %-8s %10s %9s %9s\n" row variant median "/off" "/ompi"
for row in "${rows[@]}"; do
  read -r name _ _ <<< "$row"
  base=$(median "$out/$name.off.vals")
  anchor=$(median "$out/$name.ompi.vals")
  for v in "${variants[@]}"; do
    m=$(median "$out/$name.$v.vals")
    awk -v n="$name" -v v="$v" -v m="$m" -v b="$base" -v a="$anchor" 'BEGIN {
      if (m == "") { printf "%-16s %-8s %10s\n", n, v, "no result"; exit }
      printf "%-16s %-8s %10.2f %9.2f %9.2f\n", n, v, m, (b + 0 ? m / b : 0), (a + 0 ? m / a : 0) }'
  done
done
# Each variant against "off", and "off" against Open MPI; no targets.
echo "row,numerator,denominator,better,target" > "$out/ratios.csv"
for row in "${rows[@]}"; do
  read -r name _ _ <<< "$row"
  for v in "${variants[@]}"; do
    case $v in
      off) echo "$name off/ompi,$name.off.vals,$name.ompi.vals,lower," ;;
      ompi) ;;
      *) echo "$name $v/off,$name.$v.vals,$name.off.vals,lower," ;;
    esac
  done >> "$out/ratios.csv"
done
bench_plot ratios "$out/ratios.csv" -o "$out/ratios.png" --xlabel "ratio of medians (log scale)" \
  --title "compare_profiler.sh: the cost of the profiler plugin and WEFT_TRACE" \
  --setup "2 ranks, shared memory, --bind-to $bind" --note "$(date -u +%F), $rev"
exit $status
