#!/usr/bin/env bash
# Bring up a single-node Slurm (munged + slurmctld + slurmd, all local) for
# weft's tests. Idempotent: when everything is already up and healthy it
# changes nothing. Must run as root.
#
#   scripts/start-slurm.sh            start (or check) the local cluster
#
# Environment:
#   SLURM_CONF_TEMPLATE  template to use (default: scripts/slurm/slurm.conf.in)
#   SLURM_CONF           where to write the config (default /etc/slurm/slurm.conf)
#   WEFT_SLURM_WAIT      seconds to wait for the node to become idle (default 30)
#
# The template's HOSTNAME and NPROC are replaced by `hostname -s` and `nproc`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
template=${SLURM_CONF_TEMPLATE:-}
if [ -z "$template" ]; then
    for c in "$here/slurm/slurm.conf.in"; do
        if [ -f "$c" ]; then template=$c; break; fi
    done
fi
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
wait_s=${WEFT_SLURM_WAIT:-30}
export SLURM_CONF=$conf

log() { echo "start-slurm: $*" >&2; }
die() {
    echo "start-slurm: ERROR: $*" >&2
    for f in /tmp/slurm/log/slurmctld.log /tmp/slurm/log/slurmd.log; do
        if [ -f "$f" ]; then
            echo "---- last lines of $f ----" >&2
            tail -n 15 "$f" >&2
        fi
    done
    exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root"
for b in munged munge unmunge slurmctld slurmd sinfo scontrol srun; do
    command -v "$b" >/dev/null 2>&1 || die "'$b' not found (install munge and slurm-wlm)"
done

host=$(hostname -s)
ncpu=$(nproc)

# pid_alive PIDFILE NAME: the pid in PIDFILE is a running NAME process
pid_alive() {
    local pf=$1 name=$2 pid
    [ -s "$pf" ] || return 1
    pid=$(cat "$pf" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
    grep -q "$name" "/proc/$pid/comm" 2>/dev/null
}

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

node_state() { timeout 5 sinfo -h -n "$host" -o %t 2>/dev/null | head -n1; }

node_usable() {
    case "$(node_state)" in
        idle|idle\*|mix|mixed|alloc|allocated) return 0 ;;
        *) return 1 ;;
    esac
}

srun_ok() {
    local out
    out=$(timeout 60 srun -N1 -n2 -O --time=1 hostname 2>&1) || { echo "$out" >&2; return 1; }
    [ "$(printf '%s\n' "$out" | grep -c .)" -eq 2 ] || { echo "$out" >&2; return 1; }
}

# ---------------------------------------------------------------- config
[ -n "$template" ] && [ -f "$template" ] || die "slurm.conf template not found (set SLURM_CONF_TEMPLATE)"
want=$(sed -e "s/HOSTNAME/$host/g" -e "s/NPROC/$ncpu/g" "$template")
conf_changed=0
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
    mkdir -p "$(dirname "$conf")"
    printf '%s\n' "$want" > "$conf.tmp.$$"
    mv "$conf.tmp.$$" "$conf"
    chmod 0644 "$conf"
    conf_changed=1
    log "wrote $conf (host $host, $ncpu CPUs) from $template"
fi

# ------------------------------------------------------- healthy already?
if [ "$conf_changed" -eq 0 ] && munge_ok \
    && pid_alive /tmp/slurm/slurmctld.pid slurmctld && pid_alive /tmp/slurm/slurmd.pid slurmd \
    && timeout 5 scontrol ping >/dev/null 2>&1 && node_usable; then
    log "Slurm already running and healthy (node $host $(node_state)); nothing to do"
    exit 0
fi

mkdir -p /tmp/slurm/state /tmp/slurm/spool /tmp/slurm/log
chmod 0755 /tmp/slurm

# ---------------------------------------------------------------- munge
keyfile=/etc/munge/munge.key
if [ ! -s "$keyfile" ]; then
    log "creating munge key $keyfile"
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile="$keyfile" --force
    else
        dd if=/dev/urandom of="$keyfile" bs=1 count=1024 status=none
    fi
    chmod 0400 "$keyfile"
fi
chown munge:munge /etc/munge "$keyfile"
chmod 0700 /etc/munge
chmod go-rwx "$keyfile"
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
chmod 0755 /run/munge

if ! munge_ok; then
    if pid_alive /run/munge/munged.pid munged; then
        die "munged is running (pid $(cat /run/munge/munged.pid)) but credentials do not verify"
    fi
    log "starting munged"
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged --force || die "munged failed to start"
    for _ in $(seq 1 20); do munge_ok && break; sleep 0.25; done
    munge_ok || die "munge credentials do not verify after starting munged"
fi

# ------------------------------------------------------------ slurm daemons
restart_daemons=$conf_changed
if [ "$restart_daemons" -eq 1 ]; then
    for d in slurmd slurmctld; do
        if pid_alive "/tmp/slurm/$d.pid" "$d"; then
            log "config changed: stopping $d (pid $(cat /tmp/slurm/$d.pid))"
            kill "$(cat /tmp/slurm/$d.pid)" || true
            for _ in $(seq 1 40); do pid_alive "/tmp/slurm/$d.pid" "$d" || break; sleep 0.25; done
        fi
    done
fi

if ! pid_alive /tmp/slurm/slurmctld.pid slurmctld; then
    log "starting slurmctld"
    /usr/sbin/slurmctld -f "$conf" || die "slurmctld failed to start"
fi
for _ in $(seq 1 40); do timeout 5 scontrol ping >/dev/null 2>&1 && break; sleep 0.5; done
timeout 5 scontrol ping >/dev/null 2>&1 || die "slurmctld does not answer 'scontrol ping'"

if ! pid_alive /tmp/slurm/slurmd.pid slurmd; then
    log "starting slurmd"
    /usr/sbin/slurmd -f "$conf" || die "slurmd failed to start"
fi

# ------------------------------------------------------- wait for the node
deadline=$((SECONDS + wait_s))
resumed=0
while :; do
    st=$(node_state)
    case "$st" in
        idle|idle\*|mix|mixed|alloc|allocated) break ;;
        down*|drain*|drng*|fail*)
            if [ "$resumed" -eq 0 ]; then
                log "node $host is '$st'; resuming it"
                scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
                resumed=1
            fi
            ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
        timeout 5 sinfo -N -l >&2 || true
        die "node $host did not become idle within ${wait_s}s (state '${st:-unknown}')"
    fi
    sleep 1
done
log "node $host is $(node_state)"

# ------------------------------------------------------------- smoke test
srun_ok || die "'srun -N1 -n2 -O hostname' did not work"
log "Slurm is up: srun -N1 -n2 -O hostname works"
exit 0
