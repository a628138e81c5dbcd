#!/usr/bin/env bash
# Runs the cell-log benchmark (scripts/bench_cells.py) in a throwaway venv with its requirements.
# Extra arguments go to the script, e.g. scripts/bench_cells.sh --cells 100000 --rows 1000000
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${BENCH_VENV:-$repo/target/bench-cells-venv}"
export UV_PYTHON_DOWNLOADS=never
if [ ! -x "$venv/bin/python" ]; then
  uv venv --python "$(command -v python3)" "$venv"
  uv pip install --python "$venv/bin/python" -r "$repo/python/requirements-test.txt"
fi
exec "$venv/bin/python" "$repo/scripts/bench_cells.py" "$@"
