#!/usr/bin/env bash
# Every function declared in include/mpi.h links against libweft, and a routine declared but not
# supported yet fails with MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN (singleton run).
#   check_link_all.sh SOURCE_DIR BUILD_DIR [--skip-missing] [NAME...]
# NAMEs (MPI_X, PMPI_X or X; also taken from $WEFT_LINK_ALL_SKIP, space-separated) are left out
# of the link: for routines declared ahead of their implementation. Both MPI_X and PMPI_X go.
# --skip-missing leaves out every declared function libweft does not define (listed first), so
# that the run-time check can go ahead while declarations run ahead of the code.
set -euo pipefail
src=$1
build=$2
shift 2
skip_missing=no
if [ "${1:-}" = --skip-missing ]; then skip_missing=yes; shift; fi
skip="$* ${WEFT_LINK_ALL_SKIP:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The committed link_all.c and unsupported.cpp must match include/mpi.h.
if command -v python3 >/dev/null 2>&1; then
  python3 "$src/tools/gen_unsupported.py" --check
fi

# Which declared functions does libweft not define? (informational; the link below decides)
lib="$build/lib/libweft.so"
[ -e "$lib" ] || lib=$(find "$build" -name 'libweft.so' | head -n 1)
sed -n 's/^    REF(\([A-Za-z0-9_]*\))$/\1/p' "$src/tests/tools/link_all.c" | sort > "$work/declared"
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u > "$work/defined"
comm -23 "$work/declared" "$work/defined" > "$work/missing"
if [ -s "$work/missing" ]; then
  echo "declared in mpi.h but not defined by libweft ($(wc -l < "$work/missing")):"
  sed 's/^/  /' "$work/missing"
  [ "$skip_missing" = no ] || skip="$skip $(sed 's/^P\{0,1\}MPI_//' "$work/missing" | sort -u | tr '\n' ' ')"
fi

# Leave out the skipped names.
cp "$src/tests/tools/link_all.c" "$work/link_all.c"
nskip=0
for name in $skip; do
  base=${name#PMPI_}
  base=${base#MPI_}
  sed -i -e "/^    REF(MPI_${base})$/d" -e "/^    REF(PMPI_${base})$/d" "$work/link_all.c"
  nskip=$((nskip + 1))
done
[ "$nskip" -eq 0 ] || echo "skipping $nskip names: $skip"

"$build/bin/mpicc" -O1 -Wall "$work/link_all.c" -o "$work/link_all"
echo "ok: link_all.c links against libweft"
"$work/link_all"
