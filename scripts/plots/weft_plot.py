#!/usr/bin/env python3
"""Plots of the side-by-side benchmark scripts (osu_style_bench/*.sh), as PNG files.

  weft_plot.py sweep    TABLE | GPU_LOG | LOG_DIR  -o OUT.png   value and ratio against size
  weft_plot.py ratios   GUARD.csv | RUNS.csv       -o OUT.png   per-row ratios, spread, targets
  weft_plot.py busbw    GPU_LOG | LOG_DIR          -o OUT.png   GPU all-reduce bus bandwidth
  weft_plot.py bars     BARS.csv                   -o OUT.png   grouped bars (ddp_overlap, threads)
  weft_plot.py timeline MERGED.json [--phases P]   -o OUT.png   per-rank Gantt chart of a trace

Every subcommand reads only the files the scripts write, so it also runs later on a copied
folder; an OUT with {name} (sweep of several tables) or {run} (GPU logs) writes one PNG each.
`weft_plot.py SUBCOMMAND -h` describes the inputs. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import statistics
import sys
import textwrap

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
except ImportError:
    sys.exit("weft_plot.py: matplotlib is missing (Debian: apt-get install python3-matplotlib)")

# Names the scripts use for the series (CSV columns, variant labels) and how to show them.
SERIES_NAMES = {
    "weft": "weft",
    "ompi": "Open MPI",
    "weft_async": "weft, progress thread",
    "nccl": "NCCL",
    "ring": "ring (flat)",
    "default": "cost model's choice",
    "offload": "offload (weft-aggd)",
    "host": "host (cost model)",
}
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
# What the OSU-style programs and RMA cases print with --csv (compare.sh's table headings).
WHAT = {
    "osu_latency": ("one-way latency (µs)", "lower"),
    "osu_bw": ("bandwidth (MB/s)", "higher"),
    "osu_bibw": ("bi-directional bandwidth (MB/s)", "higher"),
    "osu_mbw_mr": ("aggregate bandwidth (MB/s)", "higher"),
    "osu_allreduce": ("allreduce average latency (µs)", "lower"),
    "osu_barrier": ("barrier average latency (µs)", "lower"),
    "osu_bcast": ("broadcast average latency (µs)", "lower"),
    "osu_reduce": ("reduce average latency (µs)", "lower"),
    "osu_allgather": ("allgather average latency (µs), size per rank", "lower"),
    "osu_alltoall": ("alltoall average latency (µs), size per rank pair", "lower"),
    "osu_iallreduce": ("iallreduce overall time with overlapped compute (µs)", "lower"),
}


def display(series):
    return SERIES_NAMES.get(series, series)


def what_of(name):
    """(y label, better) for a program or case name."""
    if name in WHAT:
        return WHAT[name]
    if "_bw" in name or name.endswith("bw"):
        return ("bandwidth (MB/s)", "higher")
    return ("latency (µs)", "lower")


def size_text(b, _pos=None):
    b = float(b)
    if b <= 0:
        return "0"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:g} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b:g} B"


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def median(values):
    return statistics.median(values) if values else None


def subtitle(args, *more):
    return " · ".join(p for p in (args.setup, args.machine, *more, args.note) if p)


def finish(fig, path, args):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fig.savefig(path, dpi=args.dpi, format="png")
    plt.close(fig)
    print(f"# plot: {path}")


def out_path(pattern, **fields):
    try:
        return pattern.format(**fields)
    except (KeyError, IndexError):
        sys.exit(f"weft_plot.py: -o {pattern}: only {', '.join('{' + k + '}' for k in fields)} may appear")


def heading(fig, title, sub):
    """The title and the line of context under it; returns the inches they take."""
    w, h = fig.get_size_inches()
    fig.suptitle(title, fontsize=12, fontweight="bold", y=1 - 0.1 / h, va="top")
    lines = textwrap.wrap(sub, int(w * 15)) if sub else []
    if lines:
        fig.text(0.5, 1 - 0.4 / h, "\n".join(lines), ha="center", va="top", fontsize=8.5, color="#444444")
    return 0.5 + 0.16 * len(lines)


def margins(fig, top, bottom, left, right):
    """subplots_adjust in inches, so that captions keep their room whatever the figure's size."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(top=1 - top / h, bottom=bottom / h, left=left / w, right=1 - right / w)


