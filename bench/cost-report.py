#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""summary.csv, summary.md and cost.png from what bench/cost wrote in DIR.

Usage: bench/cost-report.py DIR [DIR ...]   (bench/vm-cost calls it)
       bench/cost-report.py --cores STOCK_DIR PATCHED_DIR
                                (per cell and dm stack, what it adds over
                                raw on each core, and the difference)
       bench/cost-report.py --steps [--plot PNG] DIR ...
                                (the runs of one kernel on successive dm
                                cores, e.g. a series patch by patch: per
                                cell and dm stack, what it adds over raw
                                after each step; PNG: dm-linear's, a line
                                per cell)
       bench/cost-report.py --compare [--plot PNG] DIR ...
                                (one table of fast-linear and linear-raw
                                over several runs; PNG: their psync cells'
                                medians per stack and cgroup case)
Per cell (lower, engine, rw, cgroup case; runs from before the cgroup
column count as root) and stack: median [min-max] and spread (max - min) of the
repetitions, in (virtual) ns per I/O; fast-linear and stack-raw: the
difference of the medians, with [min..max] of the per-repetition
differences (the stacks of one repetition ran back to back).
"""
import csv
import os
import shutil
import statistics
import subprocess
import sys

STACKS = [("raw", "raw"), ("linear", "dm-linear"), ("fast", "fastlinear"),
          ("striped", "dm-stripe"), ("crypt", "dm-crypt null")]
ENGINES = {"psync": "psync QD1", "iou": "io_uring QD1", "iou-hipri": "io_uring hipri QD1",
           "libaio16": "libaio QD16", "iou-seed": "io_uring hipri QD64 batch 16 fixedbufs"}


def read_meta(d):
    """A run's meta file as a dict."""
    return dict(line.rstrip("\n").split("=", 1) for line in open(os.path.join(d, "meta")) if "=" in line)


def read_run(d):
    """A run's meta and its summary.csv rows by cell (lower, engine, rw,
    cgroup case; runs from before the cgroup column count as root)."""
    with open(os.path.join(d, "summary.csv")) as f:
        rows = {(r["lower"], r["engine"], r["rw"], r.get("cgroup") or "root"): r for r in csv.DictReader(f)}
    return read_meta(d), rows


