#!/usr/bin/env python3
"""Reads the result files of scripts/estimator_study.sh and prints, per mode:

- for each candidate estimator of a row's per-run throughputs: its repeatability (median and worst
  |Δ| between back-to-back invocations, over rows and consecutive pairs) and its bias against the
  quiet reference (the row measured alone: each estimator against the same estimator of the quiet
  run, and against the quiet run's median);
- the figure augbench wrote (`figure_throughput`, when the binary writes one): the same numbers;
- the `unstable` marks: the share of rows marked per invocation, and the median |Δ| of the figure
  between invocations for marked and unmarked rows (a row counts as marked in a pair when either
  invocation marked it).

- with the `figures` example built (target/release/examples/figures), a calibration of the
  `unstable` spread test: for each estimator and threshold on its rerun interval's half-width,
  the share of rows it would mark and the |Δ| of marked against unmarked rows.

    python3 scripts/estimator_study.py STUDY_OUT_DIR

Standard library only.
"""

from __future__ import annotations

import json
import math
import os
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


CANDIDATES = {
    "median": lambda r: statistics.median(r["throughputs"]),
    "p75": lambda r: percentile(r["throughputs"], 75),
    "p90": lambda r: percentile(r["throughputs"], 90),
    "max (fastest run)": lambda r: max(r["throughputs"]),
    "median of process maxima": lambda r: statistics.median(max(p) for p in processes(r)),
    "best process median": lambda r: max(statistics.median(p) for p in processes(r)),
    "mean of fastest third": lambda r: upper_third_mean(r["throughputs"]),
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
        q = [k for k in keys if k in quiet]
        own = [est(i[k]) / est(quiet[k]) - 1 for i in inv for k in q]
        vs_med = [est(i[k]) / statistics.median(quiet[k]["throughputs"]) - 1 for i in inv for k in q]
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


def calibrate(runs: list[Path], inv: list[dict], keys: list) -> None:
    if not Path(FIGURES_BIN).exists():
        print(f"\n(no {FIGURES_BIN}: build it with `cargo build --release -p augbench-core --example figures` for the calibration)")
        return
    hw = [half_widths(r) for r in runs]
    print("\ncalibration of the spread test: mark a row when its figure's rerun interval is wider than ±T")
    print(f"{'estimator':<20} {'T':>5} {'marked':>7} {'|Δ| marked':>11} {'|Δ| unmarked':>13} {'ratio':>6}")
    for est in ("median", "p90", "max", "process_max_median"):
        for t in (0.05, 0.10, 0.15, 0.20, 0.30, 0.50, 0.75):
            m, u, n_marked, n = [], [], 0, 0
            for a, b, ha, hb in zip(inv, inv[1:], hw, hw[1:]):
                for k in keys:
                    if k not in ha or k not in hb:
                        continue
                    fa, fb = ha[k]["figures"][est], hb[k]["figures"][est]
                    d = delta(fa["value"], fb["value"])
                    marked = fa["half_width"] > t or fb["half_width"] > t
                    (m if marked else u).append(d)
            for h in hw:
                for k in keys:
                    if k in h:
                        n += 1
                        n_marked += h[k]["figures"][est]["half_width"] > t
            mm = statistics.median(m) if m else math.nan
            uu = statistics.median(u) if u else math.nan
            ratio = mm / uu if m and u and uu > 0 else math.nan
            print(f"{est:<20} {t:>5.2f} {n_marked / max(n, 1):>7.0%} {fmt(mm):>11} {fmt(uu):>13} {ratio:>6.2f}")
    drifts = [(h[k]["drift"] or {}) for h in hw for k in keys if k in h]
    spreads = [d["spread"] for d in drifts if d.get("spread") is not None]
    floors = [d["floor"] for d in drifts if d.get("floor") is not None]
    if spreads:
        print(f"sentinel spread over a transform's rounds: median {fmt(statistics.median(spreads))}, "
              f"p90 {fmt(percentile(spreads, 90))}; noise floor at the start: "
              f"{'median ' + fmt(statistics.median(floors)) if floors else 'not recorded'}")


def figure(r: dict) -> float:
    return r.get("figure_throughput") or statistics.median(r["throughputs"])


def marks(inv: list[dict], keys: list) -> None:
    print("\n`unstable` marks (figure: figure_throughput where written, else the median)")
    for n, i in enumerate(inv, 1):
        marked = [k for k in keys if i[k].get("unstable")]
        print(f"  invocation {n}: {len(marked)}/{len(keys)} rows marked ({len(marked) / len(keys):.0%})")
        reasons = {}
        for k in marked:
            why = (i[k].get("unstable_reason") or "").split(":")[0].split(" ")[0]
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
