#!/usr/bin/env python3
"""Target cost and its repeatability (issue: detection and segmentation targets; not a test).

Runs one targets config (micro or pipeline) INVOCATIONS times back to back, each into its own
folder, and reads every target column's paired ratio against the same library's image-only column
(`results[T].paired`, partner = the library: speed with targets ÷ image-only speed). Prints a table
per target set: each (library, transform)'s ratio in every invocation, the spread over the
invocations (max ÷ min − 1), then the median and p90 of that spread and each invocation's wall
time and load. Stdlib only; extra arguments go to every `augbench run`.

  python3 scripts/bench_target_cost.py --config configs/examples/targets_micro.yaml \
      [--invocations 3] [--bin target/release/augbench] [--out DIR] -- --num-items 50 ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(binary: str, config: str, out: Path, extra: list[str]) -> tuple[float, str]:
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    started = time.monotonic()
    command = [binary, "run", "--config", config, "--output", str(out), *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.monotonic() - started, load


def ratios(out: Path) -> dict[tuple[str, str, str], float]:
    """(set, library, transform) → paired ratio against the library's image-only column."""
    found = {}
    for path in out.rglob("*_results.json"):
        data = json.loads(path.read_text())
        targets = data["metadata"].get("targets")
        if not targets:
            continue
        for transform, row in data["results"].items():
            for pair in row.get("paired") or []:
                if pair.get("partner") == targets["library"] and pair.get("ratio"):
                    found[(targets["set"], targets["library"], transform)] = pair["ratio"]
    return found


def report(per_run: list[dict[tuple[str, str, str], float]]) -> None:
    keys = sorted(set().union(*per_run))
    spreads = []
    current = None
    for key in keys:
        if key[0] != current:
            current = key[0]
            print(f"\nimage + {current}: ratio per invocation, spread (max / min - 1)")
        values = [run[key] for run in per_run if key in run]
        spread = max(values) / min(values) - 1 if len(values) > 1 else float("nan")
        if len(values) == len(per_run):
            spreads.append(spread)
        cells = "  ".join(f"{v:5.2f}" for v in values)
        print(f"  {key[1]:<16} {key[2]:<20} {cells}   {spread * 100:5.1f}%")
    if spreads:
        spreads.sort()
        p90 = spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))]
        print(f"\nspread over {len(per_run)} invocations: median {statistics.median(spreads) * 100:.1f}%, p90 {p90 * 100:.1f}%, {len(spreads)} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--invocations", type=int, default=3)
    parser.add_argument("--bin", default=str(REPO / "target/release/augbench"))
    parser.add_argument("--out", help="folder for the invocations' outputs (default: a temporary one)")
    parser.add_argument("extra", nargs="*", help="arguments for every `augbench run` (after --)")
    args = parser.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="target-cost-"))
    per_run = []
    for index in range(args.invocations):
        wall, load = run(args.bin, args.config, root / f"run{index + 1}", args.extra)
        print(f"invocation {index + 1}: {wall:.0f} s, load before {load}", flush=True)
        per_run.append(ratios(root / f"run{index + 1}"))
    report(per_run)


if __name__ == "__main__":
    main()
