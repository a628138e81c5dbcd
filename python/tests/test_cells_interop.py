"""Cell-log interop in both directions: Parquet written by ``augbench cells`` opens in pyarrow,
pandas, polars and DuckDB with the contract's columns, types and values (and the polars and
DuckDB examples of docs/cells.md compute what they say); Parquet written by pyarrow and pandas
in the reference column layout reads with ``augbench cells show``.

The binary comes from ``$AUGBENCH_BIN`` or ``target/debug/augbench`` at the repository root.
Requirements: python/requirements-test.txt.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import require

pytestmark = pytest.mark.environment("interop")

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "crates" / "augbench-eval" / "tests" / "golden"

# The seed contract's fixed columns and types, in order (the oracle this test checks against).
CONTRACT = [
    ("model_name", pa.string()),
    ("task", pa.string()),
    ("scene_id", pa.string()),
    ("phase", pa.string()),
    ("difficulty", pa.string()),
    ("n_samples", pa.int64()),
    ("frame_budget", pa.int64()),
    ("latency_ms_mean", pa.float64()),
    ("gpu_name", pa.string()),
    ("gpu_memory_gb", pa.float64()),
    ("precision", pa.string()),
    ("batch_size", pa.int64()),
    ("toolkit_version", pa.string()),
    ("git_sha", pa.string()),
    ("timestamp_utc", pa.string()),
]
GOLDEN_METRICS = ["absrel", "rmse", "delta1"]
REL_TOL = 1e-12


def augbench_bin() -> str:
    path = os.environ.get("AUGBENCH_BIN") or str(REPO / "target" / "debug" / "augbench")
    assert Path(path).is_file(), f"augbench binary not found at {path}; build it or set AUGBENCH_BIN"
    return path


def augbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([augbench_bin(), *args], capture_output=True, text=True, check=False)


def group_golden(out: Path) -> None:
    res = augbench(
        "cells", "group",
        "--model", "DepthNet-S", "--task", "monocular_depth",
        "--metric-keys", ",".join(GOLDEN_METRICS), "--git-sha", "0a1b2c3",
        "--system-card", str(GOLDEN / "system_card.json"),
        str(GOLDEN / "rows.jsonl"), "-o", str(out),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr


def close(a, b) -> bool:
    if isinstance(b, float):
        return math.isclose(a, b, rel_tol=REL_TOL)
    return a == b


def expected_cells() -> list[dict]:
    return json.loads((GOLDEN / "expected_cells.json").read_text())


def test_our_parquet_opens_in_pyarrow_with_contract_schema_and_values(tmp_path):
    out = tmp_path / "cells.parquet"
    group_golden(out)
    table = pq.read_table(out)
    want_schema = CONTRACT + [(f"metric:{m}", pa.float64()) for m in GOLDEN_METRICS]
    assert [(f.name, f.type) for f in table.schema] == want_schema
    rows = sorted(table.to_pylist(), key=lambda r: (r["scene_id"], r["phase"]))
    want = expected_cells()
    assert len(rows) == len(want)
    for got, exp in zip(rows, want):
        for key, value in exp.items():
            assert close(got[key], value), (exp["scene_id"], exp["phase"], key, got[key], value)


def test_pandas_reads_the_same_values(tmp_path):
    out = tmp_path / "cells.parquet"
    group_golden(out)
    df = pd.read_parquet(out).sort_values(["scene_id", "phase"]).reset_index(drop=True)
    assert list(df.columns[: len(CONTRACT)]) == [name for name, _ in CONTRACT]
    assert str(df["n_samples"].dtype) == "int64"
    for i, exp in enumerate(expected_cells()):
        assert close(float(df.loc[i, "metric:rmse"]), exp["metric:rmse"])


def phase_means(metric: str) -> dict[str, float]:
    """Per phase, the mean over cells of one metric, and the samples summed: what the docs'
    polars and DuckDB examples (docs/cells.md, "Reading a cell log") compute."""
    by_phase: dict[str, list[dict]] = {}
    for cell in expected_cells():
        by_phase.setdefault(cell["phase"], []).append(cell)
    return {
        phase: (sum(c[metric] for c in cells) / len(cells), sum(c["n_samples"] for c in cells))
        for phase, cells in sorted(by_phase.items())
    }


def test_polars_reads_it_and_the_docs_example_runs(tmp_path):
    pl = require("polars")
    out = tmp_path / "cells.parquet"
    group_golden(out)
    names = [name for name, _ in CONTRACT] + [f"metric:{m}" for m in GOLDEN_METRICS]
    cells = pl.read_parquet(out)
    assert cells.columns == names
    assert cells.schema["n_samples"] == pl.Int64 and cells.schema["metric:rmse"] == pl.Float64
    # docs/cells.md: cells.group_by("phase").agg(pl.col("^metric:.*$").mean())
    means = cells.group_by("phase").agg(pl.col("^metric:.*$").mean()).sort("phase")
    assert means.columns == ["phase"] + [f"metric:{m}" for m in GOLDEN_METRICS]
    want = phase_means("metric:absrel")
    assert means["phase"].to_list() == list(want)
    for got, (mean, _) in zip(means["metric:absrel"].to_list(), want.values()):
        assert math.isclose(got, mean, rel_tol=REL_TOL)


def test_duckdb_reads_it_and_the_docs_query_runs(tmp_path):
    duckdb = require("duckdb")
    out = tmp_path / "cells.parquet"
    group_golden(out)
    names = [name for name, _ in CONTRACT] + [f"metric:{m}" for m in GOLDEN_METRICS]
    assert [d[0] for d in duckdb.sql(f"SELECT * FROM '{out}'").description] == names
    # docs/cells.md's query, on this file
    rows = duckdb.sql(
        f"""SELECT phase, avg("metric:absrel") AS absrel, sum(n_samples) AS samples
        FROM '{out}' GROUP BY phase ORDER BY phase"""
    ).fetchall()
    want = phase_means("metric:absrel")
    assert [row[0] for row in rows] == list(want)
    for (_, absrel, samples), (mean, total) in zip(rows, want.values()):
        assert math.isclose(absrel, mean, rel_tol=REL_TOL)
        assert samples == total


def test_empty_input_gives_a_schema_only_file(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("")
    out = tmp_path / "cells.parquet"
    res = augbench("cells", "group", "--model", "m", "--task", "t", "--system-card", "none", str(rows), "-o", str(out))
    assert res.returncode == 0, res.stderr
    table = pq.read_table(out)
    assert table.num_rows == 0
    assert [(f.name, f.type) for f in table.schema] == CONTRACT


def reference_layout_rows() -> list[dict]:
    """Cells as the reference writer builds them: plain Python values, None where unknown."""
    base = {
        "model_name": "DA3 Metric-L", "task": "video_depth", "difficulty": None,
        "frame_budget": 25, "latency_ms_mean": None, "gpu_name": None, "gpu_memory_gb": None,
        "precision": None, "batch_size": None, "toolkit_version": "0.4.1", "git_sha": None,
        "timestamp_utc": "2026-01-01T00:00:00+00:00",
    }  # fmt: skip
    return [
        {**base, "scene_id": "場景_0", "phase": "clu", "n_samples": 16, "metric:absrel": 0.125, "metric:opw": float("nan")},
        {**base, "scene_id": "s" * 5000, "phase": "int", "n_samples": 8, "metric:absrel": 0.25, "metric:opw": 1.5},
    ]


def show_json(path: Path, *filters: str) -> list[dict]:
    args = ["cells", "show", "--format", "json", str(path)]
    for f in filters:
        args += ["--filter", f]
    res = augbench(*args)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def check_reference_rows(got: list[dict]) -> None:
    want = reference_layout_rows()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w) or set(g) == set(w)
        for key, value in w.items():
            if isinstance(value, float) and math.isnan(value):
                assert g[key] is None  # JSON has no NaN: augbench prints it as null (documented)
            else:
                assert g[key] == value, key


def test_pyarrow_written_reference_layout_reads_with_show(tmp_path):
    rows = reference_layout_rows()
    columns = {key: [r[key] for r in rows] for key in rows[0]}
    table = pa.table(columns)  # all-None columns get pyarrow's null type, as in the reference writer
    assert table.schema.field("gpu_name").type == pa.null()
    path = tmp_path / "ref.parquet"
    pq.write_table(table, path)
    check_reference_rows(show_json(path))
    assert len(show_json(path, "phase=int")) == 1


def test_pandas_written_parquet_reads_with_show(tmp_path):
    path = tmp_path / "pandas.parquet"
    pd.DataFrame(reference_layout_rows()).to_parquet(path, index=False)
    check_reference_rows(show_json(path))


def test_nan_survives_our_parquet(tmp_path):
    rows = reference_layout_rows()
    src = tmp_path / "ref.parquet"
    pq.write_table(pa.table({key: [r[key] for r in rows] for key in rows[0]}), src)
    out = tmp_path / "merged.parquet"
    res = augbench("cells", "merge", str(src), "-o", str(out))
    assert res.returncode == 0, res.stderr
    back = pq.read_table(out).to_pylist()
    assert math.isnan(back[0]["metric:opw"])
    assert back[0]["gpu_name"] is None
    assert pq.read_schema(out).field("batch_size").type == pa.int64()
