#!/usr/bin/env bash
# Overlap and threads, weft against Open MPI, the same sources compiled for both in one run:
#   1. the non-blocking collective overlap tests (osu_iallreduce, osu_ibcast, osu_iallgather,
#      osu_ialltoall) at NP ranks: weft with WEFT_ASYNC_PROGRESS=1 and =0, Open MPI;
#   2. ddp_overlap (ResNet-50 scaled by DDP_SCALE, buckets 1,5,25,100 MiB) at NP ranks: weft with
#      the progress thread, weft without it, Open MPI;
#   3. osu_latency_mt: 8-byte latency with MPI_THREAD_SERIALIZED and MPI_THREAD_MULTIPLE (one
#      thread calling), and the message rate of 1, 2 and 4 threads (8 bytes), 2 ranks.
# Medians of RUNS runs (default 3), interleaved. Writes BUILD_DIR/overlap/*.txt, prints tables,
# and writes them as nbc.csv, ddp.csv and threads.csv with a plot each (PROGRAM.png per overlap
# test, ddp.png, threads.png).
#
#   osu_style_bench/compare_overlap.sh BUILD_DIR [NP] [RUNS]
#
# Environment: MPICC (Open MPI's wrapper, default mpicc.openmpi), MPIRUN (default mpirun),
# BENCH_BIND (--bind-to for every run, default none), DDP_SCALE (default 0.25),
# OVERLAP_ARGS (options of the overlap tests, default "-m 1024:1048576 -i 200 -x 20").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BENCH_SCRIPT=compare_overlap.sh
# shellcheck source=bench_lib.sh
. "$here/bench_lib.sh"
build=$(cd "$1" && pwd)
np=${2:-4}
runs=${3:-3}
MPICC=${MPICC:-mpicc.openmpi}
MPIRUN=${MPIRUN:-mpirun}
bind=${BENCH_BIND:-none}
out=$build/overlap
mkdir -p "$out/ompi"
read -r -a oargs <<< "${OVERLAP_ARGS:--m 1024:1048576 -i 200 -x 20}"
nbc="osu_iallreduce osu_ibcast osu_iallgather osu_ialltoall"
for p in $nbc; do
  "$MPICC" -O2 -std=c11 -o "$out/ompi/$p" "$here/$p.c" "$here/bench_common.c" || exit 1
done
"$MPICC" -O2 -std=c11 -DDDP_MODEL_DIR="\"$here/models\"" -o "$out/ompi/ddp_overlap" "$here/ddp_overlap.c" "$here/ddp_common.c" || exit 1
"$MPICC" -O2 -std=c11 -pthread -o "$out/ompi/osu_latency_mt" "$here/osu_latency_mt.c" || exit 1

# run NAME NP ENV-ASSIGNMENTS -- PROGRAM ARGS...: appends the program's output to $out/NAME.txt
run() {
  local name=$1 n=$2 envs=$3
  shift 4
  local xs=()
  for e in $envs; do xs+=(-x "$e"); done
  env $envs timeout 900 "$MPIRUN" --oversubscribe --bind-to "$bind" -np "$n" "${xs[@]}" "$@" \
    >> "$out/$name.txt" 2>> "$out/$name.err" || echo "compare_overlap.sh: $name failed (see $out/$name.err)" >&2
}

