#!/usr/bin/env bash
# The precision rule against the build before it (issue 57, item 1), side by side in one window:
# the shipped `configs/examples/local_rgb_micro_cpu.yaml` (its `precision: 0.05`) on AlbumentationsX
# + Pillow × Resize, HorizontalFlip, GaussianBlur, JpegCompression, Rotate × 50 images, PAIRS times,
# the two binaries alternating (BEFORE, AFTER, AFTER, BEFORE, …); then once each with `--num-runs 3`
# (which the build after honours in place of the config's target). Prints each invocation's wall
# time, load and precision line, then per binary: the mean wall time and the median |Δ| of the
# Pillow ÷ AlbumentationsX paired speedups between its invocations, and whether each said reached.
#
#   BEFORE=<augbench binary> [AFTER=target/release/augbench] [PAIRS=2] \
#     bash scripts/bench_precision_rule.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-2}"
AFTER="${AFTER:-target/release/augbench}"
: "${BEFORE:?set BEFORE to the augbench binary to compare against}"
TAG=precision-rule
CONFIG=configs/examples/local_rgb_micro_cpu.yaml
AUGBENCH_BIN="$AFTER"
# shellcheck source=scripts/bench_task.sh
. scripts/bench_task.sh
warm_cache "$@"

invoke() { # label binary index [extra run arguments]
  local label="$1" bin="$2" i="$3" dir load start end
  shift 3
  dir="$OUT/$label-$i"
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  "$bin" run "${TASK[@]}" --output "$dir" "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)" >"$dir.wall"
  printf '%-14s %d: %6.1f s; load before: %s\n' "$label" "$i" "$(cat "$dir.wall")" "$load"
  grep -E '^precision' "$dir.log" | sed 's/^/    /' || true
}

for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then order=(before after); else order=(after before); fi
  for m in "${order[@]}"; do
    if [ "$m" = before ]; then invoke before "$BEFORE" "$i" "$@"; else invoke after "$AFTER" "$i" "$@"; fi
  done
done
invoke before-runs3 "$BEFORE" 1 --num-runs 3 "$@"
invoke after-runs3 "$AFTER" 1 --num-runs 3 "$@"

python3 - "$OUT" "$PAIRS" <<'PY'
import json, pathlib, statistics, sys
out, pairs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def speedups(d):
    f = next(d.rglob("pillow_micro_results.json"))
    res = json.loads(f.read_text())["results"]
    return {t: p["ratio"] for t, r in res.items() for p in r.get("paired") or [] if p["partner"] == "albumentationsx"}
for label in ("before", "after"):
    runs = [out / f"{label}-{i}" for i in range(1, pairs + 1)]
    walls = [float((out / f"{label}-{i}.wall").read_text()) for i in range(1, pairs + 1)]
    s = [speedups(d) for d in runs]
    deltas = [abs(s[1][t] / s[0][t] - 1) for t in s[0] if len(s) > 1 and t in s[1]]
    med = f"{100 * statistics.median(deltas):.1f}%" if deltas else "n/a"
    print(f"{label}: mean wall {statistics.mean(walls):.1f} s; paired speedups moved {med} (median |Δ| between invocations 1 and 2)")
PY
