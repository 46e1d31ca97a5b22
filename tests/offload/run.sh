#!/usr/bin/env bash
# Runs a multi-rank offload test beside a weft-aggd of its own.
#
#   tests/offload/run.sh NP PROGRAM [ARGS...]
#
# Environment:
#   OFFLOAD_DAEMON       weft-aggd to start on a UNIX socket in a fresh directory (empty: none),
#                        with a key file of its own there, which the ranks are given
#                        (WEFT_AGGD_KEY_FILE)
#   OFFLOAD_JOB_KEY      a job name: the ranks are given a job key for it (weft-aggd
#                        --print-job-key) instead of the daemon's key
#   OFFLOAD_DAEMON_ARGS  extra daemon options (e.g. "--fragment-bytes 16384 --window 4")
#   OFFLOAD_PLUGIN       the plugin the ranks load (WEFT_OFFLOAD_PLUGIN)
#   OFFLOAD_EXPECT       an extended regex the ranks' output must match (e.g. an INFO line)
#   OFFLOAD_EXPECT_COUNT that many output lines must match OFFLOAD_EXPECT (default: at least 1)
#   OFFLOAD_KILL_DAEMON  1: SIGKILL the daemon once NP lines say "running" (the program's cue)
#   OFFLOAD_EXPECT_OPS   N: the daemon must report exactly N operations when stopped
# The program runs through tests/launch.sh with WEFT_DEBUG=INFO for the offload subsystem.
set -u
np=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/weft_offload.XXXXXX)
daemon_pid=
cleanup() {
    [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "offload/run.sh: FAIL: $*" >&2
    echo "---- ranks' output" >&2; cat "$dir/out" >&2 2>/dev/null
    echo "---- daemon's output" >&2; cat "$dir/daemon.log" >&2 2>/dev/null
    exit 1
}

if [ -n "${OFFLOAD_DAEMON:-}" ]; then
    # shellcheck disable=SC2086
    "$OFFLOAD_DAEMON" --listen "unix:$dir/aggd.sock" --key-file "$dir/aggd.key" ${OFFLOAD_DAEMON_ARGS:-} \
        2>"$dir/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do
        grep -q "listening" "$dir/daemon.log" 2>/dev/null && break
        sleep 0.1
    done
    grep -q "listening" "$dir/daemon.log" || fail "weft-aggd did not start"
    export WEFT_AGGD_ADDRESS="unix:$dir/aggd.sock" WEFT_AGGD_KEY_FILE="$dir/aggd.key"
    if [ -n "${OFFLOAD_JOB_KEY:-}" ]; then
        (umask 077 && "$OFFLOAD_DAEMON" --key-file "$dir/aggd.key" --print-job-key "$OFFLOAD_JOB_KEY" >"$dir/job.key") ||
            fail "weft-aggd --print-job-key failed"
        export WEFT_AGGD_KEY_FILE="$dir/job.key"
    fi
fi
export WEFT_OFFLOAD_PLUGIN="${OFFLOAD_PLUGIN:-}"
export WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=offload TMPDIR="$dir"

"$here/../launch.sh" "$np" "$@" >"$dir/out" 2>&1 &
job=$!
if [ "${OFFLOAD_KILL_DAEMON:-0}" = 1 ]; then
    for _ in $(seq 600); do
        [ "$(grep -c ": running" "$dir/out")" -ge "$np" ] && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$daemon_pid" 2>/dev/null
    wait "$daemon_pid" 2>/dev/null
    daemon_pid=
    echo "offload/run.sh: weft-aggd killed while the ranks were running" >>"$dir/out"
fi
wait "$job"
rc=$?
[ "$rc" -eq 0 ] || fail "the job exited with $rc"
if [ -n "${OFFLOAD_EXPECT:-}" ]; then
    seen=$(grep -Ec "$OFFLOAD_EXPECT" "$dir/out")
    want=${OFFLOAD_EXPECT_COUNT:-1}
    [ "$seen" -ge "$want" ] || fail "$seen output lines match '$OFFLOAD_EXPECT', expected $want"
fi
if [ -n "$daemon_pid" ]; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid"
    drc=$?
    daemon_pid=
    [ "$drc" -eq 0 ] || fail "weft-aggd exited with $drc"
    if [ -n "${OFFLOAD_EXPECT_OPS:-}" ]; then
        ops=$(sed -n 's/.* \([0-9][0-9]*\) operations.*/\1/p' "$dir/daemon.log" | tail -1)
        [ "$ops" = "$OFFLOAD_EXPECT_OPS" ] || fail "the daemon reports ${ops:-no} operations, expected $OFFLOAD_EXPECT_OPS"
    fi
fi
grep -E "values checked|refused as required|error seen" "$dir/out"
[ -n "${OFFLOAD_DAEMON:-}" ] && tail -n 1 "$dir/daemon.log"
grep -E "weft INFO offload" "$dir/out" | sed 's/^\[[^]]*\] //' | sort | uniq -c | head -5
exit 0
