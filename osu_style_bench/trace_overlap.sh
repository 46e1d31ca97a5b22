#!/usr/bin/env bash
# ddp_overlap's bucket all-reduces behind its backward pass, as a picture: runs ddp_overlap under
# weft with WEFT_TRACE and --phases, joins the ranks' traces with weft_trace merge, and draws the
# last overlapped step as a timeline per rank (compute, MPI calls, collectives in flight).
#
#   osu_style_bench/trace_overlap.sh BUILD_DIR [NP]
#
# NP ranks (default 2), under `mpirun --oversubscribe --bind-to none` on one host. Writes
# BUILD_DIR/trace_overlap/: rank*.json (each rank's trace), phases.*.txt (each rank's compute
# phases), trace.json (the joined trace, for Perfetto or chrome://tracing), ddp_overlap.txt (the
# program's report) and timeline.png.
#
# Environment:
#   DDP_SCALE            model scale (default 0.25: ResNet-50 at a quarter of its parameters)
#   DDP_BUCKETS          bucket sizes in MiB, comma-separated (default 5)
#   DDP_ITERS            iterations per measurement (default 3)
#   WEFT_ASYNC_PROGRESS  default 1: the progress thread moves the buckets while the backward
#                        pass computes (0: they move only inside MPI calls)
#   TRACE_STEP           the step drawn, by the start of its label in the phase files, e.g.
#                        "overlap 5MiB 2" (default: the last overlapped step)
#   MPIRUN               launcher (default mpirun)
#   BENCH_TIMEOUT        seconds allowed for the run (default 600; needs `timeout`)
#
# Exit status: 0 when the run and the merge worked, 1 otherwise, 2 on usage errors.
set -uo pipefail

BENCH_SCRIPT=trace_overlap.sh
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

bench_start 2 "$@"
NP=${2:-2}
bench_count NP "$NP"
MPIRUN=${MPIRUN:-mpirun}
bench_launch_setup "$MPIRUN"
scale=${DDP_SCALE:-0.25}
buckets=${DDP_BUCKETS:-5}
iters=${DDP_ITERS:-3}
async=${WEFT_ASYNC_PROGRESS:-1}

for prog in ddp_overlap weft_trace; do
    if [ ! -x "$BUILD_DIR/bin/$prog" ]; then
        echo "trace_overlap.sh: $BUILD_DIR/bin/$prog not found (build weft first)" >&2
        exit 1
    fi
done
if ! grep -qa -- '--phases' "$BUILD_DIR/bin/ddp_overlap"; then
    echo "trace_overlap.sh: $BUILD_DIR/bin/ddp_overlap has no --phases (rebuild it)" >&2
    exit 1
fi

out=$BUILD_DIR/trace_overlap
mkdir -p "$out" || exit 1
rm -f "$out"/rank*.json "$out"/phases.*.txt "$out"/trace.json "$out"/timeline.png

cmd=("${TIMEOUT_CMD[@]}" "$MPIRUN" --oversubscribe --bind-to none -np "$NP"
     -x "WEFT_TRACE=$out/rank%r.json" -x "WEFT_ASYNC_PROGRESS=$async" -x UCX_NET_DEVICES=lo
     "$BUILD_DIR/bin/ddp_overlap" -s "$scale" -b "$buckets" -i "$iters" --phases "$out/phases.%r.txt")
echo "# ${cmd[*]}"
"${cmd[@]}" </dev/null >"$out/ddp_overlap.txt" 2>"$out/ddp_overlap.err"
rc=$?
cat "$out/ddp_overlap.txt"
if [ $rc -ne 0 ]; then
    echo "trace_overlap.sh: ddp_overlap failed (exit $rc); last lines of $out/ddp_overlap.err:" >&2
    tail -n 12 "$out/ddp_overlap.err" | sed 's/^/    /' >&2
    exit 1
fi

ranks=()
for r in $(seq 0 $((NP - 1))); do ranks+=("$out/rank$r.json"); done
"$BUILD_DIR/bin/weft_trace" merge -o "$out/trace.json" "${ranks[@]}" || exit 1

# The rank files carry the clock offsets that the merge applied, for the phase files.
bench_plot timeline "$out/trace.json" --phases "$out/phases.%r.txt" --clock "${ranks[@]}" \
    ${TRACE_STEP:+--step "$TRACE_STEP"} -o "$out/timeline.png" \
    --title "ddp_overlap: bucket all-reduces behind the backward pass (WEFT_TRACE)" \
    --setup "$NP ranks, shared memory" \
    --note "ResNet-50 x $scale, $buckets MiB buckets, WEFT_ASYNC_PROGRESS=$async"
exit 0
