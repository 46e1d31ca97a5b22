#!/usr/bin/env bash
# A cluster of hosts on this machine: N network namespaces, each a host with its own hostname
# (a UTS namespace per launched process tree), its own loopback, /etc/hosts, and a veth link to
# a bridge that lives in a namespace of its own. Addresses come from 192.0.2.0/24 (documentation
# range) and exist only inside these namespaces: nothing touches the machine's own interfaces.
# Root only.
#
#   scripts/netns-cluster.sh up N          make hosts weft-h1 .. weft-hN (N from 1 to 200)
#   scripts/netns-cluster.sh down          remove everything up made
#   scripts/netns-cluster.sh status        the hosts and their addresses
#   scripts/netns-cluster.sh exec K CMD... run CMD on host K (1-based)
#   scripts/netns-cluster.sh mpirun ARGS...
#                                          Open MPI's mpirun, started on host 1, with a hostfile of
#                                          every host (slots=16 each) and a launch agent in place of
#                                          ssh that enters the target host's namespaces
#   scripts/netns-cluster.sh slurm-up      Slurm across the hosts that are up: munged, slurmctld on
#                                          host 1 (192.0.2.1), one slurmd per host (node weft-hK at
#                                          192.0.2.K); its own conf, key, ports and files, apart from
#                                          scripts/start-slurm.sh's single-node Slurm
#   scripts/netns-cluster.sh slurm-down    stop those daemons and remove their files (down does too)
#   scripts/netns-cluster.sh srun ARGS...  srun on host 1, against that Slurm
#   scripts/netns-cluster.sh slurm CMD...  any Slurm client (sinfo, scontrol ...) on host 1, likewise
# Host K: namespace weft-hK, interface eth0 with 192.0.2.K/24, hostname weft-hK; the hub
# namespace weft-hub holds the bridge br0 and the hosts' peer ends. State: /run/weft-netns.
set -euo pipefail
prefix=weft-h
hub=weft-hub
state=/run/weft-netns
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "netns-cluster: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "run as root (network namespaces)"; }
hosts() { ip netns list 2>/dev/null | awk -v p="$prefix" 'index($1, p) == 1 && $1 != "'$hub'" { print $1 }' | sort -V; }

up() {
  local n=$1
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "up N: N from 1 to 200, not '$n'"
  command -v ip > /dev/null || die "ip (iproute2) is not installed"
  command -v unshare > /dev/null || die "unshare (util-linux) is not installed"
  [ -z "$(hosts)" ] || die "a cluster is up already ($(hosts | tr '\n' ' ')); run down first"
  mkdir -p "$state"
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
  : > "$state/hostfile"
  local hostsfile="127.0.0.1 localhost"$'\n'
  for k in $(seq 1 "$n"); do hostsfile+="192.0.2.$k $prefix$k"$'\n'; done
  for k in $(seq 1 "$n"); do
    local ns=$prefix$k
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add eth0 netns "$ns" type veth peer name "h$k" netns "$hub"
    ip -n "$hub" link set "h$k" master br0
    ip -n "$hub" link set "h$k" up
    ip -n "$ns" addr add "192.0.2.$k/24" dev eth0
    ip -n "$ns" link set eth0 up
    # ip netns exec binds these over /etc for processes of the namespace.
    mkdir -p "/etc/netns/$ns"
    printf '%s' "$hostsfile" > "/etc/netns/$ns/hosts"
    echo "$ns" > "/etc/netns/$ns/hostname"
    echo "$ns slots=16" >> "$state/hostfile"
  done
  cat > "$state/agent" <<AGENT
#!/bin/sh
# Launch agent (in place of ssh): HOST COMMAND... runs COMMAND on HOST, as ssh would: the words
# joined and run by a shell, with HOST's network, /etc/hosts and hostname.
host=\$1
shift
exec ip netns exec "\$host" unshare --uts /bin/sh -c 'hostname "\$0" && exec /bin/bash -c "\$*"' "\$host" "\$@"
AGENT
  chmod +x "$state/agent"
  # Wait until every link is up (the bridge learns the ports).
  for k in $(seq 1 "$n"); do
    for _ in $(seq 1 50); do
      ip -n "$prefix$k" -o link show eth0 | grep -q "state UP" && break
      sleep 0.1
    done
  done
  echo "netns-cluster: $n hosts up ($prefix""1 .. $prefix$n, 192.0.2.1 .. 192.0.2.$n, bridge in $hub)"
}

# ---------------------------------------------------------------- Slurm
# Everything under $slurm. Ports other than Slurm's defaults, and a munged with its own socket
# and key, so that a single-node Slurm (scripts/start-slurm.sh) can run beside it.
slurm=$state/slurm
slurm_env() { echo "SLURM_CONF=$slurm/slurm.conf"; }

