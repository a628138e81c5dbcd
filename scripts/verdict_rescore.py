#!/usr/bin/env python3
"""Scores one A/B run folder twice for scripts/bench_verdicts.sh: the verdicts `augbench compare`
wrote (its JSON), and the same rule on the wall-clock ratios (Student's t over worker-process
pairs of each pair's median ln ratio, the band [1/(1 + m), 1 + m] at the m compare used), so the two clocks are
compared on the same files. Also pair-level spreads (sd of the pair medians, ln) per clock, and
the shipped rule (CPU clock, one family) on the band before December 2026, [1 − m, 1/(1 − m)].

    verdict_rescore.py RUN_DIR COMPARE_JSON LABEL   one line per transform
    verdict_rescore.py --tally FILE                 tallies per label and transform

Standard library only.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# Two-sided 95% Student's t quantiles by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 15: 2.131, 19: 2.093, 20: 2.086, 30: 2.042}


def t95(df: int) -> float:
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else math.inf


def t_quantile(df: int, p: float) -> float:
    """Student's t quantile by its Cornish-Fisher expansion around the normal one (close enough
    from 5 degrees of freedom on for a rescoring script)."""
    z = statistics.NormalDist().inv_cdf(p)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def decide(ratio: float, lo: float, hi: float, m: float, old_band: bool = False) -> str:
    low_edge, high_edge = (1 - m, 1 / (1 - m)) if old_band else (1 / (1 + m), 1 + m)
    if low_edge <= lo and hi <= high_edge:
        return "same"
    if hi < 1:
        return "regression"
    if lo > 1:
        return "faster"
    return "undecided"


def pair_interval(logs: list[float], groups: list[int], centre=statistics.median, family: int = 1):
    medians, at = [], 0
    for n in groups:
        medians.append(centre(logs[at:at + n]))
        at += n
    if len(medians) < 2:
        return None
    mean, sd = statistics.mean(medians), statistics.stdev(medians)
    df = len(medians) - 1
    # family > 1: Bonferroni over the rows an invocation judges (a gate fails on any of them).
    t = t95(df) if family == 1 else t_quantile(df, 1 - 0.025 / family)
    half = t * sd / math.sqrt(len(medians))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), sd


def rows(run: Path):
    files = {p.name.split("_micro")[0]: json.loads(p.read_text())
             for p in (run / "image-rgb" / "micro").glob("*_results.json")}
    base, cur = files.get("pillow@base"), files.get("pillow@cur")
    if not base or not cur:
        return
    for name, c in cur["results"].items():
        b = base["results"].get(name)
        if not b or c.get("status") != "ok" or b.get("status") != "ok":
            continue
        groups = c.get("process_runs") or [len(c["throughputs"])]
        wall = [math.log(x / y) for x, y in zip(c["throughputs"], b["throughputs"])]
        cpu = None
        if c.get("cpu_times") and b.get("cpu_times"):
            ct = [tp * t / u for tp, t, u in zip(c["throughputs"], c["times"], c["cpu_times"])]
            bt = [tp * t / u for tp, t, u in zip(b["throughputs"], b["times"], b["cpu_times"])]
            cpu = [math.log(x / y) for x, y in zip(ct, bt)]
        cpu_mean = pair_interval(cpu, groups, statistics.fmean) if cpu else None
        rows_judged = len([1 for r in cur["results"].values() if r.get("status") == "ok"])
        cpu_family = pair_interval(cpu, groups, family=rows_judged) if cpu else None
        yield (name, pair_interval(wall, groups), pair_interval(cpu, groups) if cpu else None,
               cpu_mean, cpu_family)


def shipped_rule(cpu, family, m: float, old_band: bool) -> str:
    """`verdict::decide_in_family` on the CPU clock: `same` on the row's 95% interval, a change
    only where the family interval shows it too."""
    if not cpu or not family:
        return "undecided"
    v = decide(*cpu[:3], m, old_band)
    if v in ("regression", "faster"):
        return v if decide(*family[:3], m, old_band) == v else "undecided"
    return v


def score(run: Path, compare_json: Path, label: str) -> None:
    shipped, m = {}, None
    if compare_json.exists():
        ab = json.loads(compare_json.read_text()).get("ab") or {}
        m = ab.get("min_effect")  # the minimum effect compare used: policy's, never restated here
        for r in ab.get("rows", []):
            shipped[r["transform"]] = r
    if m is None:
        sys.exit(f"error: {compare_json} has no A/B report to read the minimum effect from")
    for name, wall, cpu, cpu_mean, cpu_family in rows(run):
        s = shipped.get(name, {})
        ratio = s.get("ratio") or float("nan")
        wall_txt = "nan undecided nan" if not wall else \
            f"{wall[0]:.4f} {decide(*wall[:3], m)} {wall[3]:.4f}"
        cpu_sd = f"{cpu[3]:.4f}" if cpu else "nan"
        mean_txt = "nan undecided" if not cpu_mean else \
            f"{cpu_mean[0]:.4f} {decide(*cpu_mean[:3], m)}"
        mean_txt += " undecided" if not cpu_family else f" {decide(*cpu_family[:3], m)}"
        mean_txt += f" {shipped_rule(cpu, cpu_family, m, old_band=True)}"
        print(f"{label} {name} {ratio:.4f} {s.get('verdict', 'missing')} {wall_txt} "
              f"{cpu_sd} {s.get('clock', '-')} {mean_txt}")


def tally(path: Path) -> None:
    counts = defaultdict(lambda: defaultdict(int))
    sds = defaultdict(lambda: {"wall": [], "cpu": []})
    ratios = defaultdict(list)
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, name, ratio, verdict, wratio, wverdict, wsd, csd, clock, *rest = line.split()
        if rest:  # the CPU clock with each pair's mean of rounds instead of its median
            counts[(label, name)][f"mean:{rest[1]}"] += 1
        if len(rest) > 2:  # Bonferroni over the invocation's rows
            counts[(label, name)][f"family:{rest[2]}"] += 1
        if len(rest) > 3:  # the shipped rule on the band before December 2026
            counts[(label, name)][f"old:{rest[3]}"] += 1
        key = (label, name)
        counts[key]["n"] += 1
        counts[key][f"shipped:{verdict}"] += 1
        counts[key][f"wall:{wverdict}"] += 1
        ratios[key].append(float(ratio))
        sds[key]["wall"].append(float(wsd))
        sds[key]["cpu"].append(float(csd))
    print("label transform n | shipped verdicts | wall-clock rule verdicts | "
          "CPU clock, pair means | CPU clock, Bonferroni over the rows | shipped rule, old band | "
          "ratio median [min, max] | "
          "sd of pair medians (ln) wall / cpu")
    for key in sorted(counts):
        c = counts[key]
        shipped = ", ".join(f"{k[8:]} {v}" for k, v in sorted(c.items()) if k.startswith("shipped:"))
        wall = ", ".join(f"{k[5:]} {v}" for k, v in sorted(c.items()) if k.startswith("wall:"))
        mean = ", ".join(f"{k[5:]} {v}" for k, v in sorted(c.items()) if k.startswith("mean:"))
        family = ", ".join(f"{k[7:]} {v}" for k, v in sorted(c.items()) if k.startswith("family:"))
        old = ", ".join(f"{k[4:]} {v}" for k, v in sorted(c.items()) if k.startswith("old:"))
        r = sorted(x for x in ratios[key] if not math.isnan(x))
        spread = f"{statistics.median(r):.3f} [{r[0]:.3f}, {r[-1]:.3f}]" if r else "-"
        med = lambda xs: statistics.median([x for x in xs if not math.isnan(x)] or [math.nan])
        print(f"{key[0]} {key[1]} {c['n']} | {shipped} | {wall} | {mean or '-'} | {family or '-'} | {old or '-'} | {spread} | "
              f"{med(sds[key]['wall']):.4f} / {med(sds[key]['cpu']):.4f}")


if __name__ == "__main__":
    if sys.argv[1] == "--tally":
        tally(Path(sys.argv[2]))
    else:
        score(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
