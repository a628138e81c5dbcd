#!/usr/bin/env python3
"""Which A/B schedule buys the narrowest verdict interval for its time: P worker-process pairs of
R rounds each (docs/ab.md, "How many processes"). Reads A/A run folders (two variants of one
library, as scripts/bench_verdicts.sh writes them) and, per transform:

- splits the per-round ln ratios (thread CPU clock) into a per-pair level and round noise (one-way
  random effects: sd_level between pairs, sd_round within a pair), pooled over the folders;
- reads what a process costs before its first timed round (prepare, check, preflight, warmup,
  worker start and media load, both variants) and what one round costs (timed run and rewarm,
  both variants) from each result's `metadata.time_by_row`;
- estimates an invocation-level lean no interval over one invocation's pairs can see: the sd
  of the invocations' mean ratios beyond what their pairs' spread explains (sd_invocation);
- predicts the interval's half-width t(P−1) · sqrt((sd_level² + sd_round²/R) / P) (the pair
  figure as a mean of its rounds) for every shape that fits the time the folders' own schedule took.

    ab_shape.py RUN_DIR [RUN_DIR ...]

Standard library only.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from verdict_rescore import t95

SETUP_PARTS = {"prepare", "check", "preflight", "warmup"}
ROUND_PARTS = {"timed runs", "rewarm"}


def load(run: Path):
    files = [json.loads(p.read_text()) for p in sorted((run / "image-rgb" / "micro").glob("*_results.json"))]
    return files if len(files) == 2 else None


def cpu_logs(a: dict, b: dict):
    """Per-round ln(a ÷ b) on the CPU clock (seconds per pass: larger is slower), and the groups."""
    if not (a.get("cpu_times") and b.get("cpu_times")) or a.get("status") != "ok" or b.get("status") != "ok":
        return None
    logs = [math.log(y / x) for x, y in zip(a["cpu_times"], b["cpu_times"])]
    return logs, a.get("process_runs") or [len(logs)]


def components(cells):
    """Pooled one-way random effects over (logs, groups) cells: (sd_level, sd_round, rounds)."""
    within, between, rounds = [], [], []
    for logs, groups in cells:
        at, means = 0, []
        for n in groups:
            seg = logs[at:at + n]
            at += n
            means.append(statistics.fmean(seg))
            if n > 1:
                within.append(statistics.variance(seg))
        if len(means) > 1:
            between.append(statistics.variance(means))
            rounds.append(statistics.fmean(groups))
    if not within or not between:
        return None
    s2_round = statistics.fmean(within)
    r = statistics.fmean(rounds)
    s2_level = max(0.0, statistics.fmean(between) - s2_round / r)
    return math.sqrt(s2_level), math.sqrt(s2_round), r


def invocation_sd(cells):
    """sd of the invocations' means (of their pairs' means) beyond their pairs' own spread."""
    means, within = [], []
    for logs, groups in cells:
        at, pm = 0, []
        for n in groups:
            pm.append(statistics.fmean(logs[at:at + n]))
            at += n
        if len(pm) > 1:
            means.append(statistics.fmean(pm))
            within.append(statistics.variance(pm) / len(pm))
    if len(means) < 2:
        return float("nan")
    return math.sqrt(max(0.0, statistics.variance(means) - statistics.fmean(within)))


def costs(files, transform):
    """(per-process set-up seconds, per-round seconds), both variants, from time_by_row."""
    setup = rounds = 0.0
    procs = runs = 0
    for f in files:
        rows = {r["transform"]: r for r in f["metadata"].get("time_by_row", [])}
        res = f["results"].get(transform, {})
        procs = max(procs, len(res.get("process_runs") or [1]))
        runs = max(runs, len(res.get("times") or []))
        for p in rows.get(transform, {}).get("parts", []):
            if p["part"] in SETUP_PARTS:
                setup += p["seconds"]
            elif p["part"] in ROUND_PARTS:
                rounds += p["seconds"]
        # Worker start and media load, shared by the transforms of a process.
        shared = sum(p["seconds"] for p in rows.get("", {}).get("parts", []))
        setup += shared / max(1, len(f["results"]))
    return setup / max(1, procs), rounds / max(1, runs), procs, runs


def main(runs):
    cells = defaultdict(list)
    cost = defaultdict(list)
    for run in runs:
        files = load(run)
        if not files:
            continue
        a, b = files
        for name in a["results"]:
            c = cpu_logs(a["results"][name], b["results"].get(name, {}))
            if c:
                cells[name].append(c)
                cost[name].append(costs(files, name))
    print("transform | folders | sd_invocation | sd_level | sd_round | set-up a pair | a round (both) | "
          "half-width (±%) by shape P×R at the folders' time")
    for name in sorted(cells):
        comp = components(cells[name])
        if not comp:
            continue
        level, rnd, _ = comp
        setup = statistics.median(c[0] for c in cost[name])
        per_round = statistics.median(c[1] for c in cost[name])
        p0, r0 = cost[name][0][2], cost[name][0][3] // max(1, cost[name][0][2])
        budget = p0 * (setup + r0 * per_round)
        shapes = []
        for r in (1, 2, 3, 5, 8):
            p = int(budget // (setup + r * per_round))
            if p >= 2:
                half = t95(p - 1) * math.sqrt((level ** 2 + rnd ** 2 / r) / p)
                shapes.append(f"{p}×{r} ±{100 * math.expm1(half):.1f}%")
        print(f"{name} | {len(cells[name])} | {invocation_sd(cells[name]):.4f} | {level:.4f} | {rnd:.4f} | {setup:.2f} s | "
              f"{per_round:.2f} s | now {p0}×{r0} ({budget:.0f} s): " + ", ".join(shapes))


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]])
