#!/usr/bin/env python3
"""Generates the "declared but not supported yet" MPI bindings.

weft declares in include/mpi.h more routines than it implements, so that common MPI programs
and benchmark suites compile and link. This script writes:

  mpi/unsupported.cpp  for every name in UNSUPPORTED: PMPI_X, which fails with
                               MPI_ERR_UNSUPPORTED_OPERATION through the library's error path
                               (the errhandler of the call's communicator argument, else of
                               MPI_COMM_WORLD), the weak alias MPI_X, and the table
                               weft_unsupported_functions[] that `weft_info --unsupported`
                               prints. MPI_Pcontrol is defined there too, as the no-op it is.

Prototypes are read from include/weft/mpi_functions.h, the list from which mpi.h declares every
MPI_X and PMPI_X, after the C preprocessor ($CC, else cc) has expanded the pieces the list shares
(parameter lists, routine families); only the names of the unsupported routines live here. When a routine gets a
real implementation, delete its name from UNSUPPORTED and run the script again. The output is
committed: the build does not need Python. (tests/tools/check_link_all.sh builds its link test
from the same list at test time.)

  tools/gen_unsupported.py                 regenerate mpi/unsupported.cpp
  tools/gen_unsupported.py --check         exit 1 if the committed output is out of date
  tools/gen_unsupported.py --check-mpich [PROTO_H]
                                           compare every prototype mpi.h declares with MPICH's
                                           (parameter types only; default: Debian's
                                           mpich/mpi_proto.h; mpich/mpio.h for MPI-IO's)

Python 3 standard library and a C preprocessor only.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "include", "weft", "mpi_functions.h")
OUT_CPP = os.path.join(ROOT, "mpi", "unsupported.cpp")
MPICH_PROTO = "/usr/include/x86_64-linux-gnu/mpich/mpi_proto.h"

# Declared in mpi.h, not implemented yet (without the MPI_ prefix), by topic.
UNSUPPORTED = """
    Comm_spawn
    Open_port Close_port Comm_accept Comm_connect
    Register_datarep Register_datarep_c
""".split()

# Defined in unsupported.cpp but implemented (as a no-op), so not in the unsupported table.
NO_OPS = {"Pcontrol": "MPI_SUCCESS"}

DETAIL = "not supported yet (declared so that programs link; see weft_info --unsupported)"


# Which names each macro of the list declares, by prefix.
MACROS = {
    "WEFT_MPI_FUNCTION": ("MPI_", "PMPI_"),
    "WEFT_MPIX_FUNCTION": ("MPIX_", "PMPIX_"),
    "WEFT_MPIX_FUNCTION_NO_PMPI": ("MPIX_",),
}


def expand_list(path):
    """The list with its own macros expanded by the C preprocessor; each entry macro is defined as
    itself, so that it stays in place (a macro is not expanded again inside its own expansion)."""
    prelude = "".join(f"#define {m}(ret, name, params) {m}(ret, name, params)\n" for m in MACROS)
    cc = os.environ.get("CC") or "cc"
    try:
        # -I: the list includes its large-count part (mpi_functions_large.h) from its folder.
        r = subprocess.run([cc, "-E", "-P", "-x", "c", "-I", os.path.dirname(path), "-"],
                           input=prelude + open(path).read(),
                           capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"gen_unsupported: cannot run the C preprocessor ({cc}): {e}")
    if r.returncode != 0:
        sys.exit(f"gen_unsupported: the C preprocessor ({cc}) failed on {path}:\n{r.stderr}")
    return r.stdout


def parse_list(text):
    """Returns [(name, return type, [parameter text])] for each routine that mpi.h declares from
    the list (MPI_X then PMPI_X), in list order."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    entry = re.compile(r"\b(WEFT_[A-Z_]+)\(\s*(int|double|MPI_Aint|MPI_Fint|MPI_File)\s*,\s*([A-Za-z0-9_]+)\s*,"
                       r"\s*\(([^;{}()]*)\)\s*\)")
    out, seen, pos = [], set(), 0
    for m in entry.finditer(text):
        # Anything between entries but white space is a line this parser does not understand.
        if text[pos:m.start()].strip() or m.group(1) not in MACROS:
            sys.exit("gen_unsupported: cannot parse include/weft/mpi_functions.h near: " +
                     " ".join((text[pos:m.start()].strip() or m.group(0)).split())[:80])
        pos = m.end()
        params = [" ".join(p.split()) for p in m.group(4).split(",")]
        for prefix in MACROS[m.group(1)]:
            name = prefix + m.group(3)
            if name in seen:
                sys.exit(f"gen_unsupported: {name} is listed twice in include/weft/mpi_functions.h")
            seen.add(name)
            out.append((name, m.group(2), params))
    if text[pos:].strip():
        sys.exit("gen_unsupported: cannot parse include/weft/mpi_functions.h near: " +
                 " ".join(text[pos:].split())[:80])
    return out