def compact(v):
    """8200035 -> 8.2M: bar labels that fit."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= (10 * scale if unit == "k" else scale):
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


def plain_number(v, _pos=None):
    if v == 0:
        return "0"
    if v >= 1e4:
        return f"{v:,.0f}"
    return f"{v:.10g}" if v >= 1e-3 else f"{v:.1e}"


def plain_log(axis, subs=None):
    """Ticks written as plain numbers rather than powers of ten, as many as the span allows."""
    lo, hi = axis.get_view_interval()
    span = hi / lo if lo > 0 else 1e9
    if subs is None or span > 1e3:
        subs = (1.0,) if span > 1e3 else (1.0, 2.0, 5.0) if span > 10 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=30))
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())


def size_positions(sizes):
    """x positions on a log2 axis: size 0 (OSU's first latency row) one step left of the
    smallest other size. None when there is no other size."""
    positive = [z for z in sizes if z > 0]
    if not positive:
        return None
    zero_at = min(positive) / 2
    return [z if z > 0 else zero_at for z in sizes]


def log2_size_axis(ax, sizes, zero_at=None):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, p: "0" if zero_at and abs(v - zero_at) < zero_at * 1e-6 else size_text(v, p)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    lo, hi = min(sizes), max(sizes)
    span = math.log2(hi / lo) if hi > lo else 0
    step = max(1, int(math.ceil(span / 10)))
    if span > 0:
        ax.set_xticks([lo * 2 ** k for k in range(0, int(span) + 1, step)])
    ax.set_xlim(lo / 1.3, hi * 1.3)


# --- tables -----------------------------------------------------------------------------------

class Table:
    """Values by table (program or case), size and run: tables[key][size] = [{series: value}]."""

    def __init__(self):
        self.tables = {}
        self.series = []

    def add(self, key, size, run):
        for s in run:
            if s not in self.series:
                self.series.append(s)
        self.tables.setdefault(key, {}).setdefault(size, []).append(run)


RATIO_COLUMN = re.compile(r"(^ratio|_over_|ratio_to_|^#)")


def read_table(path, value_field, header=None):
    """A CSV the scripts write: with a header naming "size" (the first column the table's name
    unless it is size; each other numeric column a series; a repeated table and size is one more
    run), or without one, lines "SERIES,SIZE,VALUE,..." (each line one run of SERIES). `header`
    names the columns of a file that has none."""
    t = Table()
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    if header:
        rows.insert(0, header.split(","))
    if not rows:
        return t
    head = [h.strip() for h in rows[0]]
    if "size" in head:
        si = head.index("size")
        ki = 0 if si != 0 else None
        cols = [i for i, h in enumerate(head) if i not in (si, ki) and not RATIO_COLUMN.search(h)]
        for r in rows[1:]:
            size = number(r[si]) if si < len(r) else None
            if size is None:
                continue
            run = {}
            for i in cols:
                v = number(r[i]) if i < len(r) else None
                if v is not None:
                    run[head[i]] = v
            t.add(r[ki] if ki is not None else "", size, run)
        return t
    # SERIES,SIZE,VALUE: the k-th line of a series and size is run k.
    seen = {}
    for r in rows:
        if len(r) < value_field:
            continue
        size, v = number(r[1]), number(r[value_field - 1])
        if size is None or v is None:
            continue
        k = seen.get((r[0], size), 0)
        seen[(r[0], size)] = k + 1
        runs = t.tables.setdefault("", {}).setdefault(size, [])
        while len(runs) <= k:
            runs.append({})
        runs[k][r[0]] = v
        if r[0] not in t.series:
            t.series.append(r[0])
    return t


# --- GPU logs (gpu_allreduce, nccl_allreduce: nccl-tests-style tables) -------------------------

GPU_ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+\S+\s+\S+((?:\s+[-+0-9.eE]+){12})\s*$")


def read_gpu_log(path):
    """{'rows': [(size, out-of-place time, in-place time)] (µs), 'roof': GB/s, 'ranks', 'gpus',
    'per_gpu', 'impl'} of one gpu_allreduce or nccl_allreduce log."""
    log = {"rows": [], "roof": None, "ranks": None, "gpus": None, "per_gpu": None, "impl": None, "type": None}
    try:
        f = open(path, errors="replace")
    except OSError:
        return log
    with f:
        for line in f:
            m = GPU_ROW.match(line)
            if m:
                v = [float(x) for x in m.group(3).split()]
                log["rows"].append((int(m.group(1)), v[0], v[6]))
                continue
            m = re.search(r"roof_gbs=([0-9.]+)", line)
            if m:
                log["roof"] = float(m.group(1))
            m = re.match(r"# (\d+) ranks on (\d+) GPU\(s\), at most (\d+) rank\(s\) per GPU", line)
            if m:
                log["ranks"], log["gpus"], log["per_gpu"] = (int(x) for x in m.groups())
            m = re.match(r"# (\S+): sum of (\S+)", line)
            if m:
                log["impl"], log["type"] = m.groups()
    return log


def gpu_model(log_dir):
    """The GPU's name from gpu_sweep.sh's summary (nvidia-smi -L), without its UUID."""
    try:
        with open(os.path.join(log_dir, "summary.txt"), errors="replace") as f:
            for line in f:
                m = re.match(r"# GPU \d+: (.+?) \(UUID", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def gpu_runs(path):
    """[(run name, weft log, NCCL log or None)]: one file, or every *gpu_allreduce*.log of a
    gpu_sweep.sh LOG_DIR with the nccl_allreduce log of the same placement and rank count."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "*gpu_allreduce*.log")))
    else:
        files = [path]
    runs = []
    for f in files:
        base = os.path.basename(f)[: -len(".log")] if f.endswith(".log") else os.path.basename(f)
        nccl = os.path.join(os.path.dirname(f), os.path.basename(f).replace("gpu_allreduce", "nccl_allreduce"))
        runs.append((base.replace(".gpu_allreduce", ""), f, nccl if nccl != f and os.path.exists(nccl) else None))
    return runs


def gpu_setup(log, log_dir):
    model = gpu_model(log_dir)
    parts = []
    if log["ranks"]:
        parts.append(f"{log['ranks']} ranks on {log['gpus']} GPU(s)" + (f" ({model})" if model else ""))
        parts.append("one rank per GPU" if log["per_gpu"] == 1 else f"up to {log['per_gpu']} ranks per GPU (MPS)")
    return ", ".join(parts)


# --- sweep ------------------------------------------------------------------------------------

def sweep_figure(args, sizes, series, anchor, values, ylabel, better, title, sub):
    """values[series][size]: the runs' values, drawn as the median with a min-max band;
    values[(series, anchor)][size]: the runs' ratios, the band of the ratio panel."""
    if len(sizes) == 1:
        return single_size_figure(args, sizes[0], series, anchor, values, ylabel, better, title, sub)
    xs = size_positions(sizes)
    categorical = xs is None
    if categorical:
        xs = list(range(len(sizes)))
    zero_at = xs[sizes.index(0)] if 0 in sizes and not categorical else None
    has_ratio = anchor is not None and any(s != anchor for s in series) and anchor in values
    if has_ratio:
        fig, (ax, axr) = plt.subplots(2, 1, figsize=(8, 6.4), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.4], "hspace": 0.08})
    else:
        fig, ax = plt.subplots(figsize=(8, 4.8))
        axr = None
    runs = 1
    for i, s in enumerate(series):
        color = COLORS[i % len(COLORS)]
        pts = [(x, values[s][z]) for x, z in zip(xs, sizes) if values[s].get(z)]
        if not pts:
            continue
        runs = max(runs, max(len(v) for _, v in pts))
        ax.plot([p[0] for p in pts], [median(p[1]) for p in pts], marker="o", ms=3.5, lw=1.6,
                color=color, label=display(s))
        if any(len(p[1]) > 1 for p in pts):
            ax.fill_between([p[0] for p in pts], [min(p[1]) for p in pts], [max(p[1]) for p in pts],
                            color=color, alpha=0.18, lw=0)
    if not args.linear_y:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    extra = ""
    if runs > 1:
        extra = f"lines: medians of {runs} runs, bands: min–max"
    ax.legend(title=extra or None, title_fontsize=8, fontsize=9, loc="best")
    ax.set_title(f"{ylabel}, {better} is better", fontsize=10)
    last = ax
    if axr is not None:
        allr = []
        for i, s in enumerate(series):
            if s == anchor:
                continue
            color = COLORS[i % len(COLORS)]
            pts = []
            for x, z in zip(xs, sizes):
                a, b = values[s].get(z), values[anchor].get(z)
                if a and b and median(b) > 0:
                    per_run = [r for r in values[(s, anchor)].get(z, []) if r > 0]
                    pts.append((x, median(a) / median(b), per_run))
            if not pts:
                continue
            allr += [p[1] for p in pts] + [r for p in pts for r in p[2]]
            axr.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3.5, lw=1.4, color=color,
                     label=f"{display(s)} / {display(anchor)}")
            band = [p for p in pts if len(p[2]) > 1]
            if band:
                axr.fill_between([p[0] for p in band], [min(p[2]) for p in band], [max(p[2]) for p in band],
                                 color=color, alpha=0.18, lw=0)
        axr.axhline(1.0, color="black", lw=1, ls="--")
        if allr and max(allr) / max(min(allr), 1e-12) > 4:
            axr.set_yscale("log")
            plain_log(axr.yaxis)
        good = "below" if better == "lower" else "above"
        axr.set_ylabel(f"ratio to {display(anchor)}\n({good} 1: better)", fontsize=9)
        axr.grid(True, which="major", alpha=0.35)
        if len([s for s in series if s != anchor]) > 1:
            axr.legend(fontsize=8, loc="best")
        last = axr
    if categorical:
        last.set_xticks(xs)
        last.set_xticklabels([size_text(z) for z in sizes])
    else:
        log2_size_axis(last, xs, zero_at)
    last.set_xlabel(args.xlabel or "message size")
    margins(fig, heading(fig, title, sub) + 0.35, 0.6, 0.85, 0.2)
    return fig


