#!/usr/bin/env python3
"""How steady are a production run's speeds between implementations from one run to the next?

Runs one production config several times with each of two augbench binaries, alternating
binary by binary, A-B in odd rounds and B-A in even ones (neither always runs first), each run
into a fresh output folder. For every run it reads
the latest run's cells and computes each implementation's geometric-mean speed against the first
implementation over the recipes both measured (the tables' figure), and each implementation's
median peak PSS and RSS over its cells. It prints those per run, then per binary and
implementation the speeds' spread across runs (max / min) and the median memory figures.

Usage:
  python3 studies/production_spread.py --bin old=/path/augbench --bin new=/path/augbench \
      --rounds 3 [--config configs/examples/production_rgb_small.yaml]

Only the standard library; the binaries do the measuring.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", action="append", required=True, metavar="LABEL=PATH",
                    help="a binary to run, labelled (give two)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per binary")
    ap.add_argument("--config", default="configs/examples/production_rgb_small.yaml")
    a = ap.parse_args()
    bins = []
    for spec in a.bin:
        label, _, path = spec.partition("=")
        if not path or not Path(path).is_file():
            ap.error(f"--bin {spec}: expected LABEL=PATH of an existing binary")
        bins.append((label, path))
    if len(bins) != 2 or bins[0][0] == bins[1][0]:
        ap.error("give exactly two --bin, with different labels")
    return a, bins


def latest_cells(out: Path):
    """(implementation, recipe) → median items/s over seeds, of the latest run's ok cells; and
    implementation → [(peak PSS, peak RSS) in MiB] of its cells with memory."""
    latest = json.loads((out / "latest.json").read_text())
    run_dir = out / "runs" / latest["run_id"] / "cells"
    rates, memory = {}, {}
    for f in run_dir.rglob("seed-*.json"):
        cell = json.loads(f.read_text())
        if cell.get("status") == "ok" and cell.get("items_per_sec"):
            key = (cell["id"]["implementation"], cell["id"]["recipe"])
            rates.setdefault(key, []).append(cell["items_per_sec"])
        m = cell.get("memory") or {}
        if m.get("peak_pss_bytes") and not m.get("unavailable"):
            memory.setdefault(cell["id"]["implementation"], []).append(
                (m["peak_pss_bytes"] / 2**20, m["peak_rss_bytes"] / 2**20))
    return {k: statistics.median(v) for k, v in rates.items()}, memory


def speeds(rates, implementations):
    """Each implementation's geometric-mean speed against the first, over recipes both measured."""
    base = implementations[0]
    out = {}
    for imp in implementations[1:]:
        logs = [math.log(r / rates[(base, rec)]) for (i, rec), r in rates.items()
                if i == imp and (base, rec) in rates]
        if logs:
            out[imp] = (math.exp(statistics.fmean(logs)), len(logs))
    return out


def implementations_of(config: str):
    for line in Path(config).read_text().splitlines():
        line = line.strip()
        if line.startswith("implementations:"):
            return [s.strip() for s in line.split("[", 1)[1].rstrip("]").split(",")]
    sys.exit(f"{config}: no one-line `implementations: [...]` to read")


def one_run(binary: str, config: str, out: Path):
    t0 = time.monotonic()
    proc = subprocess.run(
        [binary, "production", "--no-refresh-requirements", "--config", config,
         "--output-dir", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{binary} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return time.monotonic() - t0


def main():
    a, bins = parse_args()
    imps = implementations_of(a.config)
    results = {label: [] for label, _ in bins}
    mem = {label: {} for label, _ in bins}
    with tempfile.TemporaryDirectory(prefix="production-spread-") as tmp:
        for r in range(a.rounds):
            for label, binary in (bins if r % 2 == 0 else bins[::-1]):
                out = Path(tmp) / f"{label}-{r}"
                wall = one_run(binary, a.config, out)
                rates, memory = latest_cells(out)
                s = speeds(rates, imps)
                results[label].append(s)
                for imp, peaks in memory.items():
                    mem[label].setdefault(imp, []).extend(peaks)
                line = ", ".join(f"{i} {g:.3f}× ({k})" for i, (g, k) in s.items())
                print(f"round {r + 1} {label:>6} {wall:5.0f} s: {line}", flush=True)
    print(f"\nspeed against {imps[0]} across runs: median [min, max], max/min")
    for label, _ in bins:
        for imp in imps[1:]:
            v = [s[imp][0] for s in results[label] if imp in s]
            if v:
                print(f"  {label:>6} {imp:<18} {statistics.median(v):.3f} "
                      f"[{min(v):.3f}, {max(v):.3f}]  {max(v) / min(v):.3f}")
    print("\ncells' peak memory, median over every cell of every run: PSS, RSS (MiB)")
    for imp in imps:
        cols = []
        for label, _ in bins:
            peaks = mem[label].get(imp, [])
            if peaks:
                cols.append(f"{label} {statistics.median(p for p, _ in peaks):6.0f}, "
                            f"{statistics.median(r for _, r in peaks):6.0f}")
        print(f"  {imp:<18} " + "   ".join(cols))
    load = os.getloadavg()[0]
    print(f"\nload average at the end: {load:.2f}")


if __name__ == "__main__":
    main()
