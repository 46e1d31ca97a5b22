#!/usr/bin/env bash
# ABI test driver: run an MPICH-built binary against weft's libmpich.so.12.
#
#   run_abi.sh LIBDIR NP BINARY [ARGS...]
#
#  1. readelf -d BINARY must NEED libmpich.so.12 (or libmpi.so.12);
#  2. with LD_LIBRARY_PATH=LIBDIR, ldd must resolve that library into
#     LIBDIR (weft's copy), not the system MPICH;
#  3. run BINARY through tests/launch.sh NP with that LD_LIBRARY_PATH.
# WEFT_ABI_CHECK_ONLY=1 stops after step 2.
set -u

if [ $# -lt 3 ]; then
    echo "usage: $0 LIBDIR NP BINARY [ARGS...]" >&2
    exit 2
fi
libdir=$1 np=$2 bin=$3
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "run_abi: FAIL: $*" >&2; exit 1; }

[ -d "$libdir" ] || fail "library directory '$libdir' does not exist"
libdir=$(cd "$libdir" && pwd -P)
[ -x "$bin" ] || fail "binary '$bin' not found or not executable"
command -v readelf >/dev/null || fail "readelf not found"
command -v ldd >/dev/null || fail "ldd not found"

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
lib=
for cand in libmpich.so.12 libmpi.so.12; do
    if printf '%s\n' "$needed" | grep -qx "$cand"; then lib=$cand; break; fi
done
[ -n "$lib" ] || fail "$bin does not NEED libmpich.so.12 or libmpi.so.12 (NEEDED: $(echo $needed))"
echo "run_abi: $bin NEEDs $lib" >&2

export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
resolved=$(ldd "$bin" 2>&1 | awk -v l="$lib" '$1 == l { print $3 }')
[ -n "$resolved" ] || fail "ldd does not list $lib for $bin"
[ "$resolved" != "not" ] || fail "$lib is not found with LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
case "$(readlink -f "$(dirname "$resolved")")/" in
    "$libdir"/) ;;
    *) fail "$lib resolves to $resolved, not into $libdir (weft's copy)" ;;
esac
echo "run_abi: $lib resolves to $resolved -> $(readlink -f "$resolved")" >&2
[ "${WEFT_ABI_CHECK_ONLY:-0}" = 1 ] && exit 0

exec "$here/../launch.sh" "$np" "$bin" "$@"
