#!/usr/bin/env bash
# Checks two rules of the source tree; prints file:line and the offending line of each breach and
# exits 1 if there is one.
#  1. Layers: a library file includes headers of its own folder and of the layers below it only
#     (docs/ARCHITECTURE.md, the target_link_libraries of each folder's CMakeLists.txt).
#     include/ is the public API: every layer may include it.
#  2. Settings: WEFT_* environment variables are read through the registry (runtime/config.cpp)
#     only: no getenv/secure_getenv of a WEFT_* name anywhere else.
# Usage: scripts/check_layers.sh [source root]   (default: the checkout this script is in)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
exec python3 - "$root" <<'PY'
import os
import re
import sys

root = sys.argv[1]

# The layer order, written once: each unit and the units it stands on directly (the transitive
# closure is what it may include). A unit is a folder; the longest matching folder names a file's
# unit. pmix and topo share a floor above runtime and neither uses the other (each links
# weft_core only); coll and rma stand above pt2pt, and rma may use coll but coll never uses rma;
# rma/kv, the KV engine, runs without an MPI job and stands on runtime alone.
USES = {
    "runtime": [],
    "pmix": ["runtime"],
    "topo": ["runtime"],
    "pt2pt": ["pmix", "topo"],
    "coll": ["pt2pt"],
    "rma": ["coll"],
    "rma/kv": ["runtime"],
    "mpi": ["rma", "rma/kv"],
}
PUBLIC = "include"  # the public headers: allowed everywhere

# Rule 2 covers these folders besides the library's. tools/ is included: weft_info reads the
# registry, the aggd offload plugin gets its settings from it through weft_offload_node_info, and
# the aggd daemon takes its own from its command line. (The mpicc/mpicxx wrappers, shell scripts,
# read WEFT_CC/WEFT_CXX themselves; those are registered for the documentation.) tests/, bench/
# and osu_style_bench/ drive the library from outside and set or read the variables themselves.
SETTINGS_EXTRA = ["tools"]
REGISTRY = "runtime/config.cpp"

SOURCE = (".c", ".cpp", ".h", ".cu", ".cuh", ".hpp")


def allowed_units(unit):
    seen, stack = set(), [unit]
    while stack:
        for below in USES[stack.pop()]:
            if below not in seen:
                seen.add(below)
                stack.append(below)
    return seen | {unit}


ALLOWED = {u: allowed_units(u) for u in USES}
UNITS_LONGEST_FIRST = sorted(USES, key=len, reverse=True)


def unit_of(relpath):
    for u in UNITS_LONGEST_FIRST:
        if relpath == u or relpath.startswith(u + "/"):
            return u
    return None


def sources(folder):
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for f in sorted(files):
            if f.endswith(SOURCE):
                yield os.path.relpath(os.path.join(dirpath, f), root)


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def resolve(including, quote, name):
    """The repository path an include names, or None for a header outside the tree."""
    bases = [os.path.dirname(including)] if quote == '"' else []
    bases += ["", PUBLIC]
    for base in bases:
        candidate = os.path.normpath(os.path.join(base, name))
        if not candidate.startswith("..") and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


failures = []
for folder in USES:
    if "/" in folder:
        continue  # walked with its parent folder
    for path in sources(folder):
        unit = unit_of(path)
        with open(os.path.join(root, path), errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(path, m.group(1), m.group(2))
                if target is None or target.startswith(PUBLIC + "/"):
                    continue
                target_unit = unit_of(target)
                if target_unit is None or target_unit in ALLOWED[unit]:
                    continue
                failures.append(f"{path}:{lineno}: {line.strip()}  "
                                f"({unit} may not include {target_unit})")

# A call of getenv, secure_getenv or std::getenv with a literal WEFT_ name, or of a helper whose
# name says it reads the environment (env_flag("WEFT_X")); and getenv of a computed name, which is
# how such a helper reads (other variables, PMIX_RANK or HOME, are named literally).
GETENV = re.compile(r'\b(?:std::)?(?:secure_)?getenv\s*\(\s*(?:"WEFT_|[^"\s)])'
                    r'|\b\w*env\w*\s*\(\s*"WEFT_')
for folder in [u for u in USES if "/" not in u] + SETTINGS_EXTRA:
    for path in sources(folder):
        if path == REGISTRY:
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                code = line.split("//", 1)[0]
                if GETENV.search(code):
                    failures.append(f"{path}:{lineno}: {line.strip()}  "
                                    f"(WEFT_* variables are read through {REGISTRY})")

for failure in failures:
    print(failure)
if failures:
    print(f"check_layers: {len(failures)} violation(s)", file=sys.stderr)
    sys.exit(1)
print("check_layers: layers and settings ok")
PY