def single_size_figure(args, size, series, anchor, values, ylabel, better, title, sub):
    """One size (osu_barrier): a bar per series, its ratio to the anchor written on it."""
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    shown = [s for s in series if values[s].get(size)]
    meds = [median(values[s][size]) for s in shown]
    bars = ax.bar(range(len(shown)), meds, color=[COLORS[series.index(s) % len(COLORS)] for s in shown], width=0.6)
    for i, s in enumerate(shown):
        runs = values[s][size]
        if len(runs) > 1:
            ax.plot([i, i], [min(runs), max(runs)], color="black", lw=1.2)
    base = median(values[anchor][size]) if anchor and values.get(anchor, {}).get(size) else None
    labels = [f"{m:.3g}" + (f"\n{m / base:.2f}× {display(anchor)}" if base and s != anchor else "")
              for s, m in zip(shown, meds)]
    ax.bar_label(bars, labels=labels, fontsize=8, padding=2)
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([display(s) for s in shown])
    ax.set_ylabel(ylabel)
    ax.margins(y=0.25)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(f"{ylabel}, {better} is better; message size {size_text(size)}", fontsize=10)
    margins(fig, heading(fig, title, sub) + 0.35, 0.5, 0.85, 0.2)
    return fig


def cmd_sweep(args):
    if os.path.isdir(args.input) or is_gpu_log(args.input):
        return sweep_gpu(args)
    t = read_table(args.input, args.value_field, args.header)
    names = args.name or list(t.tables)
    if not names:
        sys.exit(f"weft_plot.py: {args.input} holds no rows")
    if len(names) > 1 and "{name}" not in args.output:
        sys.exit("weft_plot.py: several tables: -o needs {name}")
    series = args.series.split(",") if args.series else t.series
    if args.anchor == "none":
        anchor = None
    elif args.anchor:
        anchor = args.anchor if args.anchor in series else None
        if anchor is None:
            print(f"weft_plot.py: no series {args.anchor} in {args.input}: no ratio panel", file=sys.stderr)
    else:
        anchor = "ompi" if "ompi" in series else None
    for name in names:
        rows = t.tables.get(name)
        if not rows:
            print(f"weft_plot.py: {args.input}: no rows for {name}", file=sys.stderr)
            continue
        sizes = sorted(rows)
        values = {s: {} for s in series}
        if anchor:
            for s in series:
                values[(s, anchor)] = {}
        for z in sizes:
            for run in rows[z]:
                for s in series:
                    if s in run:
                        values[s].setdefault(z, []).append(run[s])
                        if anchor and s != anchor and run.get(anchor, 0) > 0:
                            values[(s, anchor)].setdefault(z, []).append(run[s] / run[anchor])
        ylabel, better = what_of(name) if name else ("latency (µs)", "lower")
        ylabel = args.ylabel or ylabel
        better = args.better or better
        parts = [name] if name else []
        if anchor:
            parts.append(f"{' and '.join(display(s) for s in series if s != anchor)} against {display(anchor)}")
        title = args.title or (f"{args.bench}: " if args.bench else "") + ", ".join(parts)
        fig = sweep_figure(args, sizes, series, anchor, values, ylabel, better, title, subtitle(args))
        finish(fig, out_path(args.output, name=name), args)
    return 0