def split_param(p):
    """'const int array_of_x[]' -> ('const int', 'array_of_x', '[]')."""
    if p in ("void", "..."):
        return p, "", ""
    arr = ""
    m = re.match(r"^(.*?)\s*(\[\s*\])$", p)
    if m:
        p, arr = m.group(1), "[]"
    m = re.match(r"^(.*?[\s\*])\s*([A-Za-z_][A-Za-z0-9_]*)$", p)
    if not m:
        return p, "", arr
    return re.sub(r"\s*\*", "*", m.group(1).strip()), m.group(2), arr


def type_only(p):
    t, _, arr = split_param(p)
    if t in ("void", "..."):
        return t
    t = re.sub(r"\s*\*\s*", "*", t)
    return t + arr


def wrap_signature(head, args, tail, width=100):
    """Lays out 'head arg, arg, ... tail' over lines of at most width columns."""
    lines, cur = [], head
    for i, a in enumerate(args):
        tok = a + ("," if i < len(args) - 1 else tail)
        sep = "" if cur.endswith("(") or not cur.strip() else " "
        if len(cur + sep + tok) > width and cur.strip() and not cur.endswith("("):
            lines.append(cur)
            cur = "    " + tok
        else:
            cur += sep + tok
    if not args:
        cur += tail
    lines.append(cur)
    return lines


def is_file_routine(name):
    """MPI-IO's routines, whose errors go to the files' default handler."""
    return name.startswith("File_") or name.startswith("Register_datarep")


def gen_cpp(decls):
    by_name = {n: (r, p) for n, r, p in decls}
    missing = [n for n in UNSUPPORTED + list(NO_OPS)
               if "MPI_" + n not in by_name or "PMPI_" + n not in by_name]
    if missing:
        sys.exit("gen_unsupported: not listed (MPI_ and PMPI_) in include/weft/mpi_functions.h: " +
                 ", ".join(missing))
    dup = {n for n in UNSUPPORTED if UNSUPPORTED.count(n) > 1}
    if dup:
        sys.exit("gen_unsupported: listed twice: " + ", ".join(sorted(dup)))

    lines = [
        "// Generated by tools/gen_unsupported.py from include/mpi.h; edit the script, not this file.",
        "// MPI routines that are declared so that programs link but are not implemented yet: each",
        "// fails with MPI_ERR_UNSUPPORTED_OPERATION through the usual error path.",
        '#include "state.h"',
        "",
        "using namespace weft::mpi;",
        "",
        "namespace {",
        "",
        f'constexpr const char* kDetail = "{DETAIL}";',
        "",
        "int unsupported(MPI_Comm comm, const char* fn) {",
        '  return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kDetail);',
        "}",
        "",
        "// Files: no file can be opened, so the error goes to MPI's default file error handler,",
        "// MPI_ERRORS_RETURN (as for MPI_FILE_NULL), whatever the call's communicator has; logged as a",
        "// warning so that a program ignoring the code does not lose its output unseen.",
        "int unsupported(MPI_File, const char* fn) {",
        '  WEFT_WARN(weft::Subsys::core, "%s: %s", fn, kDetail);',
        '  return raise_on(MPI_ERRORS_RETURN, 0, "MPI_FILE_NULL", MPI_ERR_UNSUPPORTED_OPERATION, fn, kDetail);',
        "}",
        "",
        "}  // namespace",
        "",
        "// Each routine: X(name, the communicator its error is raised on, or MPI_FILE_NULL for the",
        "// files' default handler, parameters).",
        "#define WEFT_UNSUPPORTED_ROUTINES(X) \\",
    ]
    for n in UNSUPPORTED:
        ret, params = by_name["MPI_" + n]
        comm = None
        args = []
        for p in params:
            t, pname, arr = split_param(p)
            if comm is None and t == "MPI_Comm" and not arr and not is_file_routine(n):
                comm = pname
                args.append(f"MPI_Comm {pname}")
            else:
                args.append(type_only(p))
        if ret != "int":
            sys.exit(f"gen_unsupported: MPI_{n} does not return int")
        target = "MPI_FILE_NULL" if is_file_routine(n) else comm or "MPI_COMM_NULL"
        lines += [l + " \\" for l in wrap_signature(f"  X({n}, {target}, (", args, "))", 98)]
    lines += [
        "",
        "#define WEFT_DEFINE_UNSUPPORTED(name, err_comm, params) \\",
        "  int PMPI_##name params {                               \\",
        "    WEFT_ENTRY;                                          \\",
        '    WEFT_REQUIRE_INIT("MPI_" #name);                     \\',
        '    return unsupported(err_comm, "MPI_" #name);          \\',
        "  }                                                      \\",
        "  WEFT_PMPI_ALIAS(name)",
        '#define WEFT_NAME_OF_UNSUPPORTED(name, err_comm, params) "MPI_" #name,',
        "",
        "// Names of the routines below that are not supported yet (for weft_info), nullptr-terminated.",
        'extern "C" __attribute__((visibility("default"))) const char* const weft_unsupported_functions[];',
        "",
        'extern "C" {',
        "",
        "WEFT_UNSUPPORTED_ROUTINES(WEFT_DEFINE_UNSUPPORTED)",
        "",
    ]
    for n, value in NO_OPS.items():
        ret, params = by_name["MPI_" + n]
        lines.append(f"// A no-op by definition (no profiling layer is built in).")
        lines.append(f"int PMPI_{n}({', '.join(type_only(p) for p in params)}) {{ return {value}; }}")
        lines.append(f"WEFT_PMPI_ALIAS({n})")
        lines.append("")
    lines.append("const char* const weft_unsupported_functions[] = {"
                 "WEFT_UNSUPPORTED_ROUTINES(WEFT_NAME_OF_UNSUPPORTED) nullptr};")
    lines.append("")
    lines.append('}  // extern "C"')
    return "\n".join(lines) + "\n"


