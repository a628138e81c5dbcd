#!/usr/bin/env python3
"""Reads the result files of studies/estimator_study.sh and prints, per mode:

- for each candidate estimator of a row's per-run throughputs: its repeatability (median and worst
  |Δ| between back-to-back invocations, over rows and consecutive pairs) and its bias against the
  quiet reference (the row measured alone: each estimator against the same estimator of the quiet
  run, and against the quiet run's median);
- the figure augbench wrote (`figure_throughput`, when the binary writes one): the same numbers;
- the `unstable` marks: the share of rows marked per invocation, and the median |Δ| of the figure
  between invocations for marked and unmarked rows (a row counts as marked in a pair when either
  invocation marked it).

- with the `figures` example built (target/release/examples/figures), a calibration of
  `unstable`: for each candidate test (policy's: how far the fastest process read above the
  figure; the rerun interval's half-width; the drift sentinel's spread) and threshold, the share
  of rows it would mark and the |Δ| of marked against unmarked rows; and how often an
  invocation's recorded interval holds the next one's figure and paired speedup.

    python3 studies/estimator_study.py STUDY_OUT_DIR

Standard library only.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

FIGURES_BIN = os.environ.get("FIGURES_BIN", "target/release/examples/figures")


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    rank = q / 100 * (len(s) - 1)
    lo, hi = math.floor(rank), math.ceil(rank)
    return s[lo] + (s[hi] - s[lo]) * (rank - lo)


def processes(r: dict) -> list[list[float]]:
    xs = r["throughputs"]
    runs = r.get("process_runs") or [len(xs)]
    out, i = [], 0
    for n in runs:
        out.append(xs[i : i + n])
        i += n
    return out


def upper_third_mean(xs: list[float]) -> float:
    s = sorted(xs, reverse=True)
    k = max(1, len(s) // 3)
    return statistics.mean(s[:k])


def sentinel_rounds(r: dict) -> list[list[tuple[float, float]]] | None:
    """Each process's (throughput, the drift sentinel's ms in the same round) pairs, when the
    row ran every round the sentinel timed; None otherwise."""
    ms = (r.get("drift") or {}).get("times_ms") or []
    if len(ms) != len(r["throughputs"]):
        return None
    out, i = [], 0
    for n in r.get("process_runs") or [len(ms)]:
        out.append(list(zip(r["throughputs"][i : i + n], ms[i : i + n])))
        i += n
    return out


def sentinel_scaled(r: dict, per_round: bool) -> float:
    """The median over processes of each process's fastest run, scaled by the machine's speed as
    the drift sentinel read it (throughput × sentinel ms: a slow host slows both); per round, or
    by the process's median sentinel time. NaN when the runs and the sentinel do not align."""
    ps = sentinel_rounds(r)
    if ps is None:
        return math.nan
    if per_round:
        return statistics.median(max(t * s for t, s in p) for p in ps)
    return statistics.median(max(t for t, _ in p) * statistics.median(s for _, s in p) for p in ps)


CANDIDATES = {
    "median": lambda r: statistics.median(r["throughputs"]),
    "p75": lambda r: percentile(r["throughputs"], 75),
    "p90": lambda r: percentile(r["throughputs"], 90),
    "max (fastest run)": lambda r: max(r["throughputs"]),
    "median of process maxima": lambda r: statistics.median(max(p) for p in processes(r)),
    "best process median": lambda r: max(statistics.median(p) for p in processes(r)),
    "mean of fastest third": lambda r: upper_third_mean(r["throughputs"]),
    "sentinel-scaled, per round": lambda r: sentinel_scaled(r, True),
    "sentinel-scaled, per process": lambda r: sentinel_scaled(r, False),
}


def load(run: Path) -> dict[tuple[str, str], dict]:
    rows = {}
    for f in sorted(run.glob("**/*_results.json")):
        d = json.loads(f.read_text())
        lib = d["metadata"]["library"]
        for t, r in d["results"].items():
            tps = [x for x in r.get("throughputs") or [] if x is not None and x > 0]
            if r.get("status") == "ok" and tps:
                r["throughputs"] = tps
                rows[(lib, t)] = r
    return rows


def delta(a: float, b: float) -> float:
    return abs(b / a - 1)


def fmt(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x * 100:.1f}%"


