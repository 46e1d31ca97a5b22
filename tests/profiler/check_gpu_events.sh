#!/usr/bin/env bash
# GPU events (include/weft/profiler.h): GPU collectives on device buffers, blocking and
# stream-ordered, under the example plugin and under WEFT_TRACE.
#   1. the plugin counts GPU events on every rank, each with the device's times
#      (bad_gpu_times 0), every event stopped;
#   2. the merged trace has each rank's GPU work on its GPU track, with a positive duration,
#      inside the span of that rank's MPI calls (the device clock placed on the host's).
# Exits 77 (skipped) where the programs find no GPU.
#   check_gpu_events.sh NP BLOCKING_PROGRAM STREAM_PROGRAM PLUGIN WEFT_TRACE_TOOL
set -uo pipefail
np=$1 blocking=$2 stream=$3 plugin=$4 tool=$5
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check_gpu_events.sh: $*"; exit 1; }
run() {  # NAME PROGRAM [ARGS...]: exits 77 with the program
  local name=$1
  shift
  "$here/../launch.sh" "$np" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 77 ] && { echo "check_gpu_events.sh: no GPU, skipped"; exit 77; }
  [ $rc -eq 0 ] || { cat "$out/$name.log"; fail "$name: the job failed (exit $rc)"; }
}

for prog in blocking stream; do
  program=$blocking args=() fast=0
  # "native" checks that fallbacks are refused, which needs WEFT_REQUIRE_FAST_PATH.
  [ $prog = stream ] && program=$stream args=(native) fast=1
  WEFT_REQUIRE_FAST_PATH=$fast WEFT_PROFILER_PLUGIN=$plugin PROFILER_COUNT_OUT="$out/$prog.%r" PROFILER_COUNT_TYPES=api,coll,gpu \
    run "$prog" "$program" "${args[@]}"
  for r in $(seq 0 $((np - 1))); do
    f="$out/$prog.$r"
    [ -f "$f" ] || fail "$prog: rank $r wrote no summary"
    n=$(awk '/: gpu / { for (i = 1; i < NF; ++i) if ($i == "count") s += $(i + 1) } END { print s + 0 }' "$f")
    [ "$n" -gt 0 ] || { cat "$f"; fail "$prog: rank $r reported no GPU event"; }
    grep -q "totals started \([0-9]*\) stopped \1 unstopped 0 bad_parent 0 failed 0 .* bad_gpu_times 0" "$f" ||
      fail "$prog: rank $r: $(grep totals "$f")"
    echo "check_gpu_events.sh: $prog rank $r: $n GPU events: $(awk '/: gpu / { printf "%s ", $5 }' "$f")"
  done
done

WEFT_TRACE="$out/trace" run trace "$blocking"
files=()
for r in $(seq 0 $((np - 1))); do files+=("$out/trace.$r.json"); done
"$tool" merge -o "$out/all.json" "${files[@]}" || fail "merge failed"
python3 - "$out/all.json" "$np" <<'PY' || exit 1
import json, sys
events, np = json.load(open(sys.argv[1]))["traceEvents"], int(sys.argv[2])
def fail(msg):
    print("check_gpu_events.sh:", msg); sys.exit(1)
for r in range(np):
    gpu = [e for e in events if e["pid"] == r and e.get("cat") == "gpu" and e["ph"] == "X"]
    api = [e for e in events if e["pid"] == r and e.get("cat") == "api" and e["ph"] == "X"]
    if not gpu: fail("rank %d: no GPU events in the trace" % r)
    if len({e["tid"] for e in gpu}) != 1 or gpu[0]["tid"] in {e["tid"] for e in api}:
        fail("rank %d: GPU events are not on a track of their own" % r)
    if any(e["dur"] <= 0 for e in gpu): fail("rank %d: a GPU event without duration" % r)
    lo, hi = min(e["ts"] for e in api), max(e["ts"] + e["dur"] for e in api)
    # The device's clock is placed on the host's within a few microseconds.
    outside = [e for e in gpu if e["ts"] < lo - 50 or e["ts"] + e["dur"] > hi + 50]
    if outside: fail("rank %d: %d of %d GPU events outside the MPI calls' span [%.1f, %.1f]: %s" %
                     (r, len(outside), len(gpu), lo, hi, outside[0]))
    print("check_gpu_events.sh: rank %d: %d GPU events on their track, inside the calls' span" % (r, len(gpu)))
PY
echo "check_gpu_events.sh: ok"
