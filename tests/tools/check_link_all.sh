#!/usr/bin/env bash
# Every function declared in include/mpi.h links against libweft, and a routine declared but not
# supported yet fails with MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN (singleton run).
#   check_link_all.sh SOURCE_DIR BUILD_DIR [--skip-missing] [NAME...]
# NAMEs (MPI_X, PMPI_X, MPIX_X, PMPIX_X or X; also taken from $WEFT_LINK_ALL_SKIP, space-separated)
# are left out of the link: for routines declared ahead of their implementation. Both the MPI
# and the PMPI name go.
# --skip-missing leaves out every declared function libweft does not define (listed first), so
# that the run-time check can go ahead while declarations run ahead of the code.
# The program, link_all.c, is written here: the names come from include/weft/mpi_functions.h
# (the list mpi.h declares its routines from) through the preprocessor, so it cannot go stale.
set -euo pipefail
src=$1
build=$2
shift 2
skip_missing=no
if [ "${1:-}" = --skip-missing ]; then skip_missing=yes; shift; fi
skip="$* ${WEFT_LINK_ALL_SKIP:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The committed unsupported.cpp must match the list.
if command -v python3 >/dev/null 2>&1; then
  python3 "$src/tools/gen_unsupported.py" --check
fi

# Every name mpi.h declares: the list expanded to bare names, and MPIR_Dup_fn (the predefined
# attribute callback, declared outside the list).
cat > "$work/names.c" <<'C'
#define WEFT_MPI_FUNCTION(ret, name, params) MPI_##name PMPI_##name
#define WEFT_MPIX_FUNCTION(ret, name, params) MPIX_##name PMPIX_##name
#define WEFT_MPIX_FUNCTION_NO_PMPI(ret, name, params) MPIX_##name
#include <weft/mpi_functions.h>
MPIR_Dup_fn
C
"$build/bin/mpicc" -E -P "$work/names.c" | tr -s ' \t' '\n\n' | sed '/^$/d' > "$work/names"
if grep -qv '^\(P\{0,1\}MPIX\{0,1\}\|MPIR\)_[A-Za-z0-9_]*$' "$work/names" ||
   [ "$(sort "$work/names" | uniq -d)" ]; then
  echo "FAIL: include/weft/mpi_functions.h did not expand to a list of distinct names:"
  sort "$work/names" | uniq -c | awk '$1 > 1 || $2 !~ /^(P?MPIX?|MPIR)_[A-Za-z0-9_]*$/' | head
  exit 1
fi

# Which declared functions does libweft not define? (informational; the link below decides)
lib="$build/lib/libweft.so"
[ -e "$lib" ] || lib=$(find "$build" -name 'libweft.so' | head -n 1)
sort "$work/names" > "$work/declared"
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u > "$work/defined"
comm -23 "$work/declared" "$work/defined" > "$work/missing"
if [ -s "$work/missing" ]; then
  echo "declared in mpi.h but not defined by libweft ($(wc -l < "$work/missing")):"
  sed 's/^/  /' "$work/missing"
  [ "$skip_missing" = no ] || skip="$skip $(tr '\n' ' ' < "$work/missing")"
fi

# Leave out the skipped names.
nskip=0
for name in $skip; do
  case $name in
    PMPI*) base=${name#P} ;;
    MPI*) base=$name ;;
    *) base=MPI_$name ;;
  esac
  sed -i -e "/^${base}$/d" -e "/^P${base}$/d" "$work/names"
  nskip=$((nskip + 1))
done
[ "$nskip" -eq 0 ] || echo "skipping $nskip names: $skip"

{
  cat <<'C'
/* Written by tests/tools/check_link_all.sh from include/weft/mpi_functions.h.
 * Takes the address of every function declared in mpi.h, so that linking this program
 * proves libweft defines them all; then checks, as a singleton, that a routine weft does
 * not support yet fails with MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

extern const char *const weft_unsupported_functions[];

typedef void (*weft_fn)(void);
#define REF(f) (weft_fn)f,

weft_fn const weft_link_all[] = {
C
  sed 's/.*/    REF(&)/' "$work/names"
  cat <<'C'
};

int main(int argc, char **argv) {
  int fail = 0, n = 0, rc, cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  const char *probe = "MPI_Comm_spawn";
  MPI_Comm inter = MPI_COMM_NULL;
  for (size_t i = 0; i < sizeof(weft_link_all) / sizeof(weft_link_all[0]); ++i)
    if (!weft_link_all[i]) { printf("FAIL: null address at %zu\n", i); fail = 1; }
  MPI_Init(&argc, &argv);
  for (n = 0; weft_unsupported_functions[n]; ++n) {}
  printf("%zu functions referenced; %d declared but not supported yet\n",
         sizeof(weft_link_all) / sizeof(weft_link_all[0]), n);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  rc = MPI_Pcontrol(1);
  if (rc != MPI_SUCCESS) { printf("FAIL: MPI_Pcontrol returned %d\n", rc); fail = 1; }
  int listed = 0;
  for (int i = 0; i < n; ++i) listed |= !strcmp(weft_unsupported_functions[i], probe);
  if (listed) {
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                        MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    if (cls != MPI_ERR_UNSUPPORTED_OPERATION || !strstr(msg, probe) ||
        !strstr(msg, "not supported yet")) {
      printf("FAIL: %s returned class %d, message '%s'\n", probe, cls, msg);
      fail = 1;
    } else {
      printf("ok: %s -> MPI_ERR_UNSUPPORTED_OPERATION: %s\n", probe, msg);
    }
  } else {
    printf("skip: %s is supported now; no unsupported-call check\n", probe);
  }
  MPI_Finalize();
  return fail;
}
C
} > "$work/link_all.c"

"$build/bin/mpicc" -O1 -Wall "$work/link_all.c" -o "$work/link_all"
echo "ok: link_all.c links against libweft"
"$work/link_all"
