#!/usr/bin/env python3
"""Builds and runs an MPICH-style conformance suite (a test/mpi tree) against an MPI library.

The suite's sources stay outside this project: point --suite at a test/mpi folder of an MPICH
release. Each directory's testlist (or testlist.in) names a program, its process count and
options; each program is built from the sources its Makefile.am gives (default NAME.c) with the
compiler wrapper under test, linked with the suite's own support code, and run under mpirun with
a time limit (and MPIEXEC_TIMEOUT set to the testlist's timeLimit, where it gives one). A run
passes when the launcher exits 0 and some output line is "No Errors" ("No errors" too, as for
the suite's own runner); the testlist's resultTest option changes that as the suite's own runner
does (TestStatus: a non-zero exit is expected; TestStatusNoErrors: both "No Errors" and a
non-zero exit; TestErrFatal: a non-zero exit). basic/ has no testlist: its programs run at the
counts BASIC_PROGRAMS gives and pass on a zero exit.

Usage:
  scripts/mpich_suite.py --suite /path/to/test/mpi --out /tmp/conf [--mpicc mpicc]
      [--dirs basic,pt2pt,...] [--max-np 8] [--timeout 180] [--jobs 2] [--only REGEX]
      [--enable comm_overlap,...]
      [--mpirun "mpirun --oversubscribe --bind-to none"] [--env K=V ...]

Writes OUT/results.tsv (dir, test, np, arguments, status, seconds, environment) and OUT/logs/*.log, and
prints a per-directory summary. Status is pass, fail, timeout or build.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import time

DEFAULT_DIRS = "basic,pt2pt,coll,comm,group,datatype,rma,topo,attr,info,init,errhan"

# The configure-time answers the suite's support code asks for, for a Linux/glibc system.
CONF_HEADER = """\
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_TYPE_CREATE_STRUCT 1
#define HAVE_MPI2_COMBINERS 1
#define HAVE_MPI_INTEGER16 1
#define HAVE_PTHREAD_BARRIER_INIT 1
#define THREAD_PACKAGE_NAME 2
"""


# basic/: program, processes, arguments.
BASIC_PROGRAMS = [
    ("self", 1, []), ("simple", 2, []), ("sendrecv", 2, []), ("srtest", 2, []),
    ("wtime", 1, []), ("patterns", 2, []),
    ("netpipe", 2, ["-end", "65536", "-reps", "5"]),
    ("adapt", 3, ["-end", "65536", "-reps", "5"]),
]


def makefile_vars(path):
    """Returns the NAME_SOURCES / NAME_CPPFLAGS / NAME_LDADD assignments of a Makefile.am."""
    values = {}
    if not os.path.exists(path):
        return values
    text = open(path, encoding="utf-8", errors="replace").read().replace("\\\n", " ")
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_]+)_(SOURCES|CPPFLAGS|LDADD|CFLAGS)\s*\+?=\s*(.*)$", line)
        if m:
            values.setdefault(m.group(1), {})[m.group(2)] = m.group(3).split()
    return values


def read_testlist(directory, max_np, enabled=()):
    """Yields (name, np, args, env, options) for each runnable entry of a directory's testlist.
    A line under a configure switch (@name@ before it) runs only where that name is enabled."""
    for candidate in ("testlist", "testlist.in"):
        path = os.path.join(directory, candidate)
        if os.path.exists(path):
            break
    else:
        # A directory without a list (basic, which the suite's own runner skips): its programs
        # print no "No Errors", so they pass on a zero exit; the process counts and the short
        # benchmark arguments are ours.
        for name, np, args in BASIC_PROGRAMS:
            if np <= max_np:
                yield name, np, args, [], {"resultTest": "ExitZero"}
        return
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = raw.strip()
        for name in enabled:
            if line.startswith(f"@{name}@"):
                line = line[len(name) + 2:].strip()
        if not line or line.startswith("#") or "@" in line:
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[1].isdigit():
            continue  # a sub-directory entry or a malformed line
        name, np = fields[0], int(fields[1])
        if np > max_np:
            continue
        args, env, options = [], [], {}
        for field in fields[2:]:
            key, _, value = field.partition("=")
            if key == "arg":
                args.append(value)
            elif key == "env":
                env.append(value)
            else:
                options[key] = value
        yield name, np, args, env, options


def run_command(cmd, log, timeout, env=None, cwd=None):
    start = time.time()
    with open(log, "ab") as out:
        try:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                                  env=env, cwd=cwd, start_new_session=True)
            return proc.returncode, time.time() - start
        except subprocess.TimeoutExpired:
            return None, time.time() - start


def defines_main(source):
    """Whether a test source defines main (else it defines run, for util/run_mpitests.c)."""
    try:
        text = open(source, encoding="utf-8", errors="replace").read()
    except OSError:
        return True
    return re.search(r"^\s*int\s+main\s*\(", text, re.M) is not None


class Suite:
    def __init__(self, opts):
        self.opts = opts
        self.root = os.path.abspath(opts.suite)
        self.out = os.path.abspath(opts.out)
        self.support = os.path.join(self.out, "support")
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.support, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        self.run_dir = os.path.join(self.out, "run")
        os.makedirs(self.run_dir, exist_ok=True)
        self.cflags = ["-O1", "-w", "-I" + self.support, "-I" + os.path.join(self.root, "include"),
                       "-I" + os.path.join(self.root, "dtpools", "include")]

    def compile(self, sources, output, extra, log):
        cmd = [self.opts.mpicc] + self.cflags + extra + sources + ["-o", output]
        with open(log, "ab") as out:
            out.write((" ".join(cmd) + "\n").encode())
        rc, _ = run_command(cmd, log, 300)
        return rc == 0

    def build_support(self):
        with open(os.path.join(self.support, "mpitestconf.h"), "w") as f:
            f.write(CONF_HEADER)
        open(os.path.join(self.support, "mtest_mpix.h"), "w").close()
        # dtpools includes "../dtpoolsconf.h", found through -I support as OUT/dtpoolsconf.h.
        with open(os.path.join(self.out, "dtpoolsconf.h"), "w") as f:
            f.write("#define HAVE_STRDUP 1\n#define HAVE_MEMSET 1\n")
        util = os.path.join(self.root, "util")
        dtp = os.path.join(self.root, "dtpools", "src")
        units = [os.path.join(util, n) for n in ("mtest.c", "mtest_common.c")]
        units += sorted(os.path.join(dtp, n) for n in os.listdir(dtp) if n.endswith(".c"))
        self.support_objects = []
        log = os.path.join(self.logs, "support.log")
        for unit in units:
            obj = os.path.join(self.support, os.path.basename(unit)[:-2] + ".o")
            if not self.compile([unit], obj, ["-c"], log):
                sys.exit("building the suite's support code failed; see " + log)
            self.support_objects.append(obj)
        # The thread helpers: threads/ programs link mtest_thread.o (POSIX threads), the others
        # mtest_single.o.
        self.thread_objects = {}
        for kind in ("single", "thread"):
            unit = os.path.join(util, "mtest_%s.c" % kind)
            obj = os.path.join(self.support, "mtest_%s.o" % kind)
            if not self.compile([unit], obj, ["-c"], log):
                sys.exit("building the suite's support code failed; see " + log)
            self.thread_objects[kind] = obj
        # Programs of the newer layout define run(args), not main: util/run_mpitests.c is
        # their main (initialises, calls run with the joined arguments, reports the errors).
        self.run_main_object = os.path.join(self.support, "run_mpitests.o")
        if not self.compile([os.path.join(util, "run_mpitests.c")], self.run_main_object, ["-c"], log):
            sys.exit("building util/run_mpitests.c failed; see " + log)
        self.dtypes_object = os.path.join(self.support, "dtypes.o")
        if not self.compile([os.path.join(util, "dtypes.c")], self.dtypes_object, ["-c"], log):
            sys.exit("building util/dtypes.c failed; see " + log)

    def build_program(self, directory, name):
        """Builds one program; returns (path or None, log)."""
        srcdir = os.path.join(self.root, directory)
        binary = os.path.join(self.out, "bin", directory, name)
        log = os.path.join(self.logs, "%s.%s.build.log" % (directory, name))
        os.makedirs(os.path.dirname(log), exist_ok=True)  # nested directories (threads/pt2pt)
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        if os.path.exists(binary):
            return binary, log
        spec = makefile_vars(os.path.join(srcdir, "Makefile.am")).get(name.replace("-", "_"), {})
        sources = [os.path.join(srcdir, s) for s in spec.get("SOURCES", [name + ".c"])
                   if s.endswith((".c", ".cxx", ".cpp"))]
        flags = [f for f in spec.get("CPPFLAGS", []) if not f.startswith("$")]
        flags += [f for f in spec.get("CFLAGS", []) if not f.startswith("$")]
        libs = []
        for item in spec.get("LDADD", []):
            if item.startswith("-l"):
                libs.append(item)
            elif "libdtypes" in item or item == "$(LDADDDATA)":
                libs.append(self.dtypes_object)
        helpers = [self.thread_objects["thread" if directory.startswith("threads") else "single"]]
        if not any(defines_main(src) for src in sources):
            helpers.append(self.run_main_object)
        ok = self.compile(sources + self.support_objects + helpers + libs + ["-lm", "-lpthread"], binary,
                          ["-I" + srcdir] + flags, log)
        return (binary if ok else None), log

    def run_one(self, entry):
        directory, name, np, args, env, options, label = entry
        binary, build_log = self.build_program(directory, name)
        if binary is None:
            return entry, "build", 0.0, build_log
        log = os.path.join(self.logs, label + ".log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        if os.path.exists(log):
            os.remove(log)
        run_env = dict(os.environ)
        for item in env + self.opts.env:
            key, _, value = item.partition("=")
            run_env[key] = value
        limit = self.opts.timeout
        if "timeLimit" in options and options["timeLimit"].isdigit():
            limit = max(limit, min(int(options["timeLimit"]), self.opts.max_timeout))
            # The launcher ends a run past its testlist's limit, as under the suite's own
            # runner (init/timeout expects it to).
            run_env["MPIEXEC_TIMEOUT"] = options["timeLimit"]
        cmd = shlex.split(self.opts.mpirun) + ["-np", str(np), binary] + args
        # Programs that write files (adapt.out, Netpipe.out) write them under OUT/run.
        rc, seconds = run_command(cmd, log, limit, run_env, self.run_dir)
        if rc is None:
            return entry, "timeout", seconds, log
        text = open(log, encoding="utf-8", errors="replace").read()
        no_errors = re.search(r"^\s*No [Ee]rrors\s*$", text, re.M) is not None
        kind = options.get("resultTest", "")
        if kind == "TestStatus" or kind == "TestErrFatal":
            passed = rc != 0
        elif kind == "ExitZero":
            passed = rc == 0
        elif kind == "TestStatusNoErrors":
            passed = rc != 0 and no_errors
        else:
            passed = rc == 0 and no_errors
        return entry, ("pass" if passed else "fail"), seconds, log

    def entries(self):
        """Yields (directory, name, np, args, env, options, label); label names the run's log,
        with a number added where a testlist repeats a run with other environment variables."""
        only = re.compile(self.opts.only) if self.opts.only else None
        seen = {}
        for directory in self.opts.dirs.split(","):
            for name, np, args, env, options in read_testlist(
                    os.path.join(self.root, directory), self.opts.max_np, self.opts.enable):
                if only and not only.search("%s/%s" % (directory, name)):
                    continue
                label = "%s.%s.np%d%s" % (directory, name, np,
                                          ("." + "_".join(re.sub(r"[^A-Za-z0-9]", "", a) for a in args))
                                          if args else "")
                label = label[:170]
                seen[label] = seen.get(label, 0) + 1
                if seen[label] > 1:
                    label += ".%d" % seen[label]
                yield directory, name, np, args, env, options, label


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, help="the test/mpi folder")
    parser.add_argument("--out", required=True, help="build and result folder")
    parser.add_argument("--mpicc", default="mpicc")
    parser.add_argument("--mpirun", default="mpirun --oversubscribe --bind-to none")
    parser.add_argument("--dirs", default=DEFAULT_DIRS)
    parser.add_argument("--only", help="run only dir/name matching this regular expression")
    parser.add_argument("--max-np", type=int, default=8)
    parser.add_argument("--timeout", type=int, default=180, help="seconds per run (MPICH's own runner: 180)")
    parser.add_argument("--max-timeout", type=int, default=180,
                        help="cap on a testlist's own timeLimit")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--enable", type=lambda v: [n for n in v.split(",") if n], default=[],
                        help="configure switches whose testlist lines run (comm_overlap,...)")
    parser.add_argument("--env", action="append", default=[], help="K=V for every run")
    opts = parser.parse_args()
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    suite = Suite(opts)
    suite.build_support()
    entries = list(suite.entries())
    # Build each program once before running, so that parallel runs never race on a build.
    programs = sorted({(e[0], e[1]) for e in entries})
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        list(pool.map(lambda p: suite.build_program(*p), programs))

    results = []
    with open(os.path.join(suite.out, "results.tsv"), "w") as table:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
            for entry, status, seconds, log in pool.map(suite.run_one, entries):
                directory, name, np, args = entry[:4]
                row = [directory, name, str(np), " ".join(args), status, "%.1f" % seconds,
                       " ".join(entry[4])]
                table.write("\t".join(row) + "\n")
                table.flush()
                results.append((directory, status))
                if status != "pass":
                    print("%-8s %s/%s np %d %s  (%s)" % (status, directory, name, np,
                                                         " ".join(args), log), flush=True)

    print("\n%-10s %6s %6s %6s %8s %6s" % ("directory", "runs", "pass", "fail", "timeout",
                                           "build"))
    totals = {"runs": 0, "pass": 0, "fail": 0, "timeout": 0, "build": 0}
    for directory in opts.dirs.split(","):
        counts = {k: 0 for k in totals}
        for d, status in results:
            if d == directory:
                counts["runs"] += 1
                counts[status] += 1
        for k in totals:
            totals[k] += counts[k]
        print("%-10s %6d %6d %6d %8d %6d" % (directory, counts["runs"], counts["pass"],
                                             counts["fail"], counts["timeout"], counts["build"]))
    print("%-10s %6d %6d %6d %8d %6d" % ("total", totals["runs"], totals["pass"], totals["fail"],
                                         totals["timeout"], totals["build"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
