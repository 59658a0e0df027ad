#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""summary.md and ratios.png from what bench/run wrote in DIR.

Usage: bench/report.py DIR   (bench/run calls it; bench/run --report DIR too)
IOPS: median [min-max] of the repetitions per stack.  Ratios fast/linear
and fast/raw: median [min-max] of the per-repetition ratios (the stacks of
one repetition ran back to back), as a change in percent.
"""
import csv
import os
import shutil
import statistics
import subprocess
import sys

d = sys.argv[1]
STACKS = [("raw", "raw"), ("linear", "dm-linear"), ("fast", "fastlinear")]
ENGINES = {"iou-hipri": "io_uring hipri", "iou": "io_uring", "libaio": "libaio", "psync": "psync"}


def rows(name):
    with open(os.path.join(d, name)) as f:
        return list(csv.DictReader(f))


def kilo(v):
    return f"{v / 1000:.1f}k" if v >= 1000 else f"{v:.0f}"


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


meta = dict(line.rstrip("\n").split("=", 1) for line in open(os.path.join(d, "meta")) if "=" in line)
res = rows("results.csv")
cells = []
iops = {}
for r in res:
    cell = (r["lower"], r["engine"], r["rw"], r["jobs"])
    if cell not in iops:
        cells.append(cell)
        iops[cell] = {}
    if r["iops"] != "NA":
        iops[cell].setdefault(r["stack"], {})[int(r["rep"])] = float(r["iops"])


def label(c):
    return f"{c[0]} {ENGINES.get(c[1], c[1])} {c[2]} {c[3]}j"


def ratios(c, a, b):
    ra, rb = iops[c].get(a, {}), iops[c].get(b, {})
    return [ra[k] / rb[k] for k in sorted(ra) if rb.get(k)]


out = []
w = out.append
w("# dm-fastlinear bench: raw vs dm-linear vs fastlinear\n")
w(f"- kernel {meta.get('kernel')}, dm core {meta.get('dm_core')}, {meta.get('where')}")
w(f"- command: `{meta.get('command')}`")
w(f"- {meta.get('fio')}, {meta.get('reps')} repetitions x {meta.get('runtime')} s per stack and cell, "
  f"stacks interleaved (raw, linear, fast, raw, ...); 4 KiB direct I/O; "
  f"1j: one job on CPU 0, Nj: N jobs; {meta.get('date')}, {meta.get('duration', '?')} s in all")
w(f"- {meta.get('module')}")
if "guest" in meta.get("where", ""):
    w("- **In a guest (TCG: software emulation): absolute IOPS mean nothing; "
      "ratios of interleaved runs mean a little; the counts are exact.**")
w("\n## IOPS: median [min-max]; fastlinear vs the others: median change [min..max] of per-repetition ratios\n")
w("| workload | " + " | ".join(n for _, n in STACKS) + " | fast/linear | fast/raw |")
w("| --- " * (len(STACKS) + 3) + "|")
plot = []
for i, c in enumerate(cells):
    line = f"| {label(c)} |"
    for s, _ in STACKS:
        v = list(iops[c].get(s, {}).values())
        line += f" {kilo(statistics.median(v))} [{kilo(min(v))}-{kilo(max(v))}] |" if v else " NA |"
    pl = [i, label(c).replace(" ", "_")]
    for a, b in (("fast", "linear"), ("fast", "raw")):
        q = ratios(c, a, b)
        if q:
            m = statistics.median(q)
            line += f" {pct(m)} [{pct(min(q))}..{pct(max(q))}] |"
            pl += [m, min(q), max(q)]
        else:
            line += " NA |"
            pl += ["NaN"] * 3
    w(line)
    plot.append(pl)

counts = rows("counts.csv")
if counts:
    w("\n## blkg associations per I/O: `bio_associate_blkg_from_css` / `submit_bio` kprobe hits "
      f"({meta.get('nios')} I/Os per count); in brackets (from_css - submit_bio) / bios the target "
      "mapped (`linear_map`, `fastlinear_map`): what the stack adds per lower bio, the checked figure\n")
    w("| workload | " + " | ".join(n for _, n in STACKS) + " |")
    w("| --- " * (len(STACKS) + 1) + "|")
    per = {}
    for r in counts:
        per.setdefault((r["lower"], r["engine"], r["rw"], r["jobs"]), {})[r["stack"]] = r
    for c, v in per.items():
        w(f"| {label(c)} | " + " | ".join(
            f"{v[s]['per_io']} ({v[s]['from_css']}/{v[s]['submit_bio']}"
            + (f"; +{v[s]['per_map']} x {v[s]['maps']}" if v[s].get("maps", "0") != "0" else "")
            + ")" if s in v else "NA"
            for s, _ in STACKS) + " |")

funcs = rows("funcs.csv")
if funcs:
    w(f"\n## Kernel functions entered per bio: function_graph under `submit_bio`, interrupts "
      f"excluded, {meta.get('fios')} 4 KiB psync direct reads; mean (mode: the most frequent count per graph)\n")
    w("| lower | " + " | ".join(n for _, n in STACKS) + " | fast - linear |")
    w("| --- " * (len(STACKS) + 2) + "|")
    per = {}
    for r in funcs:
        per.setdefault(r["lower"], {})[r["stack"]] = r
    for lower, v in per.items():
        diff = (f"{float(v['fast']['per_bio']) - float(v['linear']['per_bio']):+.1f} "
                f"({int(v['fast']['mode']) - int(v['linear']['mode']):+d})"
                if "fast" in v and "linear" in v else "NA")
        w(f"| {lower} | " + " | ".join(
            f"{v[s]['per_bio']} ({v[s]['mode']})" if s in v else "NA" for s, _ in STACKS)
          + f" | {diff} |")

with open(os.path.join(d, "summary.md"), "w") as f:
    f.write("\n".join(out) + "\n")
print("\n".join(out))

# ratios.png: median per-repetition ratio with min-max bars, both ratios
if not plot or not shutil.which("gnuplot"):
    sys.exit(0 if plot else 1)
with open(os.path.join(d, "ratios.dat"), "w") as f:
    for p in plot:
        f.write(" ".join(str(x) for x in p) + "\n")
term = "pngcairo" if "pngcairo" in subprocess.run(
    ["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr else "png"
gp = f"""
set terminal {term} size {max(800, 60 * len(plot) + 200)},600
set output '{d}/ratios.png'
set title "fastlinear IOPS ratio per workload (median, min-max of per-repetition ratios)\\n{meta.get('kernel')}, {meta.get('where', '').split(',')[0]}" noenhanced
set ylabel 'ratio'
set xtics rotate by -40 left noenhanced
set grid ytics
set key outside top center horizontal
set xrange [-0.7:{len(plot) - 0.3}]
set bmargin 12
set rmargin 8
f(x) = 1
plot '{d}/ratios.dat' using ($1-0.12):3:4:5:xtic(2) with yerrorbars pt 7 title 'fastlinear / dm-linear', \\
     '' using ($1+0.12):6:7:8 with yerrorbars pt 5 title 'fastlinear / raw', \\
     1 with lines lc rgb 'gray' notitle
"""
subprocess.run(["gnuplot"], input=gp, text=True, check=True)
