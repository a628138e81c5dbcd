#!/usr/bin/env python3
"""Benchmarks of `measure: instructions` (docs/methodology.md, "Instruction counts"); stdlib only.

Prints, from runs of the augbench binary made here, side by side in one script:

* repeatability: INVOCATIONS invocations of the same rows (libraries × transforms): the median
  and worst |Δ| of instructions per item between consecutive invocations;
* sensitivity: a real slowdown of one transform (the native worker's test hook applies it once
  more to a centred crop of P% of each item: `AUGBENCH_TEST_FAULTS=extra<P>:<transform>`), baseline
  and slowed runs alternating, each pair judged by `augbench compare --fail-on-regression`
  (exit 1 = detected); the unchanged transform of the same runs must read `same`; plus A/A pairs;
* cost: wall seconds per counted row and Valgrind's slowdown over a timed run of the same rows;
* agreement: the count ratio against the time ratio of the same slowdown (10% and 20%), both
  measured in this script, A-B-A-B.

Usage: python3 scripts/bench_counts.py [--quick]  (AUGBENCH_BIN: the binary; default the release
build). Every figure is a ratio or spread measured within this one script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = os.environ.get("AUGBENCH_BIN") or str(ROOT / "target/release/augbench")


def config(path: Path, libraries: list[str], transforms: list[str], measure: str, items: int) -> Path:
    path.write_text(
        "version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n"
        f"  libraries: [{', '.join(libraries)}]\n  transforms: [{', '.join(transforms)}]\n"
        f"data:\n  num_items: {items}\nexecution:\n  measure: {measure}\n"
        + ("  processes: 2\n  num_runs: 5\n  schedule: sequential\n" if measure == "time" else "")
    )
    return path


def run(cfg: Path, out: Path, faults: str = "") -> float:
    env = dict(os.environ)
    env.pop("AUGBENCH_TEST_FAULTS", None)
    if faults:
        env["AUGBENCH_TEST_FAULTS"] = faults
    started = time.monotonic()
    done = subprocess.run(
        [BIN, "run", "--no-refresh-requirements", "--config", str(cfg), "--output", str(out)],
        env=env, capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return time.monotonic() - started


def rows(out: Path) -> dict[tuple[str, str], dict]:
    found = {}
    for f in sorted(out.glob("image-rgb/micro/*_results.json")):
        data = json.loads(f.read_text())
        lib = data["metadata"]["library"]
        for name, r in data["results"].items():
            if r.get("status") == "ok":
                found[(lib, name)] = r
    return found


def verdicts(base: Path, cur: Path) -> tuple[int, dict[str, str]]:
    done = subprocess.run(
        [BIN, "compare", "--fail-on-regression", "--baseline", str(base), "--current", str(cur)],
        capture_output=True, text=True,
    )
    words = {}
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3:
            words[cells[1] if len(cells) > 1 else ""] = cells[-1] if cells else ""
    return done.returncode, {k: v for k, v in words.items() if k}


def repeatability(work: Path, libraries: list[str], transforms: list[str], n: int) -> None:
    cfg = config(work / "rep.yaml", libraries, transforms, "instructions", 20)
    runs = []
    for i in range(n):
        out = work / f"rep{i}"
        secs = run(cfg, out)
        runs.append(rows(out))
        print(f"  invocation {i + 1}: {secs:.0f} s", flush=True)
    deltas = []
    for a, b in zip(runs, runs[1:]):
        for key in a.keys() & b.keys():
            pa, pb = a[key]["instructions"]["per_item"], b[key]["instructions"]["per_item"]
            deltas.append((abs(pb / pa - 1) * 100, key))
    deltas.sort()
    print(f"repeatability: {len(deltas)} row pairs, median |Δ| {statistics.median(d for d, _ in deltas):.4f}%, "
          f"worst {deltas[-1][0]:.4f}% ({deltas[-1][1][0]} {deltas[-1][1][1]})")
    reps = sorted(r["instructions"]["repeatability"] * 100 for r in runs[0].values())
    print(f"  within an invocation (max-min)/median over processes: median {statistics.median(reps):.4f}%, worst {reps[-1]:.4f}%")
    for key, r in sorted(runs[0].items()):
        rec = r["instructions"]
        wall = sum(rec["wall_seconds"]) / len(rec["wall_seconds"])
        print(f"  {key[0]:>16} {key[1]:<15} {rec['per_item'] / 1e6:9.2f} M instr/item  items {rec['items']:>2}  "
              f"counted loop {wall:5.2f} s{'  (note: ' + rec['note'][:40] + '…)' if rec.get('note') else ''}")


def sensitivity(work: Path, library: str, slowed: str, unchanged: str, percents: list[int], n: int, aa: int) -> None:
    cfg = config(work / "sens.yaml", [library], [slowed, unchanged], "instructions", 20)
    for p in percents + [0]:
        pairs = aa if p == 0 else n
        fired, unchanged_ok = 0, 0
        for i in range(pairs):
            base, cur = work / f"s{p}_{i}a", work / f"s{p}_{i}b"
            run(cfg, base)
            run(cfg, cur, f"extra{p}:{slowed}" if p else "")
            code, words = verdicts(base, cur)
            fired += code == 1
            unchanged_ok += "same" in words.get(unchanged, "")
        label = "A/A" if p == 0 else f"{p}% slower"
        print(f"sensitivity {library} {slowed} {label}: gate fired {fired}/{pairs}; {unchanged} read same {unchanged_ok}/{pairs}", flush=True)


def agreement_and_cost(work: Path, library: str, transforms: list[str], percents: list[int]) -> None:
    counted = config(work / "agc.yaml", [library], transforms, "instructions", 20)
    timed = config(work / "agt.yaml", [library], transforms, "time", 20)
    for p in percents:
        faults = f"extra{p}:{transforms[0]}"
        c_ratios, t_ratios = [], []
        for i in range(2):  # A-B-A-B for both measures
            oa, ob = work / f"c{p}_{i}a", work / f"c{p}_{i}b"
            run(counted, oa); run(counted, ob, faults)
            ta, tb = work / f"t{p}_{i}a", work / f"t{p}_{i}b"
            run(timed, ta); run(timed, tb, faults)
            ra, rb = rows(oa), rows(ob)
            key = (library, transforms[0])
            c_ratios.append(rb[key]["instructions"]["per_item"] / ra[key]["instructions"]["per_item"])
            xa, xb = rows(ta), rows(tb)
            fa = xa[key].get("figure_throughput") or xa[key]["median_throughput"]
            fb = xb[key].get("figure_throughput") or xb[key]["median_throughput"]
            t_ratios.append(fa / fb)
        print(f"agreement {library} {transforms[0]} +{p}% work: instructions ×{statistics.mean(c_ratios):.4f} "
              f"({', '.join(f'{r:.4f}' for r in c_ratios)}), time ×{statistics.mean(t_ratios):.3f} "
              f"({', '.join(f'{r:.3f}' for r in t_ratios)})", flush=True)
    ra, xa = rows(work / f"c{percents[0]}_0a"), rows(work / f"t{percents[0]}_0a")
    for key in sorted(ra.keys() & xa.keys()):
        rec = ra[key]["instructions"]
        under = sum(rec["wall_seconds"]) / len(rec["wall_seconds"]) / rec["items"]
        native = 1 / (xa[key].get("figure_throughput") or xa[key]["median_throughput"])
        print(f"cost {key[0]} {key[1]}: {under * 1e3:.1f} ms/item under valgrind, {native * 1e3:.2f} ms/item timed: slowdown ×{under / native:.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer invocations (a smoke run of the script)")
    ap.add_argument("--part", choices=["all", "repeat", "sensitivity", "agreement"], default="all")
    args = ap.parse_args()
    q = args.quick
    with tempfile.TemporaryDirectory(prefix="bench_counts_") as tmp:
        work = Path(tmp)
        if args.part in ("all", "repeat"):
            repeatability(work, ["pillow", "albumentationsx", "image"],
                          ["Resize", "HorizontalFlip", "GaussianBlur", "Grayscale", "Rotate"], 2 if q else 3)
        if args.part in ("all", "sensitivity"):
            sensitivity(work, "image", "GaussianBlur", "HorizontalFlip", [1, 2, 5], 2 if q else 10, 2 if q else 20)
        if args.part in ("all", "agreement"):
            agreement_and_cost(work, "image", ["GaussianBlur", "HorizontalFlip", "Resize"], [10, 20])


if __name__ == "__main__":
    main()
