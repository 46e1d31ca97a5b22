#!/usr/bin/env bash
# osu_allreduce through in-network offload (weft-aggd playing the switch, on a UNIX socket)
# against the host algorithms on virtual nodes (WEFT_FAKE_NODES), interleaved pass by pass so
# that machine noise hits all alike; prints the median latency per size and the ratio
# offload / host for each host variant.
#
#   osu_style_bench/compare_offload.sh BUILD_DIR [PASSES] [NP] [NODES] [SIZES]
#
# PASSES 5, NP 4, NODES 4, SIZES 8:1048576 by default. Variants: "offload"
# (WEFT_OFFLOAD=require), "host" (no plugin: the cost model's choice), "hier" (allreduce:hier
# forced). The daemon runs with its defaults (64 KiB fragments, window 8) unless
# AGGD_ARGS says otherwise. Writes BUILD_DIR/compare_offload/median.csv and median.png.
set -euo pipefail
BENCH_SCRIPT=compare_offload.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
build=$(cd "$1" && pwd)
passes=${2:-5}
np=${3:-4}
nodes=${4:-4}
sizes=${5:-8:1048576}
out=$build/compare_offload
mkdir -p "$out"
: > "$out/all.csv"
: > "$out/stderr.log"
dir=$(mktemp -d /tmp/weft_compare_offload.XXXXXX)
# shellcheck disable=SC2086
"$build/bin/weft-aggd" --listen "unix:$dir/aggd.sock" --key-file "$dir/aggd.key" ${AGGD_ARGS:-} 2> "$out/daemon.log" &
daemon=$!
# The daemon is gone when the run ends well: a failed kill must not fail the script (set -e).
trap 'kill $daemon 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do grep -q listening "$out/daemon.log" && break; sleep 0.1; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_NET_DEVICES=lo WEFT_FAKE_NODES=$nodes
for pass in $(seq 1 "$passes"); do
  for variant in offload host hier; do
    env=()
    case $variant in
      offload) env=(WEFT_OFFLOAD=require WEFT_OFFLOAD_PLUGIN="$build/lib/libweft-offload-aggd.so"
                    WEFT_AGGD_ADDRESS="unix:$dir/aggd.sock" WEFT_AGGD_KEY_FILE="$dir/aggd.key") ;;
      host) env=(WEFT_OFFLOAD=off) ;;
      hier) env=(WEFT_OFFLOAD=off WEFT_COLL_TUNE=allreduce:@hier) ;;
    esac
    env "${env[@]}" mpirun --oversubscribe --bind-to none -np "$np" "$build/bin/osu_allreduce" -m "$sizes" \
      -i 200 -x 20 --csv 2>> "$out/stderr.log" | grep -E '^[0-9]+,' | sed "s/^/$variant,/" >> "$out/all.csv"
  done
  echo "# pass $pass of $passes" >&2
done
sort -t, -k2,2n -k1,1 "$out/all.csv" | awk -F, -v out="$out/median.csv" "$BENCH_AWK_MEDIAN"'
  { v[$2 SUBSEP $1] = v[$2 SUBSEP $1] " " $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++n] = $2 } }
  END {
    print "size,offload_us,host_us,hier_us,offload_over_host,offload_over_hier" > out
    printf "%10s %12s %12s %12s %10s %10s\n", "size", "offload us", "host us", "hier us", "off/host", "off/hier"
    for (i = 1; i <= n; i++) {
      s = sizes[i]; o = median(v[s SUBSEP "offload"]); h = median(v[s SUBSEP "host"]); r = median(v[s SUBSEP "hier"])
      printf "%s,%.2f,%.2f,%.2f,%.2f,%.2f\n", s, o, h, r, o / h, o / r >> out
      printf "%10s %12.2f %12.2f %12.2f %10.2f %10.2f\n", s, o, h, r, o / h, o / r
    }
  }'
kill "$daemon" && wait "$daemon" || true
tail -n 1 "$out/daemon.log" >&2
bench_plot sweep "$out/all.csv" --anchor host -o "$out/median.png" --ylabel "allreduce average latency (µs)" \
  --title "compare_offload.sh: allreduce through in-network offload against the host" \
  --setup "$np ranks on $nodes virtual nodes (WEFT_FAKE_NODES), weft-aggd on a UNIX socket" \
  --note "$passes pass(es), $(date -u +%F)"