def is_gpu_log(path):
    try:
        with open(path, errors="replace") as f:
            head = f.read(20000)
    except OSError:
        return False
    return "# FLOOR" in head or "algbw" in head


def gpu_run_logs(args):
    """Each run of gpu_sweep.sh's logs with rows: (run, weft log, NCCL log or None); sets
    args.setup for the run (the given one, else the logs' GPU and ranks, and why NCCL is empty)."""
    runs = gpu_runs(args.input)
    if not runs:
        sys.exit(f"weft_plot.py: no gpu_allreduce logs in {args.input}")
    log_dir = args.input if os.path.isdir(args.input) else os.path.dirname(args.input)
    given_setup = args.setup
    for run, wpath, npath in runs:
        w = read_gpu_log(wpath)
        n = read_gpu_log(npath) if npath else None
        if not w["rows"]:
            print(f"weft_plot.py: {wpath}: no rows", file=sys.stderr)
            continue
        args.setup = given_setup or gpu_setup(w, log_dir)
        if n is not None and not n["rows"]:
            args.setup += ", NCCL: nothing measured (it needs one GPU per rank)"
        yield run, w, n


def sweep_gpu(args):
    drawn = 0
    for run, w, n in gpu_run_logs(args):
        col = 2 if args.in_place else 1
        series = ["weft"] + (["nccl"] if n and n["rows"] else [])
        values = {"weft": {r[0]: [r[col]] for r in w["rows"]}}
        if len(series) > 1:
            values["nccl"] = {r[0]: [r[col]] for r in n["rows"]}
            values[("weft", "nccl")] = {}
        sizes = sorted(set(values["weft"]) | set(values.get("nccl", {})))
        place = "in place" if args.in_place else "out of place"
        title = args.title or f"gpu_sweep.sh: all-reduce time on device buffers, {run}"
        fig = sweep_figure(args, sizes, series, "nccl" if len(series) > 1 else None, values,
                           args.ylabel or f"time per call (µs), {place}", "lower", title,
                           subtitle(args))
        finish(fig, out_path(args.output, run=run, name=run), args)
        drawn += 1
    return 0 if drawn else 1


# --- ratios -----------------------------------------------------------------------------------

NEUTRAL = "#1f77b4"


def read_vals(path):
    vals = []
    try:
        with open(path) as f:
            for line in f:
                v = number(line.strip())
                if v is not None:
                    vals.append(v)
    except OSError:
        pass
    return vals


def cmd_ratios(args):
    with open(args.input, newline="") as f:
        head = next(csv.reader(f), [])
    if "numerator" in head:
        return ratios_guard(args)
    return ratios_grid(args)


def ratios_guard(args):
    """GUARD.csv: row,numerator,denominator,better,target (paths of .vals files, one value a run,
    relative to the CSV); run k of each file is one interleaved run."""
    base = os.path.dirname(os.path.abspath(args.input))
    with open(args.input, newline="") as f:
        rows = list(csv.DictReader(f))
    items = []
    for r in rows:
        num = read_vals(os.path.join(base, r["numerator"]))
        den = read_vals(os.path.join(base, r["denominator"]))
        target = number(r.get("target"))
        target_text = (r.get("target") or "").strip()
        better = (r.get("better") or "lower").strip()
        if not num or not den or median(den) <= 0:
            items.append((r["row"], None, [], better, target, target_text))
            continue
        ratio = median(num) / median(den)
        if len(num) == len(den):
            per_run = [a / b for a, b in zip(num, den) if b > 0]
        else:  # a failed run leaves the files unpaired: the widest spread they allow
            print(f"weft_plot.py: {r['row']}: {len(num)} and {len(den)} values, runs not paired", file=sys.stderr)
            per_run = [min(num) / max(den), max(num) / min(den)]
        items.append((r["row"], ratio, per_run, better, target, target_text))
    runs = max((len(read_vals(os.path.join(base, r["numerator"]))) for r in rows), default=0)
    fig, ax = plt.subplots(figsize=(8.5, 1.9 + 0.55 * len(items)))
    ys = list(range(len(items)))[::-1]
    allx = [1.0]
    for y, (row, ratio, per_run, better, target, target_text) in zip(ys, items):
        if ratio is None:
            ax.text(1.0, y, "  no result", va="center", fontsize=8, color="#d62728")
            continue
        ok = target is None or (ratio <= target if better == "lower" else ratio >= target)
        color = NEUTRAL if target is None else "#2ca02c" if ok else "#d62728"
        if per_run:
            ax.plot([min(per_run), max(per_run)], [y, y], color=color, alpha=0.35, lw=7, solid_capstyle="butt")
            allx += per_run
        ax.plot([ratio], [y], marker="o", ms=8, color=color, zorder=3)
        allx.append(ratio)
        note = f"{ratio:.2f}"
        if target is not None:
            ax.plot([target], [y], marker="|", ms=22, mew=2.5, color="black", zorder=4)
            allx.append(target)
            note += f"  (target {'≤' if better == 'lower' else '≥'} {target_text}: {'met' if ok else 'MISSED'})"
        ax.annotate(note, (1, y), xycoords=("axes fraction", "data"), xytext=(6, 0), textcoords="offset points",
                    va="center", fontsize=8.5, color=color)
    lo, hi = min(allx), max(allx)
    pad = (hi / lo) ** 0.08 if hi > lo else 1.2
    ax.set_xscale("log")
    ax.set_xlim(lo / pad, hi * pad)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(0.1, 0.2, 0.3, 0.5, 0.7, 1.0), numticks=20))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.axvline(1.0, color="#555555", lw=1, ls="--", zorder=1)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{row.replace('_', ' ')}\n{better} is better" for row, _r, _p, better, _t, _tt in items],
                       fontsize=8.5)
    ax.set_ylim(-0.7, len(items) - 0.3)
    ax.set_xlabel(args.xlabel or "ratio of medians (log scale)")
    ax.grid(True, axis="x", alpha=0.3)
    if any(it[4] is not None for it in items):
        handles = [plt.Line2D([], [], marker="o", ls="", color="#2ca02c", label="ratio of medians (target met)"),
                   plt.Line2D([], [], marker="o", ls="", color="#d62728", label="ratio of medians (missed)"),
                   Patch(color="#2ca02c", alpha=0.35, label="min–max of the per-run ratios"),
                   plt.Line2D([], [], marker="|", ms=12, mew=2.5, ls="", color="black", label="target")]
    else:
        handles = [plt.Line2D([], [], marker="o", ls="", color=NEUTRAL, label="ratio of medians"),
                   Patch(color=NEUTRAL, alpha=0.35, label="min–max of the per-run ratios")]
    fig.legend(handles=handles, fontsize=7.5, loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=4, frameon=False)
    title = args.title or "ratios against their targets"
    top = heading(fig, title, subtitle(args, f"{runs} runs" if runs else ""))
    margins(fig, top + 0.1, 0.85, 1.6, 2.3)
    finish(fig, args.output, args)
    return 0


