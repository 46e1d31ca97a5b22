# What the namespace-host tests share (sourced by run_netns.sh and run_netns_slurm.sh): the
# checks that namespaces can be made, a job run and checked, and the checks of weft's log.
# The sourcing script sets NAME (its messages' prefix), hosts, np and cluster first.

fail() { echo "$NAME: FAIL: $*"; exit 1; }
skip() { echo "$NAME: skipped: $*"; exit 77; }

# Skips unless this machine lets root make namespaces; fails if a cluster is up already. Sets
# `out`, a folder removed (and the cluster brought down) when the script exits.
netns_preflight() {
  [ "$(id -u)" = 0 ] || skip "network namespaces need root"
  command -v ip > /dev/null || skip "ip (iproute2) is not installed"
  command -v unshare > /dev/null || skip "unshare (util-linux) is not installed"
  ip netns add weft-probe 2> /dev/null || skip "this machine refuses to make network namespaces"
  ip netns del weft-probe
  "$cluster" status | grep -q "no host is up" || fail "a cluster is up already: $("$cluster" status | tr '\n' ' ')"
  out=$(mktemp -d)
  trap '"$cluster" down > /dev/null; rm -rf "$out"' EXIT
}

# run_checked JOB EXPECT LAUNCH...: runs LAUNCH (bounded) into $out/JOB.log; passes when it
# succeeds and prints EXPECT.
run_checked() {
  local job=$1 expect=$2 t0=$SECONDS rc
  shift 2
  timeout -k 5 240 "$@" > "$out/$job.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] || ! grep -qF -- "$expect" "$out/$job.log"; then
    tail -40 "$out/$job.log"
    fail "$job: exit $rc, expected output '$expect'"
  fi
  echo "$NAME: $job passed on $hosts hosts, $np ranks ($((SECONDS - t0)) s)"
}

# check_placement LOG RANK HOST_INDEX LOCAL: the log's init line puts RANK on weft-h(HOST_INDEX+1)
# as local rank LOCAL of 2, node HOST_INDEX, found without WEFT_FAKE_NODES.
check_placement() {
  local log=$1 r=$2 node=$3 local_rank=$4 host=weft-h$(($3 + 1))
  grep -q "rank $r of $np, local $local_rank of 2, node $node ($host)" "$log" ||
    fail "rank $r is not local rank $local_rank of node $node on $host: $(grep "rank $r of" "$log")"
}

# check_paths LOG: between hosts UCX over eth0 only; inside a host weft's shared memory.
check_paths() {
  local log=$1
  grep -q "transports tcp/eth0" "$log" || fail "no peer reached over tcp/eth0"
  grep -E "transports " "$log" | grep -v "tcp/eth0" | grep -qv "shm" &&
    fail "a peer reached another way: $(grep -E 'transports ' "$log" | grep -v tcp/eth0 | head -2)"
}

# check_kill JOB RC TOOK EXPECT VICTIM HOST REMOTE: after a job in which rank VICTIM was killed
# on HOST: no hang, each survivor R below VICTIM printed "EXPECT R", a rank of HOST told the
# REMOTE live ranks of the other hosts, each of those took in the notice, within 60 s.
check_kill() {
  local job=$1 rc=$2 took=$3 expect=$4 victim=$5 host=$6 remote=$7 log=$out/$1.log r seen
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && [ "$took" -ge 110 ] && { tail -40 "$log"; fail "$job: the job hung"; }
  grep -q "FAIL" "$log" && { tail -40 "$log"; fail "$job: a survivor reported a failure"; }
  for r in $(seq 0 $((victim - 1))); do
    grep -q "^$expect $r\b" "$log" || { tail -40 "$log"; fail "$job: survivor $r did not print '$expect $r' (exit $rc)"; }
  done
  grep -q "$host:.* rank $victim died on this host ($host): failure notices sent to the $remote live ranks" "$log" ||
    fail "$job: no rank of $host told the $remote ranks of the other hosts"
  seen=$(grep -v "$host:" "$log" | grep -c "rank $victim has terminated on another host")
  [ "$seen" = "$remote" ] || fail "$job: $seen survivors of other hosts took in the notice of rank $victim's death, not $remote"
  [ "$took" -le 60 ] || fail "$job: the job took $took s"
  echo "$NAME: $job passed on $hosts hosts, $np ranks, rank $victim killed on $host ($took s)"
}
