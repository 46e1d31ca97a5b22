#!/usr/bin/env bash
# Stop the single-node Slurm started by scripts/start-slurm.sh (slurmd,
# slurmctld, and munged), using their pid files. Idempotent.
#   WEFT_SLURM_KEEP_MUNGE=1   leave munged running
set -uo pipefail

log() { echo "stop-slurm: $*" >&2; }

stop_pidfile() {
    local pf=$1 name=$2 pid
    if [ ! -s "$pf" ]; then log "$name: no pid file ($pf)"; return 0; fi
    pid=$(cat "$pf")
    if [ -z "$pid" ] || [ ! -d "/proc/$pid" ] || ! grep -q "$name" "/proc/$pid/comm" 2>/dev/null; then
        log "$name: not running (stale pid file)"
        rm -f "$pf"
        return 0
    fi
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do [ -d "/proc/$pid" ] || break; sleep 0.25; done
    if [ -d "/proc/$pid" ]; then
        log "$name (pid $pid) did not exit; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pf"
}

stop_pidfile /tmp/slurm/slurmd.pid slurmd
stop_pidfile /tmp/slurm/slurmctld.pid slurmctld
if [ "${WEFT_SLURM_KEEP_MUNGE:-0}" != 1 ]; then
    stop_pidfile /run/munge/munged.pid munged
fi
exit 0
