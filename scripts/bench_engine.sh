#!/usr/bin/env bash
# Engine benchmarks of issue 3, item 7, as figures (never timed tests):
#   (a) harness overhead and (b) protocol round trips: the criterion bench
#       `cargo bench -p augbench-native --bench harness`, spawning the release `augbench worker`;
#   (c) quickstart wall time and peak memory (/usr/bin/time -v), first-time (fresh AUGBENCH_CACHE,
#       so the synthetic dataset is generated) and cached (same cache, second run).
# Usage: scripts/bench_engine.sh [OUT_DIR]   (default: a new temp folder). Prints a markdown table;
# `uptime` is recorded next to every figure, because other load on the machine moves them.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-$(mktemp -d -t augbench-engine-XXXXXX)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
HELPER="$PWD/scripts/bench_engine.py"
QUICKSTART=configs/examples/quickstart.yaml

step() { printf '\n== %s\n' "$*" >&2; }
stamp() { uptime >"$OUT/$1.uptime"; }

step "build (release)"
cargo build --release -p augbench
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
# A private copy: other builds replacing the shared binary mid-run would break `current_exe()`,
# which the coordinator uses to start native workers.
mkdir -p "$OUT/bin"
cp "$TARGET_DIR/release/augbench" "$OUT/bin/augbench"
BIN="$OUT/bin/augbench"

step "(a)+(b) criterion bench: harness overhead and hello round trips"
stamp bench
CRITERION_HOME="$OUT/criterion" AUGBENCH_BIN="$BIN" AUGBENCH_BENCH_OUT="$OUT/rtt.json" \
  cargo bench -p augbench-native --bench harness 2>&1 | tee "$OUT/bench.log" >&2

step "(c) quickstart: first time (fresh cache) then cached"
for run in first cached; do
  stamp "quickstart-$run"
  AUGBENCH_CACHE="$OUT/cache" python3 "$HELPER" timeline "$OUT/quickstart-$run" \
    "$OUT/quickstart-$run.timeline.json" -- \
    /usr/bin/time -v -o "$OUT/quickstart-$run.time" \
    "$BIN" run --config "$QUICKSTART" --output "$OUT/quickstart-$run" \
    >"$OUT/quickstart-$run.log" 2>&1
done

step "figures"
python3 "$HELPER" report "$OUT" | tee "$OUT/figures.md"
printf '\nall outputs: %s\n' "$OUT" >&2
