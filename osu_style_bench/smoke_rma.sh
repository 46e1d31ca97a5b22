#!/usr/bin/env bash
# Smoke test of one OSU-style program: it runs on 2 ranks, exits 0 (its data checks passed) and
# prints one "size value" row for each expected size.
#   smoke_rma.sh LAUNCH_SH "SIZE..." PROGRAM [ARGS...]
set -uo pipefail
launch=$1
sizes=$2
shift 2
out=$("$launch" 2 "$@" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
    echo "FAIL: exit status $rc"
    exit 1
fi
fail=0
for s in $sizes; do
    # A here-string, not a pipe: grep -q leaves at the first match, and under pipefail the
    # writer's SIGPIPE would read as "no row".
    if ! grep -Eq "^$s +[0-9]+\.[0-9]+\$" <<< "$out"; then
        echo "FAIL: no row for size $s"
        fail=1
    fi
done
exit $fail