def ratios_grid(args):
    """RUNS.csv (compare_median.sh's all_runs.csv: program,size,weft,ompi,ratio, one line a run):
    a panel per program, the ratio of the medians per size with the min-max of the runs' ratios."""
    t = read_table(args.input, args.value_field, args.header)
    series = args.series.split(",") if args.series else [s for s in t.series if s != "ompi"][:1] + ["ompi"]
    num, den = series[0], series[1]
    names = args.name or list(t.tables)
    cols = min(3, len(names))
    rows_n = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 2.9 * rows_n + 0.9), squeeze=False)
    runs = 0
    for i, name in enumerate(names):
        ax = axes[i // cols][i % cols]
        table = t.tables.get(name, {})
        sizes = sorted(table)
        pts = []
        for z in sizes:
            a = [r[num] for r in table[z] if num in r]
            b = [r[den] for r in table[z] if den in r]
            per_run = [r[num] / r[den] for r in table[z] if num in r and r.get(den, 0) > 0]
            runs = max(runs, len(per_run))
            if a and b and median(b) > 0:
                pts.append((z, median(a) / median(b), per_run))
        _ylabel, better = what_of(name)
        ax.axhline(1.0, color="#555555", lw=1, ls="--")
        if pts:
            xs = size_positions([p[0] for p in pts])
            categorical = xs is None or len(pts) == 1
            if categorical:
                xs = list(range(len(pts)))
            lo = [p[1] - min(p[2]) if p[2] else 0 for p in pts]
            hi = [max(p[2]) - p[1] if p[2] else 0 for p in pts]
            good = ["#2ca02c" if (p[1] <= 1 if better == "lower" else p[1] >= 1) else "#d62728" for p in pts]
            ax.errorbar(xs, [p[1] for p in pts], yerr=[[max(v, 0) for v in lo], [max(v, 0) for v in hi]],
                        fmt="none", ecolor="#999999", elinewidth=1.2, capsize=2)
            ax.scatter(xs, [p[1] for p in pts], c=good, s=16, zorder=3)
            if categorical:
                ax.set_xticks(xs)
                ax.set_xticklabels([size_text(p[0]) for p in pts], fontsize=7)
            else:
                log2_size_axis(ax, xs, xs[0] if pts[0][0] == 0 else None)
                ax.tick_params(axis="x", labelsize=7, rotation=45)
            spread = [p[1] for p in pts] + [r for p in pts for r in p[2]]
            if min(spread) > 0 and max(spread) / min(spread) > 4:
                ax.set_yscale("log")
                plain_log(ax.yaxis)
        ax.set_title(f"{name} ({better} is better)", fontsize=9)
        ax.grid(True, alpha=0.3)
        if i % cols == 0:
            ax.set_ylabel(f"{display(num)} / {display(den)}", fontsize=8)
    for j in range(len(names), rows_n * cols):
        axes[j // cols][j % cols].axis("off")
    title = args.title or f"{display(num)} / {display(den)} per program and size"
    top = heading(fig, title, subtitle(args, f"points: ratio of the medians of {runs} runs; bars: min–max of the "
                                             f"runs' ratios; green: as good as {display(den)} or better"))
    fig.tight_layout(rect=(0, 0, 1, 1 - top / fig.get_figheight()))
    finish(fig, args.output, args)
    return 0


# --- busbw ------------------------------------------------------------------------------------

def cmd_busbw(args):
    if len(gpu_runs(args.input)) > 1 and "{run}" not in args.output:
        sys.exit("weft_plot.py: several runs: -o needs {run}")
    what = "algorithm bandwidth (size / time)" if args.algbw else "bus bandwidth (algbw × 2(p−1)/p)"
    drawn = 0
    for run, w, n in gpu_run_logs(args):
        fig, ax = plt.subplots(figsize=(8, 5))
        sizes = [r[0] for r in w["rows"]]
        for i, (label, log) in enumerate((("weft", w), ("NCCL", n))):
            if not log or not log["rows"]:
                continue
            # From the times: the logs' GB/s columns round small sizes to 0.00.
            p = log["ranks"] or 1
            factor = 1.0 if args.algbw else (2.0 * (p - 1) / p if p > 1 else 0.0)
            if factor == 0:
                continue
            color = COLORS[i]
            for k, place, style in ((1, "out of place", dict(marker="o", ms=3, lw=1.6)),
                                    (2, "in place", dict(ls="--", lw=1.2))):
                pts = [(r[0], r[0] / (r[k] * 1e-6) / 1e9 * factor) for r in log["rows"] if r[k] > 0]
                ax.plot([q[0] for q in pts], [q[1] for q in pts], color=color, label=f"{label}, {place}", **style)
            sizes += [r[0] for r in log["rows"]]
        if w["roof"]:
            ax.axhline(w["roof"], color="black", lw=1.2, ls=":")
            ax.text(min(sizes), w["roof"] * 1.06, f"device-to-device copy roofline {w['roof']:.0f} GB/s "
                    "(bytes read + written)", fontsize=8, va="bottom")
        ax.set_yscale("log")
        plain_log(ax.yaxis, (1.0, 3.0))
        log2_size_axis(ax, sizes)
        ax.set_xlabel("message size")
        ax.set_ylabel(f"{'algbw' if args.algbw else 'busbw'} (GB/s)")
        ax.set_title(f"{what}, higher is better", fontsize=10)
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        ax.legend(fontsize=8.5, loc="upper left" if not w["roof"] else "lower right")
        title = args.title or f"gpu_sweep.sh: all-reduce ({w['type'] or 'float'} sum) on device buffers, {run}"
        margins(fig, heading(fig, title, subtitle(args)) + 0.35, 0.6, 0.85, 0.2)
        finish(fig, out_path(args.output, run=run, name=run), args)
        drawn += 1
    return 0 if drawn else 1


# --- bars -------------------------------------------------------------------------------------

def cmd_bars(args):
    """BARS.csv: panel,category,SERIES... (a panel per distinct first column, its text the axis
    label; "-" or empty for no value)."""
    with open(args.input, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    head, rows = rows[0], rows[1:]
    series = args.series.split(",") if args.series else head[2:]
    panels = []
    for r in rows:
        if r[0] not in panels:
            panels.append(r[0])
    widths = [max(3.6, 0.8 + 0.3 * len(series) * sum(1 for r in rows if r[0] == p)) for p in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.5, sum(widths) + 0.6), 4.8), squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    for ax, panel in zip(axes[0], panels):
        cats = [r for r in rows if r[0] == panel]
        width = 0.8 / len(series)
        for i, s in enumerate(series):
            k = head.index(s)
            vals = [number(r[k]) if k < len(r) else None for r in cats]
            xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(cats))]
            bars = ax.bar([x for x, v in zip(xs, vals) if v is not None], [v for v in vals if v is not None],
                          width=width * 0.95, color=COLORS[i % len(COLORS)], label=display(s))
            ax.bar_label(bars, labels=[compact(v) for v in vals if v is not None], fontsize=6.5, padding=1,
                         rotation=90 if len(cats) * len(series) > 12 else 0)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([r[1] for r in cats], fontsize=8, rotation=20 if len(cats) > 4 else 0, ha="right"
                           if len(cats) > 4 else "center")
        ax.set_ylabel(panel, fontsize=9)
        ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
        ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
        ax.grid(True, axis="y", alpha=0.3)
    top = heading(fig, args.title or os.path.basename(args.input), subtitle(args))
    h = fig.get_figheight()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, 1 - top / h),
               ncol=len(series), frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - (top + 0.3) / h))
    finish(fig, args.output, args)
    return 0