def study(out: Path, mode: str) -> None:
    runs = sorted(
        (p for p in out.glob(f"{mode}-*") if p.is_dir() and not p.name.endswith("quiet")),
        key=lambda p: int(p.name.rsplit("-", 1)[1]),
    )
    quiet_dir = out / f"{mode}-quiet"
    if len(runs) < 2:
        return
    inv = [load(r) for r in runs]
    quiet = load(quiet_dir) if quiet_dir.is_dir() else {}
    keys = sorted(set.intersection(*(set(i) for i in inv)))
    print(f"\n== {mode}: {len(keys)} rows measured in all {len(inv)} invocations"
          f" ({len([k for k in keys if k in quiet])} also in the quiet reference)")
    print(f"{'estimator':<27} {'med |Δ|':>8} {'p90 |Δ|':>8} {'worst':>8} {'bias vs own quiet':>18}"
          f" {'|bias|':>7} {'vs quiet median':>16}")
    ests = dict(CANDIDATES)
    if all("figure_throughput" in i[k] for i in inv for k in keys):
        ests["augbench figure"] = lambda r: r["figure_throughput"]
    for name, est in ests.items():
        ds = [delta(est(a[k]), est(b[k])) for a, b in zip(inv, inv[1:]) for k in keys]
        ds = [d for d in ds if not math.isnan(d)]
        if not ds:
            print(f"{name:<27} (not computable from these files)")
            continue
        q = [k for k in keys if k in quiet]
        own = [x for x in (est(i[k]) / est(quiet[k]) - 1 for i in inv for k in q) if not math.isnan(x)]
        vs_med = [x for x in (est(i[k]) / statistics.median(quiet[k]["throughputs"]) - 1 for i in inv for k in q)
                  if not math.isnan(x) and not name.startswith("sentinel")]
        print(f"{name:<27} {fmt(statistics.median(ds)):>8} {fmt(percentile(ds, 90)):>8}"
              f" {fmt(max(ds)):>8} {fmt(statistics.median(own) if own else math.nan):>18}"
              f" {fmt(statistics.median(map(abs, own)) if own else math.nan):>7}"
              f" {fmt(statistics.median(vs_med) if vs_med else math.nan):>16}")
    marks(inv, keys)
    calibrate(runs, inv, keys)


