#!/usr/bin/env bash
# weft across hosts that are network namespaces, launched by Slurm: brings up HOSTS hosts and a
# Slurm across them (scripts/netns-cluster.sh slurm-up: slurmctld on weft-h1, a slurmd per host),
# runs programs with `srun --mpi=pmix -N HOSTS -n 2*HOSTS`, checks each, and brings everything
# down, even on failure. Slurm distributes by block: ranks 2K and 2K+1 run on weft-h(K+1).
#   run_netns_slurm.sh HOSTS BIN_DIR SOURCE_DIR
# Exits 77 (skipped) where namespaces or Slurm cannot be made (not root, no iproute2, no munge
# or slurm-wlm, no PMIx plugin in srun), saying why.
set -uo pipefail
hosts=$1 bin=$2 src=$3
cluster=$src/scripts/netns-cluster.sh
np=$((2 * hosts))
fail() { echo "run_netns_slurm: FAIL: $*"; exit 1; }
skip() { echo "run_netns_slurm: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces and Slurm's daemons need root"
command -v ip > /dev/null || skip "ip (iproute2) is not installed"
command -v unshare > /dev/null || skip "unshare (util-linux) is not installed"
for b in munged mungekey slurmctld slurmd srun sinfo; do
  command -v "$b" > /dev/null || skip "'$b' is not installed (munge, slurm-wlm)"
done
ip netns add weft-probe 2> /dev/null || skip "this machine refuses to make network namespaces"
ip netns del weft-probe
"$cluster" status | grep -q "no host is up" || fail "a cluster is up already: $("$cluster" status | tr '\n' ' ')"
out=$(mktemp -d)
trap '"$cluster" down > /dev/null; rm -rf "$out"' EXIT
"$cluster" up "$hosts" || fail "the cluster did not come up"
timeout 90 "$cluster" slurm-up || fail "Slurm did not come up across the hosts"
"$cluster" slurm srun --mpi=list 2>&1 | grep -qw pmix || skip "srun has no pmix plugin (srun --mpi=list)"

# run NAME EXPECT [VAR=VALUE...] -- PROGRAM ARGS: passes when the job succeeds and prints EXPECT.
run() {
  local name=$1 expect=$2
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  local t0=$SECONDS
  timeout -k 5 240 "$cluster" slurm env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 WEFT_DEBUG=INFO \
    WEFT_DEBUG_SUBSYS=init,pt2pt "${vars[@]}" srun --mpi=pmix -N "$hosts" -n "$np" --kill-on-bad-exit=1 \
    --time=4 "$@" > "$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -qF -- "$expect" "$out/$name.log"; then
    tail -40 "$out/$name.log"
    fail "$name: exit $rc, expected output '$expect'"
  fi
  echo "run_netns_slurm: $name passed on $hosts hosts, $np ranks ($((SECONDS - t0)) s)"
}

# Each rank on the node Slurm put it on (block), as weft learns it from Slurm's PMIx server.
run ring "OK (np $np)" -- "$bin/tests/ring"
for r in $(seq 0 $((np - 1))); do
  host=weft-h$((r / 2 + 1))
  grep -q "rank $r of $np, local $((r % 2)) of 2, node $((r / 2)) ($host)" "$out/ring.log" ||
    fail "rank $r is not local rank $((r % 2)) of node $((r / 2)) on $host: $(grep "rank $r of" "$out/ring.log")"
done
# Between hosts UCX over eth0 only; inside a host weft's shared memory.
grep -q "transports tcp/eth0" "$out/ring.log" || fail "no peer reached over tcp/eth0"
grep -E "transports " "$out/ring.log" | grep -v "tcp/eth0" | grep -qv "shm" &&
  fail "a peer reached another way: $(grep -E 'transports ' "$out/ring.log" | grep -v tcp/eth0 | head -2)"
run hier_allreduce "OK (np $np)" WEFT_COLL_TUNE=allreduce:@hier -- "$bin/tests/coll_matrix" Allreduce
run rma_basic "every check passed at np $np" -- "$bin/tests/rma_basic"
# A rank killed on another host (p2p_kill's last rank, on weft-h$hosts, while the others wait on
# live peers): its host-mate tells the ranks of the other hosts. Every survivor must report it
# before Slurm ends the step (about a second after a task dies, even with --kill-on-bad-exit=0).
victim=$((np - 1))
t0=$SECONDS
timeout -k 5 120 "$cluster" slurm env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 WEFT_DEBUG=INFO \
  WEFT_DEBUG_SUBSYS=init,pt2pt srun --mpi=pmix -N "$hosts" -n "$np" --kill-on-bad-exit=0 --time=2 \
  "$bin/tests/fault_p2p_kill" > "$out/p2p_kill.log" 2>&1
rc=$?
took=$((SECONDS - t0))
log=$out/p2p_kill.log
# srun exits 137 (a task was killed); a hang is caught by the time.
[ $rc -eq 124 ] && { tail -40 "$log"; fail "p2p_kill: the job hung (ended after 120 s)"; }
grep -q "FAIL" "$log" && { tail -40 "$log"; fail "p2p_kill: a survivor reported a failure"; }
for r in $(seq 0 $((victim - 1))); do
  grep -q "^PASS survivor $r\$" "$log" || { tail -40 "$log"; fail "p2p_kill: survivor $r did not report rank $victim (srun exit $rc)"; }
done
grep -q "weft-h$hosts:.* rank $victim died on this host (weft-h$hosts): failure notices sent to the $((np - 2)) live ranks" "$log" ||
  fail "p2p_kill: no rank of weft-h$hosts told the $((np - 2)) ranks of the other hosts"
seen=$(grep -v "weft-h$hosts:" "$log" | grep -c "rank $victim has terminated on another host")
[ "$seen" = $((np - 2)) ] || fail "p2p_kill: $seen of the $((np - 2)) survivors on other hosts were told of rank $victim's death"
[ "$took" -le 60 ] || fail "p2p_kill: the job took $took s"
echo "run_netns_slurm: p2p_kill passed on $hosts hosts, $np ranks, rank $victim killed on weft-h$hosts ($took s)"
echo "run_netns_slurm: ok ($hosts hosts)"
