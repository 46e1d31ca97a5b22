#!/usr/bin/env bash
# Hierarchical against flat allreduce on virtual nodes (WEFT_FAKE_NODES): each algorithm forced
# in turn, interleaved pass by pass so that machine noise hits all alike; prints the median
# latency per size and each one's ratio to the flat ring. HIER_ALGOS picks the algorithms
# ("ring hier hier_multi" by default; "default" lets the cost model choose).
#
#   osu_style_bench/compare_hier.sh BUILD_DIR [PASSES] [NP] [NODES] [SIZES]
#
# PASSES 5, NP 4, NODES 2, SIZES "1048576:16777216" by default. Writes
# BUILD_DIR/compare_hier/median.csv (size,algorithm,us,ratio_to_ring) and median.png.
set -euo pipefail
BENCH_SCRIPT=compare_hier.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
build=$(cd "$1" && pwd)
passes=${2:-5}
np=${3:-4}
nodes=${4:-2}
sizes=${5:-1048576:16777216}
algos=${HIER_ALGOS:-"ring hier hier_multi"}
out=$build/compare_hier
mkdir -p "$out"
: > "$out/all.csv"
: > "$out/stderr.log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for pass in $(seq 1 "$passes"); do
  for algo in $algos; do
    # "default": the cost model chooses.
    tune=allreduce:@$algo
    [ "$algo" = default ] && tune=
    WEFT_FAKE_NODES=$nodes WEFT_COLL_TUNE=$tune \
      mpirun --oversubscribe -np "$np" "$build/bin/osu_allreduce" -m "$sizes" -i 20 -x 3 --csv \
      2>> "$out/stderr.log" | grep -E '^[0-9]+,' | sed "s/^/$algo,/" >> "$out/all.csv"
  done
  echo "# pass $pass of $passes" >&2
done
sort -t, -k2,2n -k1,1 "$out/all.csv" | awk -F, -v out="$out/median.csv" "$BENCH_AWK_MEDIAN"'
  {
    v[$2 SUBSEP $1] = v[$2 SUBSEP $1] " " $3
    if (!($2 in seen)) { seen[$2] = 1; sizes[++nsizes] = $2 }
    if (!($1 in known)) { known[$1] = 1; algos[++nalgos] = $1 }
  }
  END {
    print "size,algorithm,us,ratio_to_ring" > out
    printf "%10s %12s %12s %8s\n", "size", "algorithm", "median us", "vs ring"
    for (i = 1; i <= nsizes; i++) {
      s = sizes[i]; ring = median(v[s SUBSEP "ring"])
      for (k = 1; k <= nalgos; k++) {
        a = algos[k]; m = median(v[s SUBSEP a])
        printf "%s,%s,%.1f,%.2f\n", s, a, m, m / ring >> out
        printf "%10s %12s %12.1f %8.2f\n", s, a, m, m / ring
      }
    }
  }'
bench_plot sweep "$out/all.csv" --anchor ring -o "$out/median.png" --ylabel "allreduce average latency (µs)" \
  --title "compare_hier.sh: allreduce algorithms on virtual nodes" \
  --setup "$np ranks on $nodes virtual nodes (WEFT_FAKE_NODES), shared memory" --note "$passes pass(es), $(date -u +%F)"
