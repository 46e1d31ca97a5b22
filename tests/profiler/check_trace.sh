#!/usr/bin/env bash
# Runs profiled_job with WEFT_TRACE, joins the ranks' files with weft_trace merge and checks the
# timeline against what the job did (profiled_job.c): every rank's track, the calls' complete
# events, balanced async slices, each rank's events moved by its recorded clock offset; then
# that a file cut short (a rank that died) is still joined, with a warning.
#   check_trace.sh NP PROGRAM WEFT_TRACE_TOOL
set -uo pipefail
np=$1 program=$2 tool=$3
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check_trace.sh: $*"; exit 1; }
WEFT_TRACE="$out/trace" "$here/../launch.sh" "$np" "$program" rma || fail "the job failed"
files=()
for r in $(seq 0 $((np - 1))); do
  [ -s "$out/trace.$r.json" ] || fail "rank $r wrote no trace"
  files+=("$out/trace.$r.json")
done
"$tool" merge -o "$out/all.json" "${files[@]}" || fail "merge failed"
python3 - "$out" "$np" <<'PY' || exit 1
import json, sys, collections
out, np = sys.argv[1], int(sys.argv[2])
def fail(msg):
    print("check_trace.sh:", msg); sys.exit(1)
merged = json.load(open(out + "/all.json"))["traceEvents"]
per_rank = {r: json.load(open("%s/trace.%d.json" % (out, r)))["traceEvents"] for r in range(np)}
pids = {e["pid"] for e in merged}
if pids != set(range(np)): fail("ranks in the timeline: %s" % sorted(pids))
for r, evs in per_rank.items():
    clock = [e for e in evs if e.get("name") == "weft_clock"]
    if len(clock) != 1: fail("rank %d: no clock record" % r)
    offset = clock[0]["args"]["offset_us"]
    if r == 0 and offset != 0: fail("rank 0's offset is %s" % offset)
    mine = [e for e in evs if e["ph"] != "M"]
    theirs = [e for e in merged if e["pid"] == r and e["ph"] != "M"]
    if len(mine) != len(theirs): fail("rank %d: %d events, %d merged" % (r, len(mine), len(theirs)))
    for a, b in zip(mine, theirs):
        if abs((a["ts"] - offset) - b["ts"]) > 1e-3: fail("rank %d: %s moved by %s, not %s" % (r, a["name"], a["ts"] - b["ts"], offset))
    calls = collections.Counter(e["name"] for e in mine if e["ph"] == "X" and e["cat"] == "api")
    want = {"MPI_Allreduce": 4, "MPI_Barrier": 2, "MPI_Win_fence": 2}
    if r == 0: want.update({"MPI_Send": 10, "MPI_Irecv": 3, "MPI_Waitall": 1})
    if r == 1: want.update({"MPI_Recv": 10, "MPI_Isend": 3, "MPI_Waitall": 1, "MPI_Win_lock": 1, "MPI_Win_unlock": 1})
    for name, n in want.items():
        if calls[name] != n: fail("rank %d: %d %s events, expected %d" % (r, calls[name], name, n))
    if any(e["dur"] < 0 for e in mine if e["ph"] == "X"): fail("rank %d: a negative duration" % r)
    opened = collections.Counter((e["cat"], e["id"]) for e in mine if e["ph"] == "b")
    closed = collections.Counter((e["cat"], e["id"]) for e in mine if e["ph"] == "e")
    if opened != closed: fail("rank %d: async slices unbalanced" % r)
    cats = {e["cat"] for e in mine if e["ph"] == "b"}
    # Ranks above 1 send only collectives' messages, and none when the cost model (measured at
    # init) picks the shared-memory algorithms, which make no transfers.
    for c in ("coll", "round", "rma_epoch") + (("transfer",) if r <= 1 else ()):
        if c not in cats: fail("rank %d: no %s slices" % (r, c))
    colls = [e for e in mine if e["ph"] == "b" and e["cat"] == "coll"]
    # 4 calls, and the window's creation may add its own
    if sum(1 for e in colls if e["name"].startswith("allreduce:")) < 4: fail("rank %d: fewer than 4 allreduce slices" % r)
    if not all(e["args"]["algorithm"] for e in colls): fail("rank %d: a collective without its algorithm" % r)
print("check_trace.sh: %d events of %d ranks checked" % (len(merged), np))
PY
# A rank that died: its file ends early, without the clock record.
head -n 20 "$out/trace.1.json" > "$out/cut.1.json"
log=$("$tool" merge -o "$out/cut.json" "$out/trace.0.json" "$out/cut.1.json" 2>&1) || fail "merge of a cut file failed: $log"
grep -q "has no clock record" <<< "$log" || fail "no warning for the cut file: $log"
python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; sys.exit(0 if {x['pid'] for x in e} == {0, 1} else 1)" \
  "$out/cut.json" || fail "the cut file's events are not in the timeline"
# Files that are not one rank's each are refused.
"$tool" merge -o "$out/dup.json" "$out/trace.0.json" "$out/trace.0.json" > /dev/null 2>&1 && fail "a rank given twice was joined"
echo "check_trace.sh: ok"