def gnuplot_term():
    """pngcairo where this gnuplot has it, else png."""
    return "pngcairo" if "pngcairo" in subprocess.run(
        ["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr else "png"


def dat_path(png):
    """The data file a plot of PNG is drawn from, beside it."""
    return png[:-4] + ".dat" if png.endswith(".png") else png + ".dat"


def report(d):
    meta = read_meta(d)
    with open(os.path.join(d, "cost.csv")) as f:
        res = list(csv.DictReader(f))
    cells, val, metric, iostats = [], {}, {}, {}
    for r in res:
        c = (r["lower"], r["engine"], r["rw"], r.get("cgroup") or "root")
        if c not in val:
            cells.append(c)
            val[c] = {}
        metric[c] = r["metric"]
        iostats.setdefault(c, {})[r["stack"]] = r["iostats"]
        if r["per_io_ns"] != "NA":
            val[c].setdefault(r["stack"], {})[int(r["rep"])] = float(r["per_io_ns"])

    def diffs(c, a, b):
        va, vb = val[c].get(a, {}), val[c].get(b, {})
        return [va[k] - vb[k] for k in sorted(va) if k in vb]

    def med(c, s):
        v = list(val[c].get(s, {}).values())
        return (statistics.median(v), min(v), max(v)) if v else None

    def dm(c, a, b):
        ma, mb = med(c, a), med(c, b)
        return ma[0] - mb[0] if ma and mb else None

    # the stacks this run measured (bench/cost --stacks), in STACKS' order
    have = {r["stack"] for r in res}
    stacks = [(s, t) for s, t in STACKS if s in have]
    pairs = ([("fast", "linear")] if {"fast", "linear"} <= have else []) + \
        [(s, "raw") for s, _ in stacks if s != "raw"]
    summ = []
    for c in cells:
        row = {"lower": c[0], "engine": c[1], "rw": c[2], "cgroup": c[3], "metric": metric[c],
               "iostats": iostats[c].get("fast", iostats[c].get(stacks[-1][0], ""))}
        for s, _ in stacks:
            m = med(c, s)
            row[f"{s}_median"], row[f"{s}_min"], row[f"{s}_max"] = m if m else ("NA",) * 3
            row[f"{s}_spread"] = m[2] - m[1] if m else "NA"
        for a, b in pairs:
            x = dm(c, a, b)
            q = diffs(c, a, b)
            row[f"{a}-{b}"] = x if x is not None else "NA"
            row[f"{a}-{b}_min"] = min(q) if q else "NA"
            row[f"{a}-{b}_max"] = max(q) if q else "NA"
        summ.append(row)
    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summ[0].keys()))
        w.writeheader()
        for row in summ:
            w.writerow({k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in row.items()})

    def n(v):
        return f"{v:.0f}" if isinstance(v, float) else str(v)

    out = []
    w = out.append
    w(f"# dm-fastlinear cost per I/O: {meta.get('kernel')}, dm core {meta.get('dm_core')}\n")
    w(f"- {meta.get('where')}; icount: {meta.get('icount')} (then 1 virtual ns = 1 guest instruction)")
    w(f"- command: `{meta.get('command')}`; {meta.get('reps')} repetitions x {meta.get('ios')} I/Os ({meta.get('aio_ios', '?')} for libaio QD16) "
      "per cell and stack, stacks interleaved; 4 KiB O_DIRECT; {0}".format(meta.get("date")))
    w(f"- {meta.get('module')}; {meta.get('fl_status')}")
    w(f"- {meta.get('fio')}; {meta.get('duration', '?')} s guest clock, {meta.get('wall', '?')} s wall")
    w("- ns per I/O: QD1 engines fio's mean total latency (lat_ns.mean); libaio QD16 job runtime / I/Os "
      "(runtime in ms: +-0.5 ms / I/Os)\n")
    keys = [f"{a}-{b}" for a, b in pairs]
    w("| lower | engine | rw | cgroup | " + " | ".join(t for _, t in stacks) + " | " + " | ".join(keys) + " |")
    w("| --- " * (4 + len(stacks) + len(keys)) + "|")
    plot = []
    for i, (c, row) in enumerate(zip(cells, summ)):
        line = f"| {c[0]} | {ENGINES.get(c[1], c[1])} | {c[2]} | {c[3]} |"
        for s, _ in stacks:
            line += (f" {n(row[s + '_median'])} ({n(row[s + '_spread'])}) |"
                     if row[s + "_median"] != "NA" else " NA |")
        for k in keys:
            v = row[k]
            line += (f" **{v:+.0f}** [{row[k + '_min']:+.0f}..{row[k + '_max']:+.0f}] |"
                     if k == "fast-linear" and v != "NA" else
                     f" {v:+.0f} |" if v != "NA" else " NA |")
        w(line)
        if row.get("linear-raw", "NA") != "NA" and row.get("fast-raw", "NA") != "NA":
            plot.append([i, f"{c[0]}_{c[1]}_{c[2]}_{c[3]}", row["linear-raw"], row["linear-raw_min"],
                         row["linear-raw_max"], row["fast-raw"], row["fast-raw_min"], row["fast-raw_max"]])
    w("\nStacks: median (spread = max - min over the repetitions). "
      + ("fast-linear: difference of the medians [min..max of the per-repetition differences]; "
         if "fast-linear" in keys else "")
      + "STACK-raw: what the dm stack adds per I/O (difference of the medians).")
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))

    if not plot or not shutil.which("gnuplot"):
        return
    with open(os.path.join(d, "cost.dat"), "w") as f:
        for p in plot:
            f.write(" ".join(str(x) for x in p) + "\n")
    term = gnuplot_term()
    gp = f"""
set terminal {term} size {max(800, 50 * len(plot) + 200)},600
set output '{d}/cost.png'
set title "what the dm stack adds per 4 KiB I/O over the raw device, QEMU icount (virtual ns = instructions)\\n{meta.get('kernel')}, dm core {meta.get('dm_core')}; point: difference of medians, bar: min-max of per-repetition differences" noenhanced
set ylabel 'virtual ns per I/O over raw'
set xtics rotate by -40 left noenhanced
set grid ytics
set key outside top center horizontal
set xrange [-0.7:{len(plot) - 0.3}]
set bmargin 14
set rmargin 14
plot '{d}/cost.dat' using ($1-0.12):3:4:5:xtic(2) with yerrorbars pt 7 title 'dm-linear - raw', \\
     '' using ($1+0.12):6:7:8 with yerrorbars pt 5 title 'fastlinear - raw'
"""
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)


