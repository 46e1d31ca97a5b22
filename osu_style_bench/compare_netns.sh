#!/usr/bin/env bash
# Collectives across hosts that are network namespaces (scripts/netns-cluster.sh): each of
# allreduce, bcast, reduce, allgather and barrier by weft (the cost model's choice, the
# hierarchical algorithm forced, allreduce's hier_multi, and in-network offload with weft-aggd
# on host 1 where the collective has it) and by Open MPI (the same osu source built with its
# mpicc, ob1 over tcp on eth0), interleaved pass by pass; the medians and each weft variant's
# ratio to Open MPI. Ranks yield while waiting (the hosts share this machine's cores: a spinning
# rank keeps the kernel from moving the veth's packets). Each host's eth0 is limited by a token
# bucket (tc tbf) to RATE where the kernel offers it; this kernel has no netem, so no delay is
# added (the veth and bridge's own latency stays).
#
#   osu_style_bench/compare_netns.sh BUILD_DIR [PASSES] [HOSTS] [RANKS_PER_HOST] [SIZES] [RATE] [COLLS]
#
# PASSES 3, HOSTS 2, RANKS_PER_HOST 2, SIZES 8:1048576, RATE 10gbit ("none": no limit), COLLS
# "allreduce bcast reduce allgather barrier". Writes BUILD_DIR/compare_netns/{all.csv,median.csv}
# (collective,size,variant,...). Root only; brings the cluster up and down (it must not be up
# already).
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
colls=${7:-allreduce bcast reduce allgather barrier}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster=$here/../scripts/netns-cluster.sh
np=$((hosts * per_host))
out=$build/compare_netns
mkdir -p "$out/ompi"
: > "$out/all.csv"
: > "$out/stderr.log"
MPICC=${MPICC:-mpicc.openmpi}
for coll in $colls; do
  "$MPICC" -O2 -std=c11 -o "$out/ompi/osu_$coll" "$here/osu_$coll.c" "$here/bench_common.c" ||
    { echo "$BENCH_SCRIPT: building osu_$coll against Open MPI failed" >&2; exit 1; }
done
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
# The variants of a collective: hier_multi is allreduce's; offload has allreduce, allgather
# and barrier.
variants_of() {
  case $1 in
    allreduce) echo default hier hier_multi offload openmpi ;;
    allgather | barrier) echo default hier offload openmpi ;;
    *) echo default hier openmpi ;;
  esac
}
for pass in $(seq 1 "$passes"); do
  for coll in $colls; do
    for variant in $(variants_of "$coll"); do
      case $variant in
        default) opts=("${weft_env[@]}") ;;
        hier | hier_multi) opts=("${weft_env[@]}" -x "WEFT_COLL_TUNE=$coll:@$variant") ;;
        offload) opts=("${weft_env[@]}" -x WEFT_OFFLOAD=require -x "WEFT_OFFLOAD_PLUGIN=$build/lib/libweft-offload-aggd.so"
                       -x WEFT_AGGD_ADDRESS=tcp:192.0.2.1:7311 -x "WEFT_AGGD_KEY_FILE=$keydir/aggd.key") ;;
        openmpi) opts=(--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include eth0 --mca mpi_yield_when_idle 1) ;;
      esac
      prog=$build/bin/osu_$coll
      [ "$variant" = openmpi ] && prog=$out/ompi/osu_$coll
      timeout -k 5 600 "$cluster" mpirun -np "$np" --map-by "ppr:$per_host:node" "${opts[@]}" \
        "$prog" -m "$sizes" -i 50 -x 5 --csv 2>> "$out/stderr.log" | grep -E '^[0-9]+,' |
        sed "s/^/$coll,$variant,/" >> "$out/all.csv" || echo "# pass $pass: $coll $variant failed (stderr.log)" >&2
    done
  done
  echo "# pass $pass of $passes" >&2
done
echo "collective,size,variant,us,ratio_to_openmpi" > "$out/median.csv"
for coll in $colls; do
  variants=$(variants_of "$coll")
  echo "== $coll (µs; weft / Open MPI)"
  awk -F, -v coll="$coll" -v variants="$variants" -v csv="$out/median.csv" "$BENCH_AWK_MEDIAN"'
    $1 == coll { v[$3 SUBSEP $2] = v[$3 SUBSEP $2] " " $4; if (!($3 in seen)) { seen[$3] = 1; sizes[++n] = $3 + 0 } }
    END {
      nv = split(variants, names, " ")
      line = sprintf("%-8s", "size")
      for (k = 1; k <= nv; k++) line = line sprintf(" | %10s", names[k])
      print line " | ratios"
      for (i = 1; i <= n; i++) {
        s = sizes[i]; o = (s SUBSEP "openmpi") in v ? median(v[s SUBSEP "openmpi"]) : 0
        line = sprintf("%-8s", s); ratios = ""
        for (k = 1; k <= nv; k++) {
          key = s SUBSEP names[k]
          m = key in v ? median(v[key]) : -1
          line = line sprintf(" | %10s", m < 0 ? "-" : sprintf("%.1f", m))
          if (names[k] != "openmpi") ratios = ratios (ratios == "" ? "" : ", ") (m < 0 || o <= 0 ? "-" : sprintf("%.2f", m / o))
          if (m >= 0) printf "%s,%s,%s,%.2f,%s\n", coll, s, names[k], m, (o > 0 ? sprintf("%.3f", m / o) : "") >> csv
        }
        print line " | " ratios
      }
    }' "$out/all.csv"
done
