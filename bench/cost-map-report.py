#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""map.csv, stages.csv and map.md from what bench/cost-map wrote in DIR.

Usage: bench/cost-map-report.py DIR LEAF_INSNS
       (bench/cost-map --report DIR [--leaf-insns N] runs it, and
       bench/cost-map after measuring; see bench/cost-map for the method)
"""
import sys, os, re, gzip, csv, statistics as st
from collections import defaultdict, Counter

d, leaf_insns = sys.argv[1], float(sys.argv[2])
STACKS = [("raw", "raw"), ("linear", "dm-linear"), ("fast", "fastlinear")]
LINE = re.compile(r'^\s*\d+\)\s+(\S+)\s+\|\s*(?:[+!#*@$]\s*)?(?:([\d.]+) us)?\s*\|\s*(.*)$')

class Node:
    def __init__(s, name, parent):
        s.name, s.parent, s.kids, s.dur = name, parent, [], None
    def desc(s):	# traced calls below
        return sum(1 + k.desc() for k in s.kids)
    def walk(s):
        yield s
        for k in s.kids:
            yield from k.walk()
    def find(s, name):
        return next((n for n in s.walk() if n.name == name and n is not s), None)

def graphs(path):
    """the submit_bio() graphs of fio in a function_graph trace"""
    out, cur = [], None
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, dur, body = m.group(1), m.group(2), m.group(3).strip()
            if body.endswith("{"):
                name = body.split("(")[0].split()[0]
                if cur is None:
                    if name != "submit_bio" or not comm.startswith("fio"):
                        cur = Node(name, None); cur.skip = True
                    else:
                        cur = Node(name, None); cur.skip = False
                    top = cur
                    continue
                n = Node(name, cur); cur.kids.append(n); cur = n
            elif body.startswith("}"):
                if cur is None:
                    continue
                cur.dur = float(dur) * 1000 if dur else None
                if cur.parent is None:
                    if not top.skip and top.dur is not None:
                        out.append(top)
                    cur = None
                else:
                    cur = cur.parent
            elif body.endswith(");"):
                if cur is None:
                    continue
                n = Node(body.split("(")[0].split()[0], cur)
                n.dur = float(dur) * 1000 if dur else None
                cur.kids.append(n)
    # a graph with a duration missing (an overrun) is left out
    return [g for g in out if all(n.dur is not None for n in g.walk())]

def keys(g):
    """(path, node) for every node; siblings of one name numbered"""
    res = []
    def rec(n, p):
        res.append((p, n))
        seen = defaultdict(int)
        for k in n.kids:
            seen[k.name] += 1
            rec(k, p + "/" + k.name + ("#%d" % seen[k.name] if seen[k.name] > 1 else ""))
    rec(g, g.name)
    return res

med = lambda v: st.median(v) if v else None
def mode(v):
    """the most frequent value (rounded), the smallest of a tie: under
    icount one path runs the same instructions every time, and the
    graphs off the mode are those the tracer's ring buffer switched
    pages in (76 to 242 instructions more) or an interrupt hit"""
    if not v:
        return None
    c = Counter(round(x) for x in v)
    top = max(c.values())
    return float(min(k for k, n in c.items() if n == top))
fio = {}
with open(os.path.join(d, "fio.csv")) as f:
    for r in csv.DictReader(f):
        fio[(r["stack"], r["mode"])] = float(r["lat_ns"])

G = {}
for p in ("coarse", "fine"):
    for s, _ in STACKS:
        fn = os.path.join(d, "trace-%s-%s.txt.gz" % (p, s))
        if os.path.exists(fn):
            G[(p, s)] = graphs(fn)
        # the first graphs of a run: fio's first I/Os, cold paths
        G[(p, s)] = G.get((p, s), [])[20:]

# calibration.  c_self: the tracer's instructions inside a traced
# function's own duration (fastlinear_map, a leaf of known length);
# c_call: what each traced call adds to its caller's duration and to
# the I/O (fio: latency traced - untraced, over traced calls per I/O).
leaf = [n.dur for g in G[("fine", "fast")] for n in g.walk() if n.name == "fastlinear_map"]
c_self = mode(leaf) - leaf_insns
cal = []
for p in ("coarse", "fine"):
    for s, _ in STACKS:
        gs = G[(p, s)]
        if not gs or (s, p) not in fio or (s, "off") not in fio:
            continue
        calls = med([g.desc() + 1 for g in gs])
        cal.append((p, s, calls, fio[(s, p)] - fio[(s, "off")], (fio[(s, p)] - fio[(s, "off")]) / calls))
# cross-check: the same function's duration in both passes, over the
# extra traced calls below it in the fine one
xc = []
for s, _ in STACKS:
    for name in ("submit_bio", "dm_submit_bio", "__map_bio", "clone_endio"):
        a = [n for g in G[("coarse", s)] for n in g.walk() if n.name == name]
        b = [n for g in G[("fine", s)] for n in g.walk() if n.name == name]
        if not a or not b:
            continue
        dd = mode([n.desc() for n in b]) - mode([n.desc() for n in a])
        if dd > 0:
            xc.append((s, name, dd, mode([n.dur for n in b]) - mode([n.dur for n in a]),
                       (mode([n.dur for n in b]) - mode([n.dur for n in a])) / dd))
# what a traced call adds to its caller: the inner functions' estimate
# (submit_bio's also holds the ring buffer's page switches)
c_call = med([x[4] for x in xc if x[1] != "submit_bio"])

def inc(n):	# the instructions n ran, its traced callees' included, tracer's not
    return n.dur - c_self - n.desc() * c_call if n else 0.0
def exc(n):
    return n.dur - sum(k.dur for k in n.kids) - c_self - len(n.kids) * (c_call - c_self)

rows = []
for p in ("coarse", "fine"):
    for s, sname in STACKS:
        gs = G[(p, s)]
        acc = defaultdict(lambda: {"m": [], "i": [], "e": []})
        cnt = defaultdict(int)
        for g in gs:
            for k, n in keys(g):
                acc[k]["m"].append(n.dur); acc[k]["i"].append(inc(n)); acc[k]["e"].append(exc(n))
                cnt[k] += 1
        order = []
        for g in gs[:1]:
            order = [k for k, _ in keys(g)]
        order += sorted(k for k in acc if k not in order)
        for k in order:
            rows.append([p, sname, k, len(gs), "%.3f" % (cnt[k] / len(gs)),
                         "%.0f" % mode(acc[k]["m"]), "%.0f" % mode(acc[k]["i"]), "%.0f" % mode(acc[k]["e"]),
                         "%.0f" % med(acc[k]["i"])])
with open(os.path.join(d, "map.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["pass", "stack", "path", "graphs", "calls_per_io", "measured", "inclusive", "exclusive", "inclusive_median"])
    w.writerows(rows)

# stages, per graph of the fine pass, then medians
def stages(g):
    r = {}
    T = inc(g)
    dms = g.find("dm_submit_bio")
    mq = g.find("blk_mq_submit_bio")
    end = mq.find("bio_endio") if mq else None	# the lower's bio_endio: the clone's (dm) or the original's (raw)
    r["total"] = T
    r["lower"] = inc(mq) - inc(end)
    if dms is None:
        r["block"] = T - inc(mq)
        r["end_orig"] = inc(end)
        return r
    ai, at, mb = dms.find("alloc_io"), dms.find("alloc_tio"), dms.find("__map_bio")
    if ai is None and mb is None and dms.find("submit_bio_noacct") is not None:
        return stages_in_place(r, T, dms, mq, end)
    r["block"] = T - inc(dms) - inc(mq)
    r["submit"] = inc(dms) - inc(ai) - inc(at) - inc(mb)
    r["submit_srcu_find"] = inc(dms.find("__srcu_read_lock")) + inc(dms.find("dm_table_find_target")) + inc(dms.find("__max_io_len"))
    dp = [k for k in dms.kids if k.name == "dm_io_dec_pending"]
    r["submit_decpending"] = inc(dp[0]) if dp else 0.0
    r["alloc_io"] = inc(ai)
    r["alloc_io_bio_alloc_clone"] = inc(ai.find("bio_alloc_clone")) if ai else 0.0
    r["alloc_tio"] = inc(at)
    acct = mb.find("dm_start_io_acct") if mb else None
    sb = mb.find("submit_bio_noacct") if mb else None
    r["acct_start"] = inc(acct)
    r["acct_start_bdev"] = inc(acct.find("bdev_start_io_acct")) if acct else 0.0
    r["clone_submit"] = inc(sb)
    r["clone_submit_cgroup"] = inc(sb.find("blk_cgroup_bio_start")) if sb else 0.0
    r["remap"] = inc(mb) - inc(acct) - inc(sb)
    tm = (mb.find("linear_map") or mb.find("fastlinear_map")) if mb else None
    r["remap_map"] = inc(tm)
    r["remap_map_assoc"] = inc(tm.find("bio_associate_blkg")) if tm else 0.0
    r["remap_clone_assoc"] = inc(mb.find("bio_clone_blkg_association")) if mb else 0.0
    ce = end.find("clone_endio") if end else None
    cpl = ce.find("__dm_io_complete") if ce else None
    orig = cpl.find("bio_endio") if cpl else (ce.find("bio_endio") if ce else None)
    ea = cpl.find("dm_io_acct") if cpl else None
    fr = cpl.find("bio_put") if cpl else None
    r["end_orig"] = inc(orig)
    r["acct_end"] = inc(ea)
    r["acct_end_bdev"] = inc(ea.find("bdev_end_io_acct")) if ea else 0.0
    r["free"] = inc(fr)
    r["completion"] = inc(end) - inc(orig) - inc(ea) - inc(fr)
    r["completion_bio_endio_clone"] = exc(end) if end else 0.0
    return r

# dm remapped the original bio in place (upstream/diet/ 05): no clone, no
# __map_bio(); dm_submit_bio() accounts, maps, associates and requeues the
# original, whose completion the lower's bio_endio() runs through dm's
# hook (dm_remap_endio(): accounting, the record, then the original's
# bio_endio()).  The same rows, read for that path.
def below(n, a):	# n in a's graph
    while n is not None and a is not None:
        if n is a:
            return True
        n = n.parent
    return False

def stages_in_place(r, T, dms, mq, end):
    acct, tm = dms.find("bdev_start_io_acct"), dms.find("linear_map") or dms.find("fastlinear_map")
    # the association dm core makes, not one the target's map may make
    asc = next((n for n in dms.walk() if n.name == "bio_associate_blkg" and not below(n, tm)), None)
    sb = dms.find("submit_bio_noacct")
    r["block"] = T - inc(dms) - inc(mq)
    r["submit"] = inc(dms) - inc(acct) - inc(tm) - inc(asc) - inc(sb)
    r["acct_start"] = r["acct_start_bdev"] = inc(acct)
    r["remap"] = inc(tm) + inc(asc)
    r["remap_map"] = inc(tm)
    r["remap_inplace_assoc"] = inc(asc)
    r["clone_submit"] = inc(sb)
    r["clone_submit_cgroup"] = inc(sb.find("blk_cgroup_bio_start"))
    orig = end.find("bio_endio") if end else None
    ea = end.find("bdev_end_io_acct") if end else None
    r["end_orig"] = inc(orig)
    r["acct_end"] = r["acct_end_bdev"] = inc(ea)
    r["completion"] = inc(end) - inc(orig) - inc(ea)
    r["completion_bio_endio_clone"] = exc(end) if end else 0.0
    return r

S = {}
for s, _ in STACKS:
    per = defaultdict(list)
    for g in G[("fine", s)]:
        for k, v in stages(g).items():
            per[k].append(v)
    S[s] = {k: mode(v) for k, v in per.items()}

ROWS = [
    ("block", "block layer around dm: submit_bio(), submit_bio_noacct() of the original, dm's queue enter/exit and plug, __submit_bio_noacct()'s loop (raw: the same for its one pass)"),
    ("submit", "dm submit path: dm_submit_bio() and what it inlines (dm_split_and_process_bio, __split_and_process_bio, init_clone_info), less the rows below"),
    ("submit_srcu_find", "  of which __srcu_read_lock, dm_table_find_target, __max_io_len"),
    ("submit_decpending", "  of which dm_io_dec_pending() of the submission reference"),
    ("alloc_io", "clone allocation: alloc_io()"),
    ("alloc_io_bio_alloc_clone", "  of which bio_alloc_clone()"),
    ("alloc_tio", "clone allocation: alloc_tio() (the embedded tio)"),
    ("acct_start", "accounting, start: dm_start_io_acct()"),
    ("acct_start_bdev", "  of which bdev_start_io_acct()"),
    ("remap", "remap: __map_bio(), the target's map, dm_submit_bio_remap() (less accounting and the clone's submit_bio_noacct)"),
    ("remap_map", "  of which linear_map() / fastlinear_map()"),
    ("remap_map_assoc", "    of which bio_associate_blkg() (bio_set_dev)"),
    ("remap_clone_assoc", "  of which bio_clone_blkg_association()"),
    ("remap_inplace_assoc", "  of which bio_associate_blkg() of the original remapped in place (diet 05: no clone; the rows above and below then read for that path)"),
    ("clone_submit", "the clone's (in place: the original's) submit_bio_noacct(): checks, blk_cgroup_bio_start, onto current->bio_list"),
    ("clone_submit_cgroup", "  of which blk_cgroup_bio_start()"),
    ("lower", "lower device: blk_mq_submit_bio() less the bio_endio() it calls (null_blk, blk-mq, its accounting)"),
    ("completion", "completion: the clone's bio_endio(), clone_endio(), dm_io_dec_pending(), __dm_io_complete() (in place: the lower's bio_endio(), dm_remap_endio()), less the rows below"),
    ("acct_end", "accounting, end: dm_io_acct() from __dm_io_complete()"),
    ("acct_end_bdev", "  of which bdev_end_io_acct()"),
    ("free", "free: bio_put() of the clone (free_io)"),
    ("end_orig", "bio_endio() of the original (raw: the lower's bio_endio), submit_bio_wait_endio/complete"),
    ("total", "total: submit_bio() of the I/O"),
]
f_ = lambda v: "" if v is None else "%.0f" % v
def sg(v):
    return "" if v is None else "%+.0f" % v
with open(os.path.join(d, "stages.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["stage", "what", "raw", "linear", "fast", "linear_minus_raw", "fast_minus_raw", "fast_minus_linear"])
    for k, what in ROWS:
        r, l, fa = S["raw"].get(k), S["linear"].get(k), S["fast"].get(k)
        w.writerow([k, what.strip(), f_(r), f_(l), f_(fa),
                    f_(None if l is None else l - (r or 0)), f_(None if fa is None else fa - (r or 0)),
                    f_(None if l is None or fa is None else fa - l)])

md = []
md.append("Instructions per 4 KiB psync randread (QD 1), nullb-nomem, modes over the fine pass's graphs (%s graphs raw, %s dm-linear, %s fastlinear); inclusive, tracer taken off.\n"
          % (len(G[("fine", "raw")]), len(G[("fine", "linear")]), len(G[("fine", "fast")])))
md.append("| stage | raw | dm-linear | fastlinear | linear-raw | fast-raw | fast-linear |")
md.append("| --- | --- | --- | --- | --- | --- | --- |")
for k, what in ROWS:
    r, l, fa = S["raw"].get(k), S["linear"].get(k), S["fast"].get(k)
    ind = len(what) - len(what.lstrip())
    label = ("&nbsp;" * (2 * ind)) + what.strip()
    md.append("| %s | %s | %s | %s | %s | %s | %s |" % (label, f_(r), f_(l), f_(fa),
              sg(None if l is None else l - (r or 0)), sg(None if fa is None else fa - (r or 0)),
              sg(None if l is None or fa is None else fa - l)))
md.append("")
md.append("fio, mean latency per I/O (virtual ns), tracing off / coarse / fine:\n")
md.append("| stack | off | coarse | fine |")
md.append("| --- | --- | --- | --- |")
for s, sname in STACKS:
    md.append("| %s | %s | %s | %s |" % (sname, *[f_(fio.get((s, m))) for m in ("off", "coarse", "fine")]))
md.append("")
md.append("Calibration: c_self = %.1f (fastlinear_map() traced: %.0f, untraced %.0f instructions after its endbr64); c_call = %.1f (median of the cross-check below, submit_bio left out); fio\'s estimate per traced call also holds the ring buffer\'s page switches\n"
          % (c_self, mode(leaf), leaf_insns, c_call))
md.append("| pass | stack | traced calls per I/O | fio traced - untraced | per call |")
md.append("| --- | --- | --- | --- | --- |")
for p, s, calls, dl, pc in cal:
    md.append("| %s | %s | %.0f | %.0f | %.1f |" % (p, s, calls, dl, pc))
md.append("")
md.append("Cross-check: a function's measured duration, fine pass - coarse pass, over the traced calls the fine pass adds below it:\n")
md.append("| stack | function | extra traced calls | extra duration | per call |")
md.append("| --- | --- | --- | --- | --- |")
for s, name, dd, dm_, pc in xc:
    md.append("| %s | %s | %.0f | %.0f | %.1f |" % (s, name, dd, dm_, pc))
md.append("")
md.append("Per function: %s (inclusive = measured - c_self - traced calls below x c_call)." % "map.csv")
open(os.path.join(d, "map.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