rm -f "$out"/*.txt "$out"/*.err
for r in $(seq 1 "$runs"); do
  echo "# run $r of $runs" >&2
  for p in $nbc; do
    run "$p.weft_async" "$np" "WEFT_ASYNC_PROGRESS=1" -- "$build/bin/$p" --csv "${oargs[@]}"
    run "$p.weft" "$np" "WEFT_ASYNC_PROGRESS=0" -- "$build/bin/$p" --csv "${oargs[@]}"
    run "$p.ompi" "$np" "" -- "$out/ompi/$p" --csv "${oargs[@]}"
  done
  run ddp.weft_async "$np" "WEFT_ASYNC_PROGRESS=1" -- "$build/bin/ddp_overlap" -s "${DDP_SCALE:-0.25}" -i 5
  run ddp.weft "$np" "WEFT_ASYNC_PROGRESS=0" -- "$build/bin/ddp_overlap" -s "${DDP_SCALE:-0.25}" -i 5
  run ddp.ompi "$np" "" -- "$out/ompi/ddp_overlap" -s "${DDP_SCALE:-0.25}" -i 5
  for impl in weft ompi; do
    bin=$build/bin/osu_latency_mt
    [ $impl = ompi ] && bin=$out/ompi/osu_latency_mt
    for level in serialized multiple; do
      run "lat_$level.$impl" 2 "" -- "$bin" -l "$level" -m 8:8 -i 50000
    done
    for t in 1 2 4; do
      run "rate_t$t.$impl" 2 "" -- "$bin" -r -t "$t" -m 8:8 -i 2000
    done
  done
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print "-"}'; }
# csv_median FILE SIZE FIELD
csv_median() { grep -E "^$2," "$1" 2>/dev/null | cut -d, -f"$3" | median; }

# Every table also goes to a CSV next to the raw outputs, for the plots.
echo
echo "== overlap (%) of the non-blocking collectives, np $np (OSU's method; medians of $runs runs)"
printf "%-16s %-9s %10s %10s %10s %14s %14s\n" program size weft+async weft open-mpi "pure weft+a" "pure ompi"
echo "program,size,weft_async,weft,ompi,pure_weft_async,pure_ompi" > "$out/nbc.csv"
for p in $nbc; do
  for size in $(grep -hE '^[0-9]+,' "$out/$p.weft_async.txt" | cut -d, -f1 | sort -un); do
    vals=("$(csv_median "$out/$p.weft_async.txt" "$size" 5)" "$(csv_median "$out/$p.weft.txt" "$size" 5)"
          "$(csv_median "$out/$p.ompi.txt" "$size" 5)" "$(csv_median "$out/$p.weft_async.txt" "$size" 4)"
          "$(csv_median "$out/$p.ompi.txt" "$size" 4)")
    printf "%-16s %-9s %10s %10s %10s %14s %14s\n" "$p" "$size" "${vals[@]}"
    (IFS=,; echo "$p,$size,${vals[*]}") >> "$out/nbc.csv"
  done
done

# ddp_row LABEL CATEGORY AWK-PROGRAM: the median of each implementation's column
ddp_row() {
  local v line=$2 impl
  printf "%-8s" "$1"
  for impl in weft_async weft ompi; do
    v=$(awk "$3" "$out/ddp.$impl.txt" | median)
    printf " %12s" "$v"
    line="$line,$v"
  done
  echo
  echo "time (ms); lower is better,$line" >> "$out/ddp.csv"
}
echo
echo "== ddp_overlap, np $np: step time (ms) by bucket size (medians), and the baseline"
printf "%-8s %12s %12s %12s\n" bucket weft+async weft open-mpi
echo "panel,category,weft_async,weft,ompi" > "$out/ddp.csv"
for b in 1 5 25 100; do
  ddp_row "$b" "step: $b MiB buckets" '$1 == '"$b"' {print $5}'
done
ddp_row baseline "step: one allreduce after" '$1 == 1 {print $6}'
ddp_row compute "compute alone" '$1 == 1 {print $3}'
ddp_row comm25 "comm alone: 25 MiB" '$1 == 25 {print $4}'

# thread_row LABEL PANEL CATEGORY NAME: the median of the 8-byte rows of NAME.{weft,ompi}.txt
thread_row() {
  local w o
  w=$(awk '$1 == 8 {print $2}' "$out/$4.weft.txt" | median)
  o=$(awk '$1 == 8 {print $2}' "$out/$4.ompi.txt" | median)
  printf "%-34s %12s %12s\n" "$1" "$w" "$o"
  echo "$2,$3,$w,$o" >> "$out/threads.csv"
}
echo
echo "== threads, 2 ranks: 8-byte latency (us) and 8-byte message rate (messages/s), medians"
printf "%-34s %12s %12s\n" test weft open-mpi
echo "panel,category,weft,ompi" > "$out/threads.csv"
for level in serialized multiple; do
  thread_row "latency, $level (one thread)" "8-byte latency (µs); lower is better" "$level" "lat_$level"
done
for t in 1 2 4; do
  thread_row "message rate, $t thread(s)" "8-byte message rate (messages/s); higher is better" "$t thread(s)" \
    "rate_t$t"
done

setup="$np ranks, shared memory, --bind-to $bind"
for p in $nbc; do
  bench_plot sweep "$out/nbc.csv" --name "$p" --series weft_async,weft,ompi --anchor none --linear-y --better higher \
    --ylabel "overlap of compute and communication (%)" -o "$out/$p.png" \
    --title "compare_overlap.sh: $p, overlap (OSU's method)" --setup "$setup" --note "medians of $runs run(s)"
done
bench_plot bars "$out/ddp.csv" -o "$out/ddp.png" --setup "$setup" --note "medians of $runs run(s)" \
  --title "compare_overlap.sh: ddp_overlap (ResNet-50 x ${DDP_SCALE:-0.25}), step time"
bench_plot bars "$out/threads.csv" -o "$out/threads.png" --setup "2 ranks, shared memory, --bind-to $bind" \
  --note "medians of $runs run(s)" --title "compare_overlap.sh: osu_latency_mt, threads"