# --- timeline ---------------------------------------------------------------------------------

def load_trace(path):
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)["traceEvents"]
    except (ValueError, KeyError, TypeError):
        pass
    events = []  # a file cut short: one event per line
    for line in text.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{\"ph\""):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
    return events


def clock_offsets(events, files):
    """offset_us per rank from the weft_clock records, which weft_trace merge applies
    (ts_on_rank_0 = ts - offset_us) but does not copy: read from the rank files if given."""
    offsets = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "weft_clock":
            offsets[e["args"]["rank"]] = float(e["args"]["offset_us"])
    for path in files:
        with open(path, errors="replace") as f:
            for line in f:
                if "\"weft_clock\"" in line:
                    try:
                        e = json.loads(line.strip().rstrip(",").rstrip("]").rstrip(","))
                        offsets[e["args"]["rank"]] = float(e["args"]["offset_us"])
                    except (ValueError, KeyError):
                        pass
    return offsets


def read_phases(path, offset_us):
    """(compute [(start_us, end_us, label)], steps [(start_us, end_us, label)]) on rank 0's trace
    clock: MPI_Wtime + (CLOCK_MONOTONIC - MPI_Wtime) is the trace's clock, less the rank's offset."""
    compute, steps = [], []
    shift = None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                m = re.search(r"monotonic_minus_wtime_s\s+([-0-9.eE+]+)", line)
                if m:
                    shift = float(m.group(1))
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                continue
            t0, t1 = number(parts[0]), number(parts[1])
            if t0 is None or t1 is None:
                continue
            label = parts[2].strip()
            if shift is None:
                sys.exit(f"weft_plot.py: {path}: no monotonic_minus_wtime_s line to tie it to the trace's clock")
            span = ((t0 + shift) * 1e6 - offset_us, (t1 + shift) * 1e6 - offset_us, label)
            (steps if label.startswith("step ") else compute).append(span)
    return compute, steps


def lanes(spans):
    """Packs overlapping spans into lanes: [(lane, span)]."""
    ends, out = [], []
    for sp in sorted(spans, key=lambda s: s[0]):
        for k, end in enumerate(ends):
            if sp[0] >= end:
                ends[k] = sp[1]
                out.append((k, sp))
                break
        else:
            ends.append(sp[1])
            out.append((len(ends) - 1, sp))
    return out


