#!/usr/bin/env python3
"""Cell-log benchmark (not a test): augbench-eval and augbench-cells against pyarrow and pandas,
measured in one run.

1. Write and read N evaluation cells with M metric columns (default 1,000,000 × 10). The Rust side
   writes its file; pyarrow reads that same file and writes it back, so both handle the same data.
2. Group R per-sample rows (default 10,000,000) into per-(scene, phase) cells: Rust groups a Parquet
   file written here; pandas runs the equivalent groupby on the same rows.

Prints the best time of --repeat runs and the ratio (Python time / Rust time; > 1 means Rust is
faster). Needs pyarrow, pandas, numpy (python/requirements-test.txt) and cargo, or --rust-bin.
Usage: python scripts/bench_cells.py [--cells N] [--metrics M] [--rows R] [--repeat K] [--rust-bin PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
SEED = 0
SCENES = 5000
PHASES = np.array(["clu", "int", "cln"])
DIFFICULTIES = np.array(["easy", "medium", "hard"])
ROW_METRICS = ["absrel", "rmse", "delta1", "silog", "log10"]


def best(repeat: int, fn):
    times, out = [], None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def rust_bin(args) -> str:
    if args.rust_bin:
        return args.rust_bin
    cmd = ["cargo", "build", "--release", "-q", "-p", "augbench-eval", "--example", "bench_cells"]
    subprocess.run(cmd, cwd=REPO, check=True)
    return str(REPO / "target" / "release" / "examples" / "bench_cells")


def run_rust(binary: str, *args) -> dict:
    out = subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def bench_write_read(binary: str, args, work: Path) -> list[tuple[str, float, float]]:
    rust = run_rust(binary, "write-read", args.cells, args.metrics, work, args.repeat)
    rust_file = Path(rust["file"])
    py_read, table = best(args.repeat, lambda: pq.read_table(rust_file))
    assert table.num_rows == args.cells
    py_file = work / "pyarrow_cells.parquet"
    py_write, _ = best(args.repeat, lambda: pq.write_table(table, py_file))
    print(f"  file sizes: rust {rust['bytes'] / 1e6:.1f} MB, pyarrow {py_file.stat().st_size / 1e6:.1f} MB")
    print(f"  rust typed write (EvalLog → file) {rust['write_typed_s']:.3f} s, typed read {rust['read_typed_s']:.3f} s")
    return [
        (f"write {args.cells:,} cells (table → Parquet)", rust["write_table_s"], py_write),
        (f"read {args.cells:,} cells (Parquet → table)", rust["read_table_s"], py_read),
    ]


def synthetic_rows(n: int) -> pa.Table:
    rng = np.random.default_rng(SEED)
    scene_ids = rng.integers(0, SCENES, n)
    scenes = np.char.add("scene_", np.char.zfill(scene_ids.astype(str), 5))
    phase_ids = rng.integers(0, 3, n)
    columns = {
        "scene": pa.array(scenes),
        "phase": pa.array(PHASES[phase_ids]),
        "difficulty": pa.array(DIFFICULTIES[scene_ids % 3]),
        "latency_ms": pa.array(rng.uniform(1, 50, n)),
    }
    for m in ROW_METRICS:
        columns[m] = pa.array(rng.random(n))
    return pa.table(columns)


def pandas_group(df: pd.DataFrame) -> pd.DataFrame:
    agg = {m: (m, "mean") for m in ROW_METRICS}
    return df.groupby(["scene", "phase"], sort=False).agg(
        n_samples=("latency_ms", "size"),
        latency_ms_mean=("latency_ms", "mean"),
        difficulty=("difficulty", "first"),
        **agg,
    )


def bench_group(binary: str, args, work: Path) -> list[tuple[str, float, float]]:
    rows_file = work / "rows.parquet"
    pq.write_table(synthetic_rows(args.rows), rows_file)
    rust = run_rust(binary, "group", rows_file, args.repeat)
    py_read, df = best(args.repeat, lambda: pd.read_parquet(rows_file))
    py_group, cells = best(args.repeat, lambda: pandas_group(df))
    assert len(cells) == rust["cells"], (len(cells), rust["cells"])
    return [
        (f"group {args.rows:,} rows (in memory)", rust["group_s"], py_group),
        (f"read + group {args.rows:,} rows", rust["read_s"] + rust["group_s"], py_read + py_group),
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=1_000_000)
    p.add_argument("--metrics", type=int, default=10)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rust-bin", help="prebuilt bench_cells example (default: cargo build --release)")
    args = p.parse_args()
    binary = rust_bin(args)
    print(f"pyarrow {pa.__version__}, pandas {pd.__version__}; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = bench_write_read(binary, args, work) + bench_group(binary, args, work)
    print(f"\n{'case':<44} {'rust s':>9} {'python s':>9} {'ratio':>7}")
    for name, rust_s, py_s in results:
        print(f"{name:<44} {rust_s:>9.3f} {py_s:>9.3f} {py_s / rust_s:>6.2f}x")
    print("ratio = python time / rust time (> 1: the Rust side is faster)")


if __name__ == "__main__":
    main()