def compare(dirs, plot=None):
    """One markdown table over several runs (kernels): per cell, fast-linear
    (difference of the medians, [min..max] of per-repetition differences)
    and linear-raw, from each run's summary.csv.  With plot (a PNG's path):
    per run, each stack's median per cgroup case of the psync cells."""
    runs, cells = [], []
    for d in dirs:
        meta, rows = read_run(d)
        for c in rows:
            if c not in cells:
                cells.append(c)
        # runs of one kernel and core (their cells differ) share a column
        label = f"{meta.get('kernel', '?').split('-amd64')[0]} {meta.get('dm_core')}"
        for name, known in runs:
            if name == label:
                known.update(rows)
                break
        else:
            runs.append((label, rows))
    print("| cell | " + " | ".join(f"{n}: fast-linear" for n, _ in runs) + " | "
          + " | ".join(f"{n}: linear-raw" for n, _ in runs) + " |")
    print("| --- " * (1 + 2 * len(runs)) + "|")
    for c in cells:
        line = f"| {c[0]} {ENGINES.get(c[1], c[1])} {c[2]} {c[3]} |"
        for _, rows in runs:
            r = rows.get(c)
            line += (f" {float(r['fast-linear']):+.0f} [{float(r['fast-linear_min']):+.0f}..{float(r['fast-linear_max']):+.0f}] |"
                     if r and r["fast-linear"] != "NA" else " |")
        for _, rows in runs:
            r = rows.get(c)
            line += f" {float(r['linear-raw']):+.0f} |" if r and r["linear-raw"] != "NA" else " |"
        print(line)
    if plot:
        plot_cgroups(runs, cells, plot)


def cores(stock, patched):
    """Per cell and dm stack of two runs (one kernel, the stock core and the
    one patched with upstream/'s series): what the stack adds over raw on
    each (difference of the medians) and patched - stock."""
    runs = []
    for d in (stock, patched):
        runs.append(read_run(d))
    (ms, rs), (mp, rp) = runs
    if ms.get("kernel") != mp.get("kernel"):
        sys.exit(f"cost-report.py: {ms.get('kernel')} and {mp.get('kernel')}: not one kernel")
    print(f"kernel {ms.get('kernel')}; dm core {ms.get('dm_core')} ({stock}) and {mp.get('dm_core')} ({patched})\n")
    print("| cell | stack | adds over raw, " + ms.get("dm_core", "?") + " | adds over raw, "
          + mp.get("dm_core", "?") + " | difference |")
    print("| --- " * 5 + "|")
    for c, r in rs.items():
        q = rp.get(c)
        for s, t in STACKS[1:]:
            k = f"{s}-raw"
            if not q or r.get(k, "NA") == "NA" or q.get(k, "NA") == "NA":
                continue
            a, b = float(r[k]), float(q[k])
            print(f"| {c[0]} {ENGINES.get(c[1], c[1])} {c[2]} {c[3]} | {t} | {a:.0f} | {b:.0f} | {b - a:+.0f} |")


def step_label(meta, d):
    """A step's name: its dm core, "diet N" for the diet core."""
    core = meta.get("dm_core", "?")
    if " + diet 1.." in core:
        return "diet " + core.rsplit("..", 1)[1]
    return core if core != "?" else os.path.basename(d.rstrip("/"))