def union(spans):
    merged = []
    for a, b in sorted((s[0], s[1]) for s in spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def overlap_len(u, v):
    total, i, j = 0.0, 0, 0
    while i < len(u) and j < len(v):
        a, b = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        if b > a:
            total += b - a
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return total


API_COLORS = {"MPI_Iallreduce": "#1f77b4", "MPI_Waitall": "#d62728", "MPI_Wait": "#d62728",
              "MPI_Barrier": "#7f7f7f", "MPI_Allreduce": "#9467bd"}
# A colour family per operation, a shade per algorithm.
COLL_COLORS = {"allreduce": ["#ff7f0e", "#fdae6b", "#d94801", "#a63603"], "barrier": ["#7f7f7f", "#bdbdbd"],
               "bcast": ["#8c564b", "#c49c94"], "reduce": ["#e377c2", "#f7b6d2"]}


def coll_color(name, seen):
    op = name.split(":")[0]
    if name not in seen:
        family = COLL_COLORS.get(op, ["#17becf", "#9edae5", "#bcbd22", "#dbdb8d"])
        shades = [c for c in family if c not in seen.values()] or family
        seen[name] = shades[0]
    return seen[name]
COMPUTE_COLOR = "#2ca02c"


def cmd_timeline(args):
    events = load_trace(args.input)
    offsets = clock_offsets(events, args.clock or [])
    api, coll = {}, {}
    open_async = {}
    t_first, t_last = math.inf, -math.inf
    for e in events:
        ts = e.get("ts")
        if not isinstance(ts, (int, float)):
            continue
        pid = e.get("pid", 0)
        ph = e.get("ph")
        t_first = min(t_first, ts)
        t_last = max(t_last, ts + (e.get("dur") or 0))
        if ph == "X" and e.get("cat") == "api":
            api.setdefault(pid, []).append((ts, ts + e.get("dur", 0), e.get("name", "")))
        elif ph in ("b", "e") and e.get("cat") == "coll":
            key = (pid, e.get("id"))
            if ph == "b":
                open_async[key] = (ts, e.get("name", ""), (e.get("args") or {}).get("bytes"))
            elif key in open_async:
                t0, name, nbytes = open_async.pop(key)
                coll.setdefault(pid, []).append((t0, ts, name, nbytes))
    ranks = sorted(set(api) | set(coll))
    if args.ranks:
        ranks = [r for r in ranks if r in {int(x) for x in args.ranks.split(",")}]
    if not ranks:
        sys.exit(f"weft_plot.py: {args.input} holds no API calls or collectives")
    compute, steps = {}, {}
    if args.phases:
        if not offsets:
            print("weft_plot.py: no weft_clock records (give the rank files with --clock): phases not shifted",
                  file=sys.stderr)
        for r in ranks:
            path = args.phases.replace("%r", str(r))
            if os.path.exists(path):
                compute[r], steps[r] = read_phases(path, offsets.get(r, 0.0))
            else:
                print(f"weft_plot.py: {path} missing: rank {r} has no compute row", file=sys.stderr)

    # The window: --window (ms from the first event), --step, the last overlap step, or --last ms.
    what = ""
    if args.window:
        a, b = (float(x) for x in args.window.split(":"))
        w0, w1 = t_first + a * 1e3, t_first + b * 1e3
        what = f"{a:g}–{b:g} ms after the trace's first event"
    else:
        want = args.step or "overlap"
        chosen = []
        for r in ranks:
            matches = [s for s in steps.get(r, []) if s[2][len("step "):].startswith(want)]
            if matches:
                chosen.append(matches[-1])
        if chosen:
            s0, s1 = min(c[0] for c in chosen), max(c[1] for c in chosen)
            margin = (s1 - s0) * 0.03
            w0, w1 = s0 - margin, s1 + margin
            what = f"step \"{chosen[0][2][len('step '):]}\""
        else:
            if args.step:
                sys.exit(f"weft_plot.py: no step \"{args.step}\" in the phase files")
            w1 = t_last
            w0 = max(t_first, w1 - args.last * 1e3)
            what = f"the last {(w1 - w0) / 1e3:.1f} ms"
    span_ms = (w1 - w0) / 1e3
    min_w = span_ms * 0.0012  # calls of a microsecond stay visible

    def clip(spans):
        out = []
        for sp in spans:
            if sp[1] >= w0 and sp[0] <= w1:
                out.append((max(sp[0], w0), min(sp[1], w1)) + tuple(sp[2:]))
        return out

    rows = []  # (label, kind, rank)
    for r in ranks:
        if r in compute:
            rows.append((f"rank {r} compute", "compute", r))
        rows.append((f"rank {r} MPI calls", "api", r))
        rows.append((f"rank {r} collectives", "coll", r))
    fig_h = 2.0 + 0.5 * len(rows)
    fig, ax = plt.subplots(figsize=(11, fig_h))
    used_api, used_coll = set(), {}
    stats = []
    for i, (_label, kind, r) in enumerate(rows):
        y = len(rows) - 1 - i
        if kind == "compute":
            spans = clip(compute[r])
            ax.broken_barh([((s[0] - w0) / 1e3, max((s[1] - s[0]) / 1e3, min_w)) for s in spans], (y - 0.35, 0.7),
                           color=COMPUTE_COLOR, lw=0)
        elif kind == "api":
            spans = clip(api.get(r, []))
            for name in sorted({s[2] for s in spans}):
                color = API_COLORS.get(name, "#bcbd22")
                used_api.add((name, color))
                ax.broken_barh([((s[0] - w0) / 1e3, max((s[1] - s[0]) / 1e3, min_w)) for s in spans if s[2] == name],
                               (y - 0.35, 0.7), color=color, lw=0)
        else:
            spans = clip(coll.get(r, []))
            packed = lanes(spans)
            n = max([k for k, _ in packed], default=0) + 1
            h = 0.7 / n
            for k, s in packed:
                color = coll_color(s[2], used_coll)
                x, wdt = (s[0] - w0) / 1e3, max((s[1] - s[0]) / 1e3, min_w)
                yy = y + 0.35 - (k + 1) * h
                ax.broken_barh([(x, wdt)], (yy + h * 0.08, h * 0.84), facecolor=color, edgecolor="#5a3000", lw=0.4)
                text = size_text(s[3]) if s[3] else ""
                if text and wdt > span_ms * 0.004 * len(text) + span_ms * 0.01 and n <= 3:
                    ax.text(x + wdt / 2, yy + h / 2, text, ha="center", va="center", fontsize=6.5)
            if r in compute:
                cu = union(clip(coll.get(r, [])))
                total = sum(b - a for a, b in cu)
                if total > 0:
                    stats.append(f"rank {r}: {100 * overlap_len(cu, union(clip(compute[r]))) / total:.0f}%")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([row[0] for row in rows][::-1], fontsize=8.5)
    for k in range(1, len(ranks)):  # a rule between ranks
        ax.axhline(len(rows) - k * (len(rows) // len(ranks)) - 0.5, color="#999999", lw=0.8)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, span_ms)
    ax.set_xlabel(f"time (ms) from the start of the window: {what}")
    ax.grid(True, axis="x", alpha=0.3)
    handles = []
    if compute:
        handles.append(Patch(color=COMPUTE_COLOR, label="compute (backward pass)"))
    handles += [Patch(color=c, label=n) for n, c in sorted(used_api)]
    handles += [Patch(facecolor=c, edgecolor="#5a3000", lw=0.4, label=f"{n} in flight") for n, c in sorted(used_coll.items())]
    fig.legend(handles=handles, fontsize=7.5, loc="lower center", bbox_to_anchor=(0.5, 0.01),
               ncol=min(len(handles), 5), frameon=False)
    more = f"collective time overlapping compute: {', '.join(stats)}" if stats else ""
    title = args.title or "timeline of a traced job (WEFT_TRACE)"
    top = heading(fig, title, subtitle(args, more))
    margins(fig, top + 0.1, 0.6 + 0.2 * math.ceil(len(handles) / 5), 1.45, 0.2)
    finish(fig, args.output, args)
    return 0


# --- command line -----------------------------------------------------------------------------

def main(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-o", "--output", required=True, help="the PNG to write")
    common.add_argument("--title", help="the figure's title (default: from the input)")
    common.add_argument("--bench", help="the script that made the input, named in the title")
    common.add_argument("--setup", help='the job, e.g. "2 ranks, shared memory"')
    common.add_argument("--machine", help='the machine without its host name, e.g. "2 cores, Debian 12"')
    common.add_argument("--note", help="one more line of context (runs, date)")
    common.add_argument("--dpi", type=int, default=100)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("sweep", parents=[common], help="value and ratio against message size",
                       description="A value against message size on log-log axes for each series, and below it "
                       "each series' ratio to the anchor. INPUT: a CSV with a header naming size (compare.sh's "
                       "results.csv, compare_median.sh's all_runs.csv, ...), a header-less CSV of lines "
                       "SERIES,SIZE,VALUE (compare_hier.sh's and compare_offload.sh's all.csv), a gpu_allreduce "
                       "log or a gpu_sweep.sh LOG_DIR (weft against nccl_allreduce). Repeated rows are runs: "
                       "the median is drawn with a min-max band.")
    s.add_argument("input")
    s.add_argument("--name", action="append", help="the table (program or case) to draw; default: each")
    s.add_argument("--series", help="columns to draw, comma-separated (default: every numeric one)")
    s.add_argument("--anchor", help="the series the ratios divide by (default ompi; none for no ratio panel)")
    s.add_argument("--value-field", type=int, default=3, help="SERIES,SIZE,VALUE files: VALUE's field (3)")
    s.add_argument("--header", help="names of the columns of a CSV without a header, comma-separated")
    s.add_argument("--ylabel")
    s.add_argument("--xlabel")
    s.add_argument("--better", choices=["lower", "higher"])
    s.add_argument("--linear-y", action="store_true", help="a linear value axis (percentages)")
    s.add_argument("--in-place", action="store_true", help="GPU logs: the in-place column")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("ratios", parents=[common], help="ratios with their spread and targets",
                       description="INPUT: a guard CSV (row,numerator,denominator,better,target; the numerator "
                       "and denominator are .vals files next to it, one value a run), drawn as one row each; "
                       "or a CSV of runs (compare_median.sh's all_runs.csv), drawn as a panel per program.")
    r.add_argument("input")
    r.add_argument("--name", action="append", help="runs CSV: the programs to draw")
    r.add_argument("--series", help="runs CSV: NUMERATOR,DENOMINATOR columns (default weft,ompi)")
    r.add_argument("--value-field", type=int, default=3)
    r.add_argument("--header", help="names of the columns of a CSV without a header, comma-separated")
    r.add_argument("--xlabel")
    r.set_defaults(func=cmd_ratios)

    b = sub.add_parser("busbw", parents=[common], help="GPU all-reduce bus bandwidth",
                       description="INPUT: a gpu_allreduce log or a gpu_sweep.sh LOG_DIR; with a directory, "
                       "-o needs {run}. NCCL is drawn where the nccl_allreduce log of the same run has rows.")
    b.add_argument("input")
    b.add_argument("--algbw", action="store_true", help="algorithm bandwidth instead of bus bandwidth")
    b.set_defaults(func=cmd_busbw)

    g = sub.add_parser("bars", parents=[common], help="grouped bars from a panel,category,SERIES... CSV")
    g.add_argument("input")
    g.add_argument("--series", help="columns to draw, comma-separated")
    g.set_defaults(func=cmd_bars)

    t = sub.add_parser("timeline", parents=[common], help="per-rank Gantt chart of a merged trace",
                       description="INPUT: the output of weft_trace merge. Rows per rank: compute (with "
                       "--phases), MPI calls, collectives in flight. The window defaults to the last step whose "
                       "label starts with --step (default \"overlap\") in the phase files, else the last --last ms.")
    t.add_argument("input")
    t.add_argument("--phases", help="ddp_overlap --phases files, %%r for the rank")
    t.add_argument("--clock", nargs="*", help="the per-rank trace files, for their weft_clock offsets")
    t.add_argument("--window", help="START:END in ms after the trace's first event")
    t.add_argument("--step", help='the last step whose label starts so, e.g. "overlap 5MiB"')
    t.add_argument("--last", type=float, default=30.0, help="without phases: the last N ms (30)")
    t.add_argument("--ranks", help="ranks to draw, comma-separated")
    t.set_defaults(func=cmd_timeline)

    args = p.parse_args(argv)
    try:
        return args.func(args)
    except OSError as e:
        sys.exit(f"weft_plot.py: {e}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
