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
NAME=run_netns_slurm
# shellcheck source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"
for b in munged mungekey slurmctld slurmd srun sinfo; do
  command -v "$b" > /dev/null || skip "'$b' is not installed (munge, slurm-wlm)"
done
netns_preflight
"$cluster" up "$hosts" || fail "the cluster did not come up"
timeout 90 "$cluster" slurm-up || fail "Slurm did not come up across the hosts"
"$cluster" slurm srun --mpi=list 2>&1 | grep -qw pmix || skip "srun has no pmix plugin (srun --mpi=list)"

# run JOB EXPECT [VAR=VALUE...] -- PROGRAM ARGS: passes when the job succeeds and prints EXPECT.
run() {
  local job=$1 expect=$2
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  run_checked "$job" "$expect" "$cluster" slurm env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 WEFT_DEBUG=INFO \
    WEFT_DEBUG_SUBSYS=init,pt2pt "${vars[@]}" srun --mpi=pmix -N "$hosts" -n "$np" --kill-on-bad-exit=1 \
    --time=4 "$@"
}

# Each rank on the node Slurm put it on (block), as weft learns it from Slurm's PMIx server.
run ring "OK (np $np)" -- "$bin/tests/ring"
for r in $(seq 0 $((np - 1))); do check_placement "$out/ring.log" "$r" $((r / 2)) $((r % 2)); done
check_paths "$out/ring.log"
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
# srun exits 137 here (a task was killed); a hang is told by the time.
check_kill p2p_kill $rc $((SECONDS - t0)) "PASS survivor" "$victim" "weft-h$hosts" $((np - 2))
echo "run_netns_slurm: ok ($hosts hosts)"