def steps(dirs, png):
    """Per cell and dm stack, what it adds over raw on each run of DIRS
    (one kernel; in the order given), with the spread of the
    per-repetition differences, and the change from the first to the
    last."""
    runs = []
    for d in dirs:
        meta, rows = read_run(d)
        runs.append((step_label(meta, d), meta, rows))
    kernels = {m.get("kernel") for _, m, _ in runs}
    if len(kernels) != 1:
        sys.exit(f"cost-report.py: {' and '.join(sorted(map(str, kernels)))}: not one kernel")
    print(f"kernel {kernels.pop()}; steps: " + ", ".join(f"{n} ({d})" for (n, _, _), d in zip(runs, dirs)) + "\n")
    print("| cell | stack | " + " | ".join(n for n, _, _ in runs) + " | first to last |")
    print("| --- " * (len(runs) + 3) + "|")
    cells = [c for c in runs[0][2] if all(c in r for _, _, r in runs)]
    series = {}
    for c in cells:
        for s, t in STACKS[1:]:
            k = f"{s}-raw"
            vals = [r[c].get(k, "NA") for _, _, r in runs]
            if "NA" in vals:
                continue
            cols = [f"{float(r[c][k]):.0f} [{float(r[c][k + '_min']):.0f}..{float(r[c][k + '_max']):.0f}]"
                    for _, _, r in runs]
            name = f"{c[0]} {ENGINES.get(c[1], c[1])} {c[2]} {c[3]}"
            print(f"| {name} | {t} | " + " | ".join(cols) + f" | {float(vals[-1]) - float(vals[0]):+.0f} |")
            if s == "linear":
                series[name] = [float(v) for v in vals]
    print("\nEach step: what the stack adds per I/O over the raw device (difference of the medians) "
          "[min..max of the per-repetition differences].")
    if png and series and shutil.which("gnuplot"):
        plot_steps([n for n, _, _ in runs], series, png)


def plot_steps(names, series, png):
    """dm-linear's instructions over raw after each step, a line per cell."""
    dat = dat_path(png)
    with open(dat, "w") as f:
        for i, n in enumerate(names):
            f.write(f'{i} "{n}" ' + " ".join(f"{v[i]:.1f}" for v in series.values()) + "\n")
    term = gnuplot_term()
    lines = ", ".join(f"'{dat}' using 1:{j + 3}:xtic(2) with linespoints title '{c}' noenhanced"
                      for j, c in enumerate(series))
    gp = f"""
set terminal {term} size 900,560
set output '{png}'
set title "dm-linear over the raw device, per 4 KiB randread, after each step" noenhanced
set ylabel 'guest instructions per I/O over raw (QEMU icount)'
set yrange [0:*]
set grid ytics
set key outside bottom center vertical
plot {lines}, 800 with lines dashtype 2 lc rgb 'gray' title 'issue 24 goal, root cgroup'
"""
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)
    os.remove(dat)


def plot_cgroups(runs, cells, png):
    """Clustered bars, one panel per run: raw, dm-linear and fastlinear
    instructions per I/O (medians) for each cgroup case of the psync
    randread cells."""
    cases = [c for c in cells if c[1] == "psync" and c[2] == "randread"]
    if not cases or not shutil.which("gnuplot"):
        return
    dat = dat_path(png)
    top = max(float(r[f"{s}_median"]) for _, rows in runs for c in cases if (r := rows.get(c))
              for s, _ in STACKS if r[f"{s}_median"] != "NA")
    with open(dat, "w") as f:
        for _, rows in runs:
            for c in cases:
                r = rows.get(c)
                if r:
                    f.write(f'"{c[3]}" ' + " ".join(r[f"{s}_median"] for s, _ in STACKS) + "\n")
            f.write("\n\n")
    term = gnuplot_term()
    panels = "\n".join(
        f"set title '{name}' noenhanced\n"
        f"plot '{dat}' index {i} using 2:xtic(1) title 'raw', '' index {i} using 3 title 'dm-linear', "
        f"'' index {i} using 4 title 'fastlinear'"
        for i, (name, _) in enumerate(runs))
    gp = f"""
set terminal {term} size {420 * len(runs)},480
set output '{png}'
set multiplot layout 1,{len(runs)} title "instructions per 4 KiB psync randread (QEMU icount: virtual ns = guest instructions), by where fio runs" noenhanced
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:{top * 1.08:.0f}]
set xrange [-0.6:{len(cases) - 0.4}]
set ylabel 'instructions per I/O'
set xtics rotate by -40 noenhanced
set grid ytics
set key outside bottom center horizontal
{panels}
unset multiplot
"""
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)
    os.remove(dat)


def plot_args(args):
    """[--plot PNG] DIR ...: PNG (or None) and the DIRs."""
    if len(args) > 2 and args[0] == "--plot":
        return args[1], args[2:]
    return None, args


if len(sys.argv) > 2 and sys.argv[1] in ("--compare", "--steps"):
    png, dirs = plot_args(sys.argv[2:])
    (compare if sys.argv[1] == "--compare" else steps)(dirs, png)
elif len(sys.argv) == 4 and sys.argv[1] == "--cores":
    cores(sys.argv[2], sys.argv[3])
else:
    for arg in sys.argv[1:]:
        report(arg)