# pid_of FILE NAME: the pid in FILE, if it is a live NAME process.
pid_of() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2> /dev/null) && [ -n "$pid" ] && [ -d "/proc/$pid" ] && grep -q "$2" "/proc/$pid/comm" 2> /dev/null &&
    echo "$pid"
}

slurm_log_tail() {
  for f in "$slurm"/log/*.log; do [ -f "$f" ] && { echo "---- $f" >&2; tail -n 8 "$f" >&2; }; done
}

slurm_up() {
  local list n k
  list=$(hosts)
  [ -n "$list" ] || die "slurm-up: no host is up (up N first)"
  n=$(echo "$list" | wc -l)
  for b in munged mungekey slurmctld slurmd srun sinfo scontrol; do
    command -v "$b" > /dev/null || die "slurm-up: '$b' is not installed (munge, slurm-wlm)"
  done
  [ ! -e "$slurm/slurm.conf" ] || die "slurm-up: Slurm is up already (slurm-down first)"
  mkdir -p "$slurm"/{munge,socket,ctld,log,run}
  for k in $(seq 1 "$n"); do mkdir -p "$slurm/spool/$prefix$k"; done
  # munged: its own key and socket; it checks that its files belong to its user.
  mungekey --create --keyfile="$slurm/munge/munge.key" --force > /dev/null
  chown -R munge:munge "$slurm/munge" "$slurm/socket"
  chmod 0700 "$slurm/munge"
  chmod 0755 "$slurm"
  runuser -u munge -- munged --socket="$slurm/socket/munge.socket" --key-file="$slurm/munge/munge.key" \
    --pid-file="$slurm/munge/munged.pid" --log-file="$slurm/munge/munged.log" \
    --seed-file="$slurm/munge/munged.seed" || die "slurm-up: munged did not start"
  {
    echo "# Slurm across the namespace hosts (scripts/netns-cluster.sh slurm-up); generated."
    echo "ClusterName=weft-netns"
    echo "SlurmctldHost=${prefix}1(192.0.2.1)"
    echo "SlurmctldPort=6917"
    echo "SlurmdPort=6918"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$slurm/socket/munge.socket"
    echo "StateSaveLocation=$slurm/ctld"
    echo "SlurmctldPidFile=$slurm/run/slurmctld.pid"
    echo "SlurmctldLogFile=$slurm/log/slurmctld.log"
    # %n: the node's name, so that each host's slurmd has files of its own.
    echo "SlurmdSpoolDir=$slurm/spool/%n"
    echo "SlurmdPidFile=$slurm/run/slurmd-%n.pid"
    echo "SlurmdLogFile=$slurm/log/slurmd-%n.log"
    # Each host's temporary file system of its own, as on separate machines: Slurm's PMIx plugin
    # makes its directories there (spmix_appdir_JOB.STEP), named by the job only, which the
    # hosts' step daemons would otherwise share. The machine's /tmp stays visible to the jobs.
    echo "TmpFS=$slurm/tmp/%n"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    # The hosts share this machine's CPUs: each gets them all.
    for k in $(seq 1 "$n"); do echo "NodeName=$prefix$k NodeAddr=192.0.2.$k CPUs=$(nproc) State=UNKNOWN"; done
    echo "PartitionName=hosts Nodes=${prefix}[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
  } > "$slurm/slurm.conf"
  # srun reads a conf even to list its plugins.
  local mpi=none
  SLURM_CONF=$slurm/slurm.conf srun --mpi=list 2>&1 | grep -qw pmix && mpi=pmix
  sed -i "s/^MpiDefault=none\$/MpiDefault=$mpi/" "$slurm/slurm.conf"
  # slurmctld on host 1, slurmd on each host: each under its host's name (a UTS namespace of its
  # own), which is how they find themselves in the conf.
  "$state/agent" "${prefix}1" "$(slurm_env) slurmctld -f $slurm/slurm.conf" || { slurm_log_tail; die "slurm-up: slurmctld did not start"; }
  # slurmd wants the cgroup file systems, which ip netns exec's fresh /sys lacks: the machine's
  # hierarchies, mounted again in the host's mount namespace (they go with its processes).
  # In mount order: a v1 machine's tmpfs and hierarchies, or a v2 machine's one cgroup2.
  local cgroups="true"
  while read -r fs dir opts; do
    cgroups+=" && mkdir -p $dir && mount -t $fs -o $opts $fs $dir"
  done < <(awk '$2 == "/sys/fs/cgroup" || index($2, "/sys/fs/cgroup/") == 1 { print $3, $2, $4 }' /proc/self/mounts)
  for k in $(seq 1 "$n"); do
    mkdir -p "$slurm/tmp/$prefix$k"
    chmod 1777 "$slurm/tmp/$prefix$k"
    "$state/agent" "$prefix$k" "$cgroups && $(slurm_env) slurmd -f $slurm/slurm.conf -N $prefix$k" ||
      { slurm_log_tail; die "slurm-up: slurmd on $prefix$k did not start"; }
  done
  local idle=0
  for _ in $(seq 1 60); do
    idle=$("$state/agent" "${prefix}1" "$(slurm_env) sinfo -h -N -o '%N %t'" 2> /dev/null | grep -c ' idle$' || true)
    [ "$idle" = "$n" ] && break
    sleep 0.5
  done
  [ "$idle" = "$n" ] || { "$state/agent" "${prefix}1" "$(slurm_env) sinfo -N" >&2; slurm_log_tail; die "slurm-up: $idle of $n nodes idle after 30 s"; }
  echo "netns-cluster: Slurm up ($n nodes, slurmctld at 192.0.2.1:6917, MpiDefault=$mpi, conf $slurm/slurm.conf)"
}

# Stops what slurm_up started, then anything still running in the hosts' namespaces (a job's
# slurmstepd, its ranks), and removes the files.
slurm_down() {
  [ -d "$slurm" ] || return 0
  local pids=() pid f
  for f in "$slurm"/run/slurmd-*.pid; do pid=$(pid_of "$f" slurmd) && pids+=("$pid"); done
  pid=$(pid_of "$slurm/run/slurmctld.pid" slurmctld) && pids+=("$pid")
  pid=$(pid_of "$slurm/munge/munged.pid" munged) && pids+=("$pid")
  [ ${#pids[@]} -eq 0 ] || kill -TERM "${pids[@]}" 2> /dev/null || true
  for _ in $(seq 1 40); do
    local alive=0
    for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.25
  done
  for pid in "${pids[@]}"; do [ ! -d "/proc/$pid" ] || kill -KILL "$pid" 2> /dev/null || true; done
  for ns in $(hosts); do
    pids=($(ip netns pids "$ns" 2> /dev/null))
    [ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2> /dev/null || true
  done
  rm -rf "$slurm"
  echo "netns-cluster: Slurm down"
}

on_slurm_host1() {
  [ -f "$slurm/slurm.conf" ] || die "Slurm is not up (slurm-up first)"
  on_host 1 env "$(slurm_env)" "$@"
}

down() {
  local any=0
  slurm_down
  for ns in $(hosts); do ip netns del "$ns"; rm -rf "/etc/netns/$ns"; any=1; done
  if ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qx "$hub"; then ip netns del "$hub"; any=1; fi
  rm -rf "$state"
  [ $any = 1 ] && echo "netns-cluster: down" || echo "netns-cluster: nothing was up"
}

status() {
  local list
  list=$(hosts)
  [ -n "$list" ] || { echo "netns-cluster: no host is up"; return 0; }
  for ns in $list; do echo "$ns $(ip -n "$ns" -o -4 addr show eth0 | awk '{ print $4 }')"; done
  [ ! -f "$slurm/slurm.conf" ] || echo "slurm: up, conf $slurm/slurm.conf"
}

on_host() {
  local k=$1
  shift
  ip netns list | awk '{ print $1 }' | grep -qx "$prefix$k" || die "no host $prefix$k (up first)"
  exec "$state/agent" "$prefix$k" "$(printf '%q ' "$@")"
}

case "${1:-}" in
  up) need_root; up "${2:-}" ;;
  down) need_root; down ;;
  status) status ;;
  exec) need_root; [ $# -ge 3 ] || die "exec K CMD..."; k=$2; shift 2; on_host "$k" "$@" ;;
  mpirun)
    need_root
    shift
    [ -f "$state/hostfile" ] || die "no cluster is up"
    # Open MPI's own traffic (its daemons' wire-up) on the hosts' network only.
    on_host 1 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      mpirun --hostfile "$state/hostfile" --mca plm_rsh_agent "$state/agent" \
      --mca oob_tcp_if_include 192.0.2.0/24 "$@" ;;
  slurm-up) need_root; slurm_up ;;
  slurm-down) need_root; slurm_down ;;
  srun) need_root; shift; on_slurm_host1 srun "$@" ;;
  slurm) need_root; shift; [ $# -ge 1 ] || die "slurm CMD..."; on_slurm_host1 "$@" ;;
  *) sed -n 2,24p "$0"; exit 2 ;;
esac
