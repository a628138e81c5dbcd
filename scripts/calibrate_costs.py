#!/usr/bin/env python3
"""Writes `specs/costs.yaml`, the cost table `plan` reads where no earlier result of a job is in
the output folder, from the micro image results of one run (e.g. of
configs/examples/rgb_micro_matrix.yaml):

    python3 scripts/calibrate_costs.py OUTPUT_DIR "what ran, where, when" > specs/costs.yaml

Per library: a worker start's seconds and the media load's seconds per item (from the job's
`time_by_row` set-up row, over its worker processes), and each measured transform's seconds per
call (`ok`: 1 / median throughput; `slow`: the preflight's). Stdlib only.
"""

import json
import sys
from pathlib import Path


def processes(data):
    """Worker processes the job started: its longest `process_runs`, else the configured count."""
    runs = [len(r.get("process_runs") or []) for r in data["results"].values()]
    return max(runs + [data["metadata"]["benchmark_params"].get("processes") or 1, 1])


def start_costs(data):
    meta = data["metadata"]
    setup = next((r for r in meta.get("time_by_row", []) if r["transform"] == ""), None)
    parts = {p["part"]: p["seconds"] for p in (setup or {}).get("parts", [])}
    n = processes(data)
    items = meta["benchmark_params"]["num_items"]
    return parts.get("worker start", 0.0) / n, parts.get("media load", 0.0) / (n * items)


def row_costs(data):
    rows = {}
    for name, r in sorted(data["results"].items()):
        if r.get("status") == "ok" and r.get("median_throughput"):
            rows[name] = 1.0 / r["median_throughput"]
        elif r.get("status") == "slow" and r.get("preflight_sec_per_item"):
            rows[name] = r["preflight_sec_per_item"]
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, measured = Path(sys.argv[1]), sys.argv[2]
    libraries = {}
    for path in sorted(root.rglob("*_micro_results.json")):
        data = json.loads(path.read_text())
        meta = data["metadata"]
        if meta.get("dataset", {}).get("media") != "image":
            continue
        rows = row_costs(data)
        if rows:
            libraries[meta["library"]] = (start_costs(data), rows)
    if not libraries:
        sys.exit(f"{root}: no micro image results with measured rows")
    print("# Plan's costs where no earlier result of a job is in the output folder (catalog::costs).")
    print("# Written by scripts/calibrate_costs.py; seconds per call of each micro image row.")
    print(f"measured: {json.dumps(measured)}")
    print("libraries:")
    for lib, ((start, load), rows) in sorted(libraries.items()):
        print(f"  {lib}:")
        print(f"    worker_start_sec: {start:.3g}")
        print(f"    load_sec_per_item: {load:.3g}")
        print("    sec_per_item:")
        for name, sec in rows.items():
            print(f"      {name}: {sec:.3g}")


if __name__ == "__main__":
    main()
