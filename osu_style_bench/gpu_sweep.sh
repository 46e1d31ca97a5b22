#!/usr/bin/env bash
# Run weft's GPU benchmarks on the GPU machine and keep every output.
#
#   osu_style_bench/gpu_sweep.sh BUILD_DIR LOG_DIR
#
# BUILD_DIR  weft build directory (CUDA build); its bin/ holds gpu_floors,
#            gpu_allreduce, gpu_coll, osu_latency, osu_bw, osu_bibw and, where NCCL
#            was found, nccl_allreduce.
# LOG_DIR    folder for the logs (created): one NAME.log per run, plus
#            summary.txt (the floors, the IPC copy and the key rows), and per
#            gpu_allreduce run RUN its plots against nccl_allreduce:
#            busbw.RUN.png (bus bandwidth and the copy roofline) and
#            allreduce.RUN.png (time and ratio); python3-matplotlib draws them,
#            and without it they are skipped (scripts/plots/weft_plot.py draws
#            them later from a copied LOG_DIR).
#
# What runs, in this order (mpirun --oversubscribe --bind-to none):
#   with 2 or more GPUs, MPS off, one rank per GPU:
#     gpu_floors np 2 (raw IPC copy between two GPUs);
#     osu_latency, osu_bw, osu_bibw -d cuda D D at np 2;
#     gpu_allreduce and nccl_allreduce at np = number of GPUs (same options);
#     gpu_coll (broadcast, allgather, reduce_scatter_block, reduce; blocking and enqueued)
#     at np = number of GPUs (GPU_COLL_ARGS);
#   on one GPU (CUDA_VISIBLE_DEVICES = the first GPU), MPS on:
#     gpu_floors np 1 and np 2 (raw IPC copy on one GPU);
#     osu_latency, osu_bw, osu_bibw -d cuda D D, D H, H D at np 2;
#     gpu_allreduce at np 2 and np 4;
#     gpu_coll (the four collectives, blocking and enqueued) at np 4;
#     nccl_allreduce at np 1 (a check of the program) and np 2 (NCCL refuses two ranks on
#     one GPU: the program says so and exits 0).
# MPS is started as the machine's README says (CUDA_MPS_PIPE_DIRECTORY=/tmp/mps,
# CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog) and stopped at the end, unless it was
# already running (then it is left alone).
#
# Environment:
#   GPU_SWEEP_ARGS   options for gpu_allreduce and nccl_allreduce (default "-b 8 -e 1G -w 5 -n 20")
#   GPU_COLL_ARGS    options for gpu_coll (default "-b 8 -e 64M -f 8 -w 5 -n 20")
#   OSU_ARGS         options for the osu programs (default "-m 8:4194304")
#   OSU_LAT_ARGS     options for osu_latency only (default OSU_ARGS)
#   OSU_BW_ARGS      options for osu_bw and osu_bibw only (default OSU_ARGS)
#   GPU_SWEEP_ONLY   space-separated subset of: multi single (default both)
#   MPIRUN           launcher (default mpirun)
#   BENCH_TIMEOUT    seconds allowed per run (default 600; needs `timeout`)
#   NCCL_NVLS_ENABLE defaults to 0 (never NVLink multicast)
#   BENCH_PLOTS      0: no plots
#
# Exit status: 0 when every run succeeded, 1 otherwise, 2 on usage errors.
set -uo pipefail

BENCH_SCRIPT=gpu_sweep.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

usage() {
    sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
}
if [ $# -ne 2 ]; then usage; fi
case "$1" in -h|--help) usage ;; esac
if [ ! -d "$1/bin" ]; then
    echo "gpu_sweep.sh: '$1/bin' does not exist (build weft first)" >&2
    exit 2
fi
BIN=$(cd "$1/bin" && pwd)
LOG=$2
mkdir -p "$LOG" || exit 2
LOG=$(cd "$LOG" && pwd)
SUMMARY=$LOG/summary.txt

