#!/usr/bin/env bash
# The job view and the binding advice at init, on virtual nodes (WEFT_FAKE_NODES):
# - WEFT_TOPO_DUMP with %r: every rank's dump lists the job's nodes with their ranks, each
#   node's summary, and this node's ranks with their binding, grouped by NUMA set;
# - ranks bound (taskset) far from the NIC of a described node, or from their GPU, get exactly
#   one warning each, and INFO reports the binding; unbound ranks get none.
#   check_topology_job.sh LAUNCH_SH PROGRAM TOPOLOGY_JSON
set -uo pipefail
launch=$1
prog=$2
file=$3
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check() {  # check NAME TEXT PATTERN
  if grep -q -- "$3" <<< "$2"; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in:"; echo "$2" | head -30; fail=1; fi
}
warnings_of() {  # warnings_of TEXT RANK: how many topo warnings rank RANK logged
  echo "$1" | grep -c ":$2\] weft WARN topo: "
}

out=$(WEFT_FAKE_NODES=2 WEFT_TOPO_DUMP="$dir/topo.%r.json" WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=topo "$launch" 4 "$prog" 2>&1)
check "job tree at INFO" "$out" ":0\] weft INFO topo: job: node 1 (.*): ranks 2-3"
for r in 0 1 2 3; do
  if python3 - "$dir/topo.$r.json" "$r" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
rank = int(sys.argv[2])
job = t["job"]
assert job["rank"] == rank and job["size"] == 4, job
nodes = job["nodes"]
assert [n["node_id"] for n in nodes] == [0, 1], nodes
assert [n["ranks"] for n in nodes] == [[0, 1], [2, 3]], nodes
assert all(n["summary"]["cores"] == t["cores"] and n["summary"]["hostname"] == t["hostname"] for n in nodes), nodes
mine = nodes[rank // 2]
assert job["node_id"] == mine["node_id"] and job["local_ranks"] == mine["ranks"], job
assert [p["rank"] for p in mine["places"]] == mine["ranks"], mine
assert sorted(r for g in mine["by_numa"] for r in g["ranks"]) == mine["ranks"], mine
other = nodes[1 - rank // 2]
assert "places" not in other, other
assert t["gpu_link_source"], t
EOF
  then echo "ok: rank $r dump lists nodes [0,1] and [2,3]"; else echo "FAIL: rank $r dump"; cat "$dir/topo.$r.json"; fail=1; fi
done
if grep -q "weft WARN topo: " <<< "$out"; then echo "FAIL: unbound ranks were warned"; echo "$out" | grep WARN; fail=1; fi

# The described node without mlx5_0: its only NIC, mlx5_1, hangs off NUMA 1, while cpu 0 of this
# machine is NUMA 0.
python3 - "$file" "$dir/one_nic.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
t["devices"] = [d for d in t["devices"] if d["name"] != "mlx5_0"]
json.dump(t, open(sys.argv[2], "w"))
EOF
out=$(WEFT_TOPO_FILE="$dir/one_nic.json" WEFT_FAKE_NODES=2 WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=topo \
      "$launch" 4 taskset -c 0 "$prog" 2>&1)
check "binding reported" "$out" ":3\] weft INFO topo: topology file .*; rank 3 bound to cpus 0 (NUMA 0), gpu 1"
for r in 0 1 2 3; do
  n=$(warnings_of "$out" $r)
  if [ "$n" = 1 ]; then echo "ok: rank $r warned once"; else echo "FAIL: rank $r warned $n times"; fail=1; fi
done
check "far from the NIC" "$out" ":2\] weft WARN topo: rank 2 is bound to cpus 0 (NUMA 0), but the nearest NIC (mlx5_1) hangs off NUMA 1"

# One node: no network, but local ranks 2 and 3 use GPUs 2 and 3 on NUMA 1.
out=$(WEFT_TOPO_FILE="$file" WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=topo "$launch" 4 taskset -c 0 "$prog" 2>&1)
for r in 0 1 2 3; do
  n=$(warnings_of "$out" $r)
  want=$([ $r -ge 2 ] && echo 1 || echo 0)
  if [ "$n" = "$want" ]; then echo "ok: rank $r warned $want time(s)"; else echo "FAIL: rank $r warned $n times, not $want"; fail=1; fi
done
check "far from the GPU" "$out" ":3\] weft WARN topo: rank 3 is bound to cpus 0 (NUMA 0), but gpu 3 (cuda3) hangs off NUMA 1"
[ $fail -eq 0 ] || { echo "$out" | head -40; exit 1; }
