#!/usr/bin/env python3
"""weft_sim's predictions against measured allreduce times.

For each shape (nodes x ranks per node) and algorithm, one job runs osu_allreduce with the
algorithm forced (WEFT_COLL_TUNE) and the coll log on; the cost model that job measured at init
(rank 0's "cost model:" line) is handed to weft_sim for the same shape, and the measured average
latency is compared with the selector's estimate and with two replays of the schedules: one in
that model (alpha + n*beta per level), one with message times that osu_latency measured (two
ranks on two nodes, and two on one node), so that the replay's error and the two-point model's
are seen apart; and that replay again as this machine runs it: half-duplex links (a rank's
sends and receives taking turns, as where the CPU copies every byte) and every rank on one host
of this machine's cores (columns replay_host_*).

  sim_validate.py BUILD_DIR [--mode fake|netns] [--shapes 2x1,2x2,...] [--algorithms a,b]
                  [--sizes 8,1024,...] [--iterations N] [--out FILE.csv]

fake: virtual nodes on this host (WEFT_FAKE_NODES; UCX between them). netns: hosts that are
network namespaces (scripts/netns-cluster.sh must be up with at least as many hosts as the
largest shape has nodes; ranks mapped by slot, so nodes are blocks as weft_sim assumes).
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

MODEL = re.compile(
    r"cost model: alpha ([\d.]+) us, beta ([\d.]+) us/KiB, gamma ([\d.]+) us/KiB, gap ([\d.]+) us; "
    r"within a node: alpha ([\d.]+) us, beta ([\d.]+) us/KiB; between nodes: alpha ([\d.]+) us, "
    r"beta ([\d.]+) us/KiB \(0: unknown\); shared memory: alpha ([\d.]+) us, beta ([\d.]+) us/KiB")


def model_flags(log):
    for line in log.splitlines():
        if ":0] " in line or "] " in line:
            m = MODEL.search(line)
            if m:
                v = [float(x) for x in m.groups()]
                return ["--alpha", str(v[0]), "--beta", str(v[1] / 1024), "--gamma", str(v[2] / 1024),
                        "--gap", str(v[3]), "--node-alpha", str(v[4]), "--node-beta", str(v[5] / 1024),
                        "--net-alpha", str(v[6]), "--net-beta", str(v[7] / 1024), "--shm-alpha", str(v[8]),
                        "--shm-beta", str(v[9] / 1024)], m.group(0)
    return None, None


def run_job(cmd, env):
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None


def launcher(mode, cluster, np, nodes, ppn):
    if mode == "fake":
        return ["mpirun", "--oversubscribe", "-np", str(np), "-x", "WEFT_FAKE_NODES=%d" % nodes]
    return [cluster, "mpirun", "-np", str(np), "--map-by", "ppr:%d:node" % ppn, "-x", "UCX_TLS=tcp,self",
            "-x", "UCX_NET_DEVICES=eth0", "-x", "WEFT_WAIT_POLICY=yield"]


def measure_curves(a, build, cluster, env, nodes, ppn, path):
    """osu_latency (two ranks) between two nodes, and within one where the shape has node-mates."""
    lines = []
    pairs = [("net", 2, 1)] + ([("node", 1, 2)] if ppn > 1 else [])
    for level, pair_nodes, pair_ppn in pairs:
        cmd = launcher(a.mode, cluster, 2, pair_nodes, pair_ppn) + [
            os.path.join(build, "bin", "osu_latency"), "-m", "0:%d" % (4 * max(a.size_list)), "-i", "200", "-x",
            "20", "--csv"]
        times = {}
        for _ in range(a.passes):
            p = run_job(cmd, env)
            if not p or p.returncode != 0:
                continue
            for line in p.stdout.splitlines():
                if re.match(r"^\d+,", line):
                    size, us = line.split(",")[:2]
                    times.setdefault(int(size), []).append(float(us))
        if not times:
            print("# %dx%d: osu_latency %s failed" % (nodes, ppn, level), file=sys.stderr)
            return False
        for size in sorted(times):
            lines.append("%s,%d,%.3f" % (level, size, statistics.median(times[size])))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--mode", default="fake", choices=["fake", "netns"])
    ap.add_argument("--shapes", default="2x1,2x2,4x2,2x4,4x4")
    ap.add_argument("--algorithms", default="ring,recursive_doubling,rabenseifner,reduce_bcast,hier,hier_multi")
    ap.add_argument("--sizes", default="8,1024,65536,1048576")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--passes", type=int, default=3, help="jobs per shape and algorithm; the median counts")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    sizes = [int(s) for s in a.sizes.split(",")]
    a.size_list = sizes
    here = os.path.dirname(os.path.abspath(__file__))
    cluster = os.path.join(here, "..", "scripts", "netns-cluster.sh")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rows = []
    for shape in a.shapes.split(","):
        nodes, ppn = (int(x) for x in shape.split("x"))
        np = nodes * ppn
        curves = "/tmp/sim_validate_%s_%dx%d.p2p" % (a.mode, nodes, ppn)
        have_curves = measure_curves(a, build, cluster, env, nodes, ppn, curves)
        for alg in a.algorithms.split(","):
            bench = [os.path.join(build, "bin", "osu_allreduce"), "-m", "%d:%d" % (min(sizes), max(sizes)),
                     "-i", str(a.iterations), "-x", "3", "--csv"]
            common = ["-x", "WEFT_COLL_TUNE=allreduce:@" + alg, "-x", "WEFT_DEBUG=INFO", "-x", "WEFT_DEBUG_SUBSYS=coll"]
            runs, logs = {}, ""
            for _ in range(a.passes):
                p = run_job(launcher(a.mode, cluster, np, nodes, ppn) + common + bench, env)
                if not p or p.returncode != 0:
                    continue
                logs = logs or (p.stderr + p.stdout)
                for line in p.stdout.splitlines():
                    if re.match(r"^\d+,", line):
                        size, us = line.split(",")[:2]
                        runs.setdefault(int(size), []).append(float(us))
            if not runs:
                print("# %s %s: no run finished" % (shape, alg), file=sys.stderr)
                continue
            measured = {size: statistics.median(v) for size, v in runs.items()}
            # The model of the first job that finished (each job calibrates anew).
            flags, model_line = model_flags(logs)
            if not flags:
                print("# %s %s: no cost model line in the log" % (shape, alg), file=sys.stderr)
                continue
            sim_cmd = [os.path.join(build, "bin", "weft_sim"), "--csv", "--nodes", str(nodes), "--ppn", str(ppn),
                       "--bytes", ",".join(str(s) for s in sizes)] + flags
            by_model = subprocess.run(sim_cmd, capture_output=True, text=True, timeout=120)
            by_curve = subprocess.run(sim_cmd + ["--p2p", curves], capture_output=True, text=True,
                                      timeout=120) if have_curves else None
            by_half = subprocess.run(sim_cmd + ["--p2p", curves, "--duplex", "half", "--host-cores",
                                                str(os.cpu_count())], capture_output=True, text=True,
                                     timeout=120) if have_curves else None
            curve_rows, half_rows = {}, {}
            for run, table in ((by_curve, curve_rows), (by_half, half_rows)):
                if run:
                    for r in csv.DictReader(run.stdout.splitlines()):
                        table[(r["algorithm"], int(r["bytes"]))] = float(r["replay_us"])

            def err(x, meas):
                return "%+.0f%%" % (100 * (x - meas) / meas) if x >= 0 else "-"
            for r in csv.DictReader(by_model.stdout.splitlines()):
                size = int(r["bytes"])
                if r["algorithm"] != alg or size not in measured:
                    continue
                replay = float(r["replay_us"])
                curve = curve_rows.get((alg, size), -1.0)
                half = half_rows.get((alg, size), -1.0)
                est = float(r["estimate_us"])
                meas = measured[size]
                rows.append({"mode": a.mode, "shape": shape, "ranks": np, "algorithm": alg, "bytes": size,
                             "measured_us": "%.2f" % meas, "replay_p2p_us": "%.2f" % curve,
                             "replay_p2p_error": err(curve, meas), "replay_host_us": "%.2f" % half,
                             "replay_host_error": err(half, meas), "replay_model_us": "%.2f" % replay,
                             "replay_model_error": err(replay, meas), "estimate_us": "%.2f" % est,
                             "estimate_error": err(est, meas), "selector_choice": r["chosen"], "model": model_line})
            print("# %s %s done" % (shape, alg), file=sys.stderr)
    fields = ["mode", "shape", "ranks", "algorithm", "bytes", "measured_us", "replay_p2p_us", "replay_p2p_error",
              "replay_host_us", "replay_host_error",
              "replay_model_us", "replay_model_error", "estimate_us", "estimate_error", "selector_choice", "model"]
    out = open(a.out, "w") if a.out else sys.stdout
    w = csv.DictWriter(out, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)


if __name__ == "__main__":
    main()