def half_widths(run: Path) -> dict:
    files = [str(f) for f in sorted(run.glob("**/*_results.json"))]
    out = subprocess.run([FIGURES_BIN, *files], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        d = json.loads(line)
        rows[(d["library"], d["transform"])] = d
    return rows


def marked_split(inv: list[dict], keys: list, test) -> tuple[float, float, float]:
    """Share of rows `test(invocation, key)` marks, and the median |Δ| of the figure between
    consecutive invocations for rows marked in either of the two, and for the rest."""
    n_marked = sum(bool(test(n, k)) for n in range(len(inv)) for k in keys)
    m, u = [], []
    for n in range(len(inv) - 1):
        for k in keys:
            d = delta(figure(inv[n][k]), figure(inv[n + 1][k]))
            (m if test(n, k) or test(n + 1, k) else u).append(d)
    med = lambda xs: statistics.median(xs) if xs else math.nan
    return n_marked / max(len(inv) * len(keys), 1), med(m), med(u)


def calibrate(runs: list[Path], inv: list[dict], keys: list) -> None:
    if not Path(FIGURES_BIN).exists():
        print(f"\n(no {FIGURES_BIN}: build it with `cargo build --release -p augbench-core --example figures` for the calibration)")
        return
    hw = [half_widths(r) for r in runs]
    keys = [k for k in keys if all(k in h for h in hw)]
    print("\ncalibration of `unstable`: mark a row when the test's number is above T")
    print(f"{'test':<44} {'T':>5} {'marked':>7} {'|Δ| marked':>11} {'|Δ| unmarked':>13} {'ratio':>6}")
    tests = [("fastest process above the figure (policy)", "gap", "process_max_median", (0.15, 0.2, 0.25, 0.3, 0.4))]
    tests += [(f"rerun interval half-width, {e}", "half_width", e, (0.1, 0.3, 0.5, 1.0)) for e in ("median", "process_max_median")]
    for name, field, est, ts in tests:
        for t in ts:
            val = lambda n, k: hw[n][k]["figures"][est][field]
            share, mm, uu = marked_split(inv, keys, lambda n, k: (val(n, k) or 0) > t)
            ratio = mm / uu if uu and uu > 0 and not math.isnan(mm) else math.nan
            print(f"{name:<44} {t:>5.2f} {share:>7.0%} {fmt(mm):>11} {fmt(uu):>13} {ratio:>6.2f}")
    cover(inv, keys)
    drifts = [(h[k]["drift"] or {}) for h in hw for k in keys if k in h]
    spreads = [d["spread"] for d in drifts if d.get("spread") is not None]
    floors = [d["floor"] for d in drifts if d.get("floor") is not None]
    if spreads:
        print(f"sentinel spread over a transform's rounds: median {fmt(statistics.median(spreads))}, "
              f"p90 {fmt(percentile(spreads, 90))}; noise floor at the start: "
              f"{'median ' + fmt(statistics.median(floors)) if floors else 'not recorded'}")
        for t in (0.2, 0.3, 0.4):
            share, mm, uu = marked_split(inv, keys, lambda n, k: ((hw[n][k]["drift"] or {}).get("spread") or 0) > t)
            print(f"  if drift marked rows at a spread above {t:.0%}: {share:.0%} marked, |Δ| {fmt(mm)} vs {fmt(uu)}")


def cover(inv: list[dict], keys: list) -> None:
    """How often one invocation's recorded interval holds the next invocation's value (both ways),
    for the figure and for every paired speedup; and the paired speedups' |Δ|."""
    cov = tot = 0
    for a, b in zip(inv, inv[1:]):
        for k in keys:
            for x, y in ((a[k], b[k]), (b[k], a[k])):
                if "figure_low" in x and "figure_throughput" in y:
                    tot += 1
                    cov += x["figure_low"] <= y["figure_throughput"] <= x["figure_high"]
    if tot:
        print(f"figure rerun interval holds the next invocation's figure: {cov}/{tot} ({cov / tot:.0%})")
    pairs = lambda i: {(lib, p["partner"], t): p for (lib, t), r in i.items() for p in r.get("paired") or [] if lib < p["partner"]}
    ps = [pairs(i) for i in inv]
    common = sorted(set.intersection(*(set(p) for p in ps))) if ps else []
    if not common:
        return
    ds, cov, tot = [], 0, 0
    for a, b in zip(ps, ps[1:]):
        for k in common:
            ds.append(delta(a[k]["ratio"], b[k]["ratio"]))
            for x, y in ((a[k], b[k]), (b[k], a[k])):
                tot += 1
                cov += x["rerun_low"] <= y["ratio"] <= x["rerun_high"]
    print(f"paired speedups ({len(common)} pairs): |Δ| median {fmt(statistics.median(ds))}, p90 {fmt(percentile(ds, 90))};"
          f" rerun interval holds the next invocation's ratio {cov}/{tot} ({cov / tot:.0%})")


def figure(r: dict) -> float:
    return r.get("figure_throughput") or statistics.median(r["throughputs"])


def marks(inv: list[dict], keys: list) -> None:
    print("\n`unstable` marks (figure: figure_throughput where written, else the median)")
    for n, i in enumerate(inv, 1):
        marked = [k for k in keys if i[k].get("unstable")]
        print(f"  invocation {n}: {len(marked)}/{len(keys)} rows marked ({len(marked) / len(keys):.0%})")
        reasons = {}
        for k in marked:
            # The test's name: the reason up to its first number, colon or parenthesis.
            why = re.split(r"[:\d(]", i[k].get("unstable_reason") or "")[0].strip()
            reasons[why] = reasons.get(why, 0) + 1
        if reasons:
            print("    tests fired:", ", ".join(f"{w or '?'} {c}" for w, c in sorted(reasons.items())))
    m, u = [], []
    for a, b in zip(inv, inv[1:]):
        for k in keys:
            d = delta(figure(a[k]), figure(b[k]))
            (m if a[k].get("unstable") or b[k].get("unstable") else u).append(d)
    print(f"  |Δ| of the figure between invocations: marked median {fmt(statistics.median(m)) if m else 'n/a'}"
          f" (n={len(m)}), unmarked median {fmt(statistics.median(u)) if u else 'n/a'} (n={len(u)})")
    if m and u and statistics.median(u) > 0:
        print(f"  marked / unmarked: {statistics.median(m) / statistics.median(u):.2f} (target >= 2)")
    rows = []
    for k in keys:
        ds = [delta(figure(a[k]), figure(b[k])) for a, b in zip(inv, inv[1:])]
        rows.append((max(ds), k))
    rows.sort(reverse=True)
    print("  rows whose figure moved most:",
          ", ".join(f"{l}/{t} {fmt(d)}" for d, (l, t) in rows[:5]))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: estimator_study.py STUDY_OUT_DIR")
    out = Path(sys.argv[1])
    for mode in ("micro", "pipeline"):
        study(out, mode)


if __name__ == "__main__":
    main()