def check_mpich(decls, proto):
    text = open(proto).read()
    text = re.sub(r"MPICH_ATTR_[A-Z_]+\([^)]*\)|MPICH_API_PUBLIC|ROMIO_API_PUBLIC", " ", text)
    text = re.sub(r"\bMPIO_Request\b", "MPI_Request", text)  # ROMIO's name of MPI_Request
    ref = {n: (r, [type_only(p) for p in ps]) for n, r, ps in
           ((n, r, ps) for n, r, ps in parse_loose(text))}
    bad = 0
    for n, r, ps in decls:
        if n not in ref:
            print(f"{n}: not declared by MPICH")
            continue
        # T x[] and T *x are the same parameter type
        mine = [t.replace("[]", "*") for t in (type_only(p) for p in ps)]
        theirs = [t.replace("[]", "*") for t in ref[n][1]]
        if (r, mine) != (ref[n][0], theirs):
            bad += 1
            print(f"{n}: weft ({', '.join(mine)}) -> {r}; MPICH ({', '.join(theirs)}) -> {ref[n][0]}")
    print(f"{len(decls)} prototypes compared with {proto}: {bad} differ")
    return bad == 0


def parse_loose(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    for m in re.finditer(r"(?m)^(int|double|MPI_Aint|MPI_Fint|MPI_File)\s+((?:P?MPIX?|MPIR)_[A-Za-z0-9_]+)\s*"
                         r"\(([^;{()]*)\)\s*;", text):
        yield m.group(2), m.group(1), [" ".join(p.split()) for p in m.group(3).split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the outputs are out of date")
    ap.add_argument("--check-mpich", nargs="?", const=MPICH_PROTO, metavar="PROTO_H",
                    help="compare the prototypes mpi.h declares with MPICH's")
    a = ap.parse_args()
    decls = parse_list(expand_list(LIST))
    if a.check_mpich:
        return 0 if check_mpich(decls, a.check_mpich) else 1
    outputs = {OUT_CPP: gen_cpp(decls)}
    stale = 0
    for path, text in outputs.items():
        old = open(path).read() if os.path.exists(path) else None
        rel = os.path.relpath(path, ROOT)
        if old == text:
            continue
        if a.check:
            print(f"{rel} is out of date: run tools/gen_unsupported.py")
            stale = 1
        else:
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {rel}")
    if not a.check:
        print(f"{len(UNSUPPORTED)} routines declared but not supported yet, "
              f"of {len(decls)} functions in include/weft/mpi_functions.h")
    return stale


if __name__ == "__main__":
    sys.exit(main())
