#!/usr/bin/env bash
# Collectives across hosts that are network namespaces (scripts/netns-cluster.sh): osu_allreduce
# by weft (the cost model's choice, allreduce:hier and allreduce:hier_multi forced, and through
# in-network offload with weft-aggd on host 1) and by Open MPI (the same source built with its
# mpicc, ob1 over tcp on eth0), interleaved pass by pass; the medians and each weft variant's
# ratio to Open MPI. Ranks yield while waiting (the hosts share this machine's cores: a spinning
# rank keeps the kernel from moving the veth's packets). Each host's eth0 is limited by a token
# bucket (tc tbf) to RATE where the kernel offers it; this kernel has no netem, so no delay is
# added (the veth and bridge's own latency stays).
#
#   osu_style_bench/compare_netns.sh BUILD_DIR [PASSES] [HOSTS] [RANKS_PER_HOST] [SIZES] [RATE]
#
# PASSES 3, HOSTS 2, RANKS_PER_HOST 2, SIZES 8:1048576, RATE 10gbit ("none": no limit).
# Writes BUILD_DIR/compare_netns/{all.csv,median.csv}. Root only; brings the cluster up and
# down (it must not be up already).
set -euo pipefail
BENCH_SCRIPT=compare_netns.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
build=$(cd "$1" && pwd)
passes=${2:-3}
hosts=${3:-2}
per_host=${4:-2}
sizes=${5:-8:1048576}
rate=${6:-10gbit}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster=$here/../scripts/netns-cluster.sh
np=$((hosts * per_host))
out=$build/compare_netns
mkdir -p "$out/ompi"
: > "$out/all.csv"
: > "$out/stderr.log"
MPICC=${MPICC:-mpicc.openmpi}
"$MPICC" -O2 -std=c11 -o "$out/ompi/osu_allreduce" "$here/osu_allreduce.c" "$here/bench_common.c" ||
  { echo "$BENCH_SCRIPT: building osu_allreduce against Open MPI failed" >&2; exit 1; }
"$cluster" up "$hosts" > /dev/null
trap '"$cluster" down > /dev/null' EXIT
if [ "$rate" != none ]; then
  for k in $(seq 1 "$hosts"); do
    ip netns exec "weft-h$k" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 10ms
  done
fi
# The offload daemon on host 1, on its eth0 address; the key file is every host's (one /run).
keydir=$(mktemp -d /tmp/weft_compare_netns.XXXXXX)
ip netns exec weft-h1 "$build/bin/weft-aggd" --listen tcp:192.0.2.1:7311 --key-file "$keydir/aggd.key" \
  2> "$out/daemon.log" &
daemon=$!
trap 'kill $daemon 2> /dev/null || true; rm -rf "$keydir"; "$cluster" down > /dev/null' EXIT
for _ in $(seq 100); do grep -q listening "$out/daemon.log" && break; sleep 0.1; done
weft_env=(-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 -x WEFT_WAIT_POLICY=yield)
for pass in $(seq 1 "$passes"); do
  for variant in default hier hier_multi offload openmpi; do
    case $variant in
      default) opts=("${weft_env[@]}") ;;
      hier | hier_multi) opts=("${weft_env[@]}" -x "WEFT_COLL_TUNE=allreduce:@$variant") ;;
      offload) opts=("${weft_env[@]}" -x WEFT_OFFLOAD=require -x "WEFT_OFFLOAD_PLUGIN=$build/lib/libweft-offload-aggd.so"
                     -x WEFT_AGGD_ADDRESS=tcp:192.0.2.1:7311 -x "WEFT_AGGD_KEY_FILE=$keydir/aggd.key") ;;
      openmpi) opts=(--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include eth0 --mca mpi_yield_when_idle 1) ;;
    esac
    prog=$build/bin/osu_allreduce
    [ $variant = openmpi ] && prog=$out/ompi/osu_allreduce
    timeout -k 5 600 "$cluster" mpirun -np "$np" --map-by "ppr:$per_host:node" "${opts[@]}" \
      "$prog" -m "$sizes" -i 50 -x 5 --csv 2>> "$out/stderr.log" | grep -E '^[0-9]+,' | sed "s/^/$variant,/" >> "$out/all.csv" ||
      echo "# pass $pass: $variant failed (stderr.log)" >&2
  done
  echo "# pass $pass of $passes" >&2
done
awk -F, "$BENCH_AWK_MEDIAN"'
  { v[$2 SUBSEP $1] = v[$2 SUBSEP $1] " " $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++n] = $2 + 0 } }
  END {
    printf "%-8s | %10s | %10s | %10s | %10s | %10s | %s\n", "size", "default", "hier", "hier_multi", "offload", "openmpi", "weft/openmpi (default, hier, hier_multi, offload)"
    print "size,variant,us,ratio_to_openmpi" > "'"$out"'/median.csv"
    for (i = 1; i <= n; i++) {
      s = sizes[i]; o = (s SUBSEP "openmpi") in v ? median(v[s SUBSEP "openmpi"]) : 0
      line = sprintf("%-8s", s); ratios = ""
      split("default hier hier_multi offload openmpi", names, " ")
      for (k = 1; k <= 5; k++) {
        key = s SUBSEP names[k]
        m = key in v ? median(v[key]) : -1
        line = line sprintf(" | %10s", m < 0 ? "-" : sprintf("%.1f", m))
        if (k < 5) ratios = ratios (ratios == "" ? "" : ", ") (m < 0 || o <= 0 ? "-" : sprintf("%.2f", m / o))
        if (m >= 0) printf "%s,%s,%.2f,%s\n", s, names[k], m, (o > 0 ? sprintf("%.3f", m / o) : "") >> "'"$out"'/median.csv"
      }
      print line " | " ratios
    }
  }' "$out/all.csv"
