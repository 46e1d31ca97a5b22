#!/usr/bin/env bash
# MPI_Init on ranks that disagree: every rank must fail with one message naming the difference.
#   init_mismatch.sh setting|build NP PROGRAM
# setting: rank 1 runs with WEFT_SHM_CELLS=8 (the others with the default, 16).
# build:   rank 1 loads a copy of libweft whose ELF build id differs by one byte.
set -uo pipefail
mode=$1
np=$2
prog=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

wrapper=$work/rank_wrapper.sh
case "$mode" in
  setting)
    expect="WEFT_SHM_CELLS: 16 on ranks 0, 2-$((np - 1)); 8 on rank 1"
    [ "$np" -eq 2 ] && expect="WEFT_SHM_CELLS: 16 on rank 0; 8 on rank 1"
    cat > "$wrapper" <<W
#!/usr/bin/env bash
[ "\${PMIX_RANK:-}" = 1 ] && export WEFT_SHM_CELLS=8
exec "\$@"
W
    ;;
  build)
    lib=$(ldd "$prog" | awk '/libweft\.so/ {print $3; exit}')
    [ -n "$lib" ] || { echo "FAIL: $prog does not load libweft"; exit 1; }
    lib=$(readlink -f "$lib")
    id=$(readelf -n "$lib" | awk '/Build ID:/ {print $3; exit}')
    [ -n "$id" ] || { echo "SKIP: $lib carries no build id"; exit 0; }
    copy=$work/$(basename "$lib")
    python3 - "$lib" "$copy" "$id" <<'PY'
import sys
src, dst, build_id = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
data = bytearray(open(src, "rb").read())
at = data.find(build_id)
assert at >= 0 and data.find(build_id, at + 1) < 0, "build id not found exactly once"
data[at + len(build_id) - 1] ^= 0xff
open(dst, "wb").write(data)
PY
    other=${id:0:${#id}-2}$(printf '%02x' $(( 0x${id: -2} ^ 0xff )))
    expect="build $other on rank 1"
    # A sanitizer build: its runtime must come first in the list of libraries.
    preload=$copy
    asan=$(ldd "$prog" | awk '/libasan\.so/ {print $3; exit}')
    [ -n "$asan" ] && preload="$asan:$copy"
    cat > "$wrapper" <<W
#!/usr/bin/env bash
[ "\${PMIX_RANK:-}" = 1 ] && export LD_PRELOAD=$preload
exec "\$@"
W
    ;;
  *) echo "usage: $0 setting|build NP PROGRAM"; exit 2 ;;
esac
chmod +x "$wrapper"

out=$("$here/../launch.sh" "$np" "$wrapper" "$prog" 2>&1)
rc=$?
echo "$out"
echo "init_mismatch.sh: launcher exit status $rc"
status=0
if grep -q "FAIL" <<< "$out"; then echo "init_mismatch.sh: a rank got past MPI_Init"; status=1; fi
[ $rc -ne 0 ] || { echo "init_mismatch.sh: the job exited 0"; status=1; }
for ((r = 0; r < np; ++r)); do
  line=$(grep -F "weft: rank $r: MPI_Init failed: the ranks of this job disagree" <<< "$out" | head -1)
  if [ -z "$line" ]; then echo "init_mismatch.sh: rank $r printed no disagreement"; status=1; continue; fi
  grep -qF "$expect" <<< "$line" || { echo "init_mismatch.sh: rank $r's message lacks '$expect'"; status=1; }
done
[ $status -eq 0 ] && echo "PASS every rank failed MPI_Init naming the difference"
exit $status
