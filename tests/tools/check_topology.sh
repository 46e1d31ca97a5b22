#!/usr/bin/env bash
# The node topology is visible and replaceable: weft_info --topology prints this machine as a
# tree and as JSON; WEFT_TOPO_FILE makes it describe another node; a job with WEFT_TOPO_DUMP
# writes what each rank sees, and WEFT_DEBUG=INFO reports each rank's binding.
#   check_topology.sh WEFT_INFO TOPOLOGY_JSON LAUNCH_SH PROGRAM
set -uo pipefail
info=$1
file=$2
launch=$3
prog=$4
fail=0
check() {  # check NAME TEXT PATTERN
  if grep -q -- "$3" <<< "$2"; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in:"; echo "$2" | head -20; fail=1; fi
}
out=$("$info" --topology 2>&1)
check "machine tree" "$out" "^node .* package(s), [0-9]* cores"
check "NUMA node" "$out" "  NUMA 0: cpus "
json=$("$info" --topology --json 2>&1)
if echo "$json" | python3 -c 'import json,sys; t=json.load(sys.stdin); assert t["format"]=="weft-topology" and t["cores"]>=1 and t["numa"]'; then
  echo "ok: machine JSON parses"
else
  echo "FAIL: machine JSON"; echo "$json" | head; fail=1
fi
out=$(WEFT_TOPO_FILE=$file "$info" --topology 2>&1)
check "described node" "$out" "GPU islands: {0,1} {2,3}"
out=$(WEFT_TOPO_FILE=/nonexistent.json "$info" --topology 2>&1)
check "missing file named" "$out" "cannot open topology file '/nonexistent.json'"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$(WEFT_TOPO_FILE=$file WEFT_TOPO_DUMP="$dir/topo.%r.json" WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=topo "$launch" 2 "$prog" 2>&1)
check "binding reported" "$out" "topology file .*; rank 1 .*cpus .*gpu 1"
for r in 0 1; do
  if python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); j=t["job"]; assert j["rank"]==int(sys.argv[2]) and len(t["devices"])==6, t' "$dir/topo.$r.json" $r; then
    echo "ok: rank $r dump"
  else
    echo "FAIL: rank $r dump"; ls -l "$dir"; fail=1
  fi
done
out=$(WEFT_TOPO_FILE=/nonexistent.json "$launch" 1 "$prog" 2>&1)
check "a bad WEFT_TOPO_FILE stops the job" "$out" "WEFT_TOPO_FILE: cannot open topology file"
exit $fail
