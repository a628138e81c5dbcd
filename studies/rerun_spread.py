"""What a paired speedup's rerun spread is made of, read from one or two run folders.

For every pair of libraries on every transform (each pair once), the per-round ln ratios a
result file records (`paired[].ratios`) are grouped by worker process (`process_runs`). With one
folder it prints the rounds' scatter inside a process, the processes' levels beyond it, and an
empirical-Bayes fit of the pairs' variances over processes (Smyth's method of moments: the prior's
degrees of freedom d0 and scale s0). With two folders (two invocations of the same config) it also
replays three intervals against the other invocation: each pair's own Student-t interval, one
pooled sd for all pairs, and the moderated variance (the prior's and the pair's own, weighted by
their degrees of freedom), printing how often each covers the other invocation's mean of process
means and how wide it is.

    python3 studies/rerun_spread.py RUN_DIR [OTHER_RUN_DIR]     (the replay needs scipy)
"""

import glob
import json
import math
import os
import statistics as st
import sys


def load(root: str) -> dict:
    pairs = {}
    for path in glob.glob(os.path.join(root, "**", "*_micro_results.json"), recursive=True):
        lib = os.path.basename(path).replace("_micro_results.json", "")
        for transform, row in json.load(open(path))["results"].items():
            sizes = row.get("process_runs") or []
            for p in row.get("paired") or []:
                if lib >= p["partner"] or sum(sizes) != len(p["ratios"]):
                    continue
                groups, i = [], 0
                for n in sizes:
                    groups.append([math.log(r) for r in p["ratios"][i:i + n]])
                    i += n
                pairs[(transform, lib, p["partner"])] = groups
    return pairs


def trigamma(x: float) -> float:
    r = 0.0
    while x < 6:
        r, x = r + 1 / x ** 2, x + 1
    return r + 1 / x + 1 / (2 * x * x) + 1 / (6 * x ** 3) - 1 / (30 * x ** 5)


def digamma(x: float) -> float:
    r = 0.0
    while x < 6:
        r, x = r - 1 / x, x + 1
    return r + math.log(x) - 1 / (2 * x) - 1 / (12 * x * x) + 1 / (120 * x ** 4)


def prior(variances: list, dfs: list) -> tuple:
    """Smyth's moment fit of a scaled inverse chi-square prior: (d0, s0 squared)."""
    kept = [(v, d) for v, d in zip(variances, dfs) if v > 0]
    e = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v, d in kept]
    excess = st.variance(e) - st.mean(trigamma(d / 2) for _, d in kept)
    if excess <= 0:
        return math.inf, math.exp(st.mean(e))
    lo, hi = 1e-3, 1e4
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if trigamma(mid / 2) > excess else (lo, mid)
    return mid, math.exp(st.mean(e) + digamma(mid / 2) - math.log(mid / 2))


def quantile(xs: list, q: float) -> float:
    xs = sorted(xs)
    return xs[int(q * (len(xs) - 1))]


def components(pairs: dict) -> None:
    within, between, per_process = [], [], []
    for groups in pairs.values():
        per_process.append(st.mean(len(g) for g in groups))
        inside = [st.variance(g) for g in groups if len(g) >= 2]
        if inside and len(groups) >= 3:
            w, n = st.mean(inside), st.mean(len(g) for g in groups)
            within.append(w)
            between.append(max(st.variance([st.mean(g) for g in groups]) - w / n, 0.0))
    means = [st.variance([st.mean(g) for g in gs]) for gs in pairs.values() if len(gs) >= 2]
    d0, s02 = prior(means, [len(gs) - 1 for gs in pairs.values() if len(gs) >= 2])
    print(f"pairs {len(pairs)}; rounds a process: median {quantile(per_process, 0.5):.1f}")
    if within:
        print(f"rounds inside a process (pairs with 2+): sd median {math.sqrt(quantile(within, 0.5)):.3f}")
        print(f"process levels beyond the rounds: sd median {math.sqrt(quantile(between, 0.5)):.3f}, "
              f"p75 {math.sqrt(quantile(between, 0.75)):.3f}")
    print(f"sd of a pair's process means: median {math.sqrt(quantile(means, 0.5)):.3f}, "
          f"p90 {math.sqrt(quantile(means, 0.9)):.3f}")
    print(f"empirical-Bayes prior over pairs: d0 {d0:.2f}, s0 {math.sqrt(s02):.4f}")


def replay(a: dict, b: dict) -> None:
    from scipy.stats import t as student

    keys = [k for k in sorted(set(a) & set(b)) if len(a[k]) >= 2 and len(b[k]) >= 2]
    rows = []
    for k in keys:
        ma, mb = [st.mean(g) for g in a[k]], [st.mean(g) for g in b[k]]
        rows.append((st.mean(ma) - st.mean(mb), st.variance(ma), len(ma)))
    d0, s02 = prior([v for _, v, _ in rows], [g - 1 for _, _, g in rows])
    pooled = st.mean(v for _, v, _ in rows)
    agree = [abs(d) for d, _, _ in rows]
    print(f"\n{len(rows)} pairs in both; |Δ| between the invocations: median {quantile(agree, 0.5):.3f}, "
          f"p90 {quantile(agree, 0.9):.3f}, within ln 1.05: {sum(x < math.log(1.05) for x in agree)}")
    for name in ("own t", "pooled sd", "moderated"):
        covers, widths = [], []
        for d, v, g in rows:
            if name == "own t":
                var, q = v, student.ppf(0.975, g - 1)
            elif name == "pooled sd":
                var, q = pooled, 1.96
            else:
                var = (d0 * s02 + (g - 1) * v) / (d0 + g - 1)
                q = student.ppf(0.975, d0 + g - 1)
            h = q * math.sqrt(2 * var / g)
            covers.append(bool(abs(d) <= h))
            widths.append(math.exp(h) - 1)
        print(f"{name:<10} covers the other invocation in {100 * st.mean(covers):.1f}%; "
              f"half-width median ±{100 * quantile(widths, 0.5):.1f}%, within ±5%: "
              f"{sum(w <= 0.05 for w in widths)}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    first = load(sys.argv[1])
    components(first)
    if len(sys.argv) == 3:
        replay(first, load(sys.argv[2]))
