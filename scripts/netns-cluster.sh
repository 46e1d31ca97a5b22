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

down() {
  local any=0
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
  *) sed -n 2,19p "$0"; exit 2 ;;
esac