MPIRUN=${MPIRUN:-mpirun}
TIMEOUT=${BENCH_TIMEOUT:-600}
read -r -a SWEEP <<< "${GPU_SWEEP_ARGS:--b 8 -e 1G -w 5 -n 20}"
read -r -a COLL_SWEEP <<< "${GPU_COLL_ARGS:--b 8 -e 64M -f 8 -w 5 -n 20}"
OSU_DEFAULT=${OSU_ARGS:--m 8:4194304}
read -r -a OSU_LAT <<< "${OSU_LAT_ARGS:-$OSU_DEFAULT}"
read -r -a OSU_BW <<< "${OSU_BW_ARGS:-$OSU_DEFAULT}"
ONLY=" ${GPU_SWEEP_ONLY:-multi single} "
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
TIMEOUT_CMD=()
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT_CMD=(timeout -k 10 "$TIMEOUT")
fi

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -r -a VIS <<< "$CUDA_VISIBLE_DEVICES"
    NGPU=${#VIS[@]}
    FIRST=${VIS[0]}
else
    FIRST=0
fi
if [ "${NGPU:-0}" -lt 1 ]; then
    echo "gpu_sweep.sh: no GPU found (nvidia-smi -L)" >&2
    exit 1
fi

status=0
{
    echo "# gpu_sweep.sh $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname), $NGPU GPU(s)"
    nvidia-smi -L 2>/dev/null | sed 's/^/# /'
    nvidia-smi topo -m 2>/dev/null | sed 's/^/# topo: /'
} | tee "$SUMMARY"

# run NAME NP PROG ARGS...: one mpirun, output in $LOG/NAME.log, the summary lines in summary.txt.
# RUN_ENV: names of environment variables mpirun passes on (-x).
run() {
    local name=$1 np=$2 prog=$3
    shift 3
    local xs=() v
    for v in ${RUN_ENV:-}; do xs+=(-x "$v"); done
    local exe=$BIN/$prog
    if [ ! -x "$exe" ]; then
        echo "gpu_sweep.sh: $exe not found, $name skipped" | tee -a "$SUMMARY" >&2
        status=1
        return
    fi
    local cmd=("${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe -np "$np" --bind-to none "${xs[@]}" "$exe" "$@")
    echo "### $name: CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-(all)} ${cmd[*]}" | tee -a "$SUMMARY"
    "${cmd[@]}" </dev/null >"$LOG/$name.log" 2>&1
    local rc=$?
    cat "$LOG/$name.log"
    # the floors, IPC and check lines, and every table row
    grep -E '^# (FLOOR|IPC|Out of bounds|NCCL|nccl_allreduce)|^ *[0-9]+ ' "$LOG/$name.log" >>"$SUMMARY"
    if [ $rc -ne 0 ]; then
        echo "gpu_sweep.sh: $name failed (exit $rc)" | tee -a "$SUMMARY" >&2
        status=1
    fi
}

coll_set() { # coll_set PREFIX NP: gpu_coll for each collective, blocking and enqueued
    local prefix=$1 np=$2 coll mode
    for coll in bcast allgather reduce_scatter reduce; do
        for mode in 0 1; do
            GPU_COLL=$coll GPU_COLL_STREAM=$mode RUN_ENV="GPU_COLL GPU_COLL_STREAM" \
                run "$prefix.gpu_coll.$coll.$([ $mode = 1 ] && echo enqueue || echo blocking).np$np" "$np" gpu_coll \
                "${COLL_SWEEP[@]}"
        done
    done
}

osu_set() { # osu_set PREFIX PLACEMENT...
    local prefix=$1 p
    shift
    for p in "$@"; do
        local tag=${p// /}
        # shellcheck disable=SC2086
        run "$prefix.osu_latency.$tag" 2 osu_latency "${OSU_LAT[@]}" -d cuda $p
        # shellcheck disable=SC2086
        run "$prefix.osu_bw.$tag" 2 osu_bw "${OSU_BW[@]}" -d cuda $p
        # shellcheck disable=SC2086
        run "$prefix.osu_bibw.$tag" 2 osu_bibw "${OSU_BW[@]}" -d cuda $p
    done
}

# --- several GPUs, one rank per GPU, no MPS --------------------------------------------------
if [ "$NGPU" -ge 2 ] && [[ "$ONLY" == *" multi "* ]]; then
    run multi.gpu_floors.np2 2 gpu_floors
    osu_set multi "D D"
    run "multi.gpu_allreduce.np$NGPU" "$NGPU" gpu_allreduce "${SWEEP[@]}"
    run "multi.nccl_allreduce.np$NGPU" "$NGPU" nccl_allreduce "${SWEEP[@]}"
    coll_set multi "$NGPU"
fi

# --- one GPU shared by the ranks, under MPS --------------------------------------------------
if [[ "$ONLY" == *" single "* ]]; then
    export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/mps}
    export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/mpslog}
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    started_mps=0
    if [ -p "$CUDA_MPS_PIPE_DIRECTORY/control" ] && pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1; then
        echo "# MPS already running: left alone" | tee -a "$SUMMARY"
    elif nvidia-cuda-mps-control -d; then
        started_mps=1
        echo "# MPS started" | tee -a "$SUMMARY"
        trap 'echo quit | nvidia-cuda-mps-control' EXIT
    else
        echo "gpu_sweep.sh: could not start MPS; the single-GPU runs go on without it" | tee -a "$SUMMARY" >&2
        status=1
    fi
    export CUDA_VISIBLE_DEVICES=$FIRST
    run single.gpu_floors.np1 1 gpu_floors
    run single.gpu_floors.np2 2 gpu_floors
    osu_set single "D D" "D H" "H D"
    run single.gpu_allreduce.np2 2 gpu_allreduce "${SWEEP[@]}"
    run single.gpu_allreduce.np4 4 gpu_allreduce "${SWEEP[@]}"
    coll_set single 4
    # NCCL on one GPU: np 1 checks the program (an allreduce of one rank is a copy); np 2 must say
    # that NCCL needs one GPU per rank and exit 0.
    run single.nccl_allreduce.np1 1 nccl_allreduce -e 64M -w 2 -n 10
    run single.nccl_allreduce.np2 2 nccl_allreduce -e 64K -w 1 -n 1
    unset CUDA_VISIBLE_DEVICES
    if [ $started_mps -eq 1 ]; then
        echo quit | nvidia-cuda-mps-control
        trap - EXIT
        echo "# MPS stopped" | tee -a "$SUMMARY"
    fi
fi

echo "# logs in $LOG, summary in $SUMMARY"
if compgen -G "$LOG/*gpu_allreduce*.log" >/dev/null; then
    bench_plot busbw "$LOG" -o "$LOG/busbw.{run}.png"
    bench_plot sweep "$LOG" -o "$LOG/allreduce.{run}.png"
fi
exit $status
