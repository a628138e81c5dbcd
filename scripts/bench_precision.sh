#!/usr/bin/env bash
# Time to result with a precision target against today's fixed budget (issue 22, item 4), on the
# same rows (AlbumentationsX + Pillow × Resize, HorizontalFlip, GaussianBlur, JpegCompression,
# Rotate, 50 images, environments cached), side by side: PAIRS times, back to back, one
# invocation with the fixed budget (num_runs × processes, augbench's defaults) and one with
# `--precision $PRECISION` (the order alternates). Prints every invocation's wall time, load and
# time split, then per mode: the mean wall time, the Pillow ÷ AlbumentationsX paired speedups of
# each invocation and their median |Δ| between invocations, and how many rows reached the target.
# MATRIX=1 then runs the full rgb micro matrix (8 libraries × the paper set, 200 images) with the
# precision target and prints its wall time (target ≤ 20 min on 2 cores); without it, the script
# prints a PROJECTION of that run from the per-row times it measured, labelled as such.
#
#   [PAIRS=2] [PRECISION=0.03] [MATRIX=1] bash scripts/bench_precision.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-2}"
PRECISION="${PRECISION:-0.03}"
TAG=precision
# shellcheck source=scripts/bench_task.sh
. scripts/bench_task.sh
warm_cache "$@"

invoke() { # mode pair [extra run arguments]
  local mode="$1" pair="$2" dir load start end extra=()
  shift 2
  [ "$mode" = precision ] && extra=(--precision "$PRECISION")
  dir="$OUT/$mode-$pair"
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  "$BIN" run "${TASK[@]}" "${extra[@]}" --output "$dir" "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)" >"$dir.wall"
  printf '%-9s %d: %6.1f s; load before (1/5/15 min): %s\n' "$mode" "$pair" "$(cat "$dir.wall")" "$load"
  grep -E '^(time|precision)' "$dir.log" | sed 's/^/    /'
}

for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then order=(fixed precision); else order=(precision fixed); fi
  for m in "${order[@]}"; do invoke "$m" "$i" "$@"; done
done

OUT="$OUT" PAIRS="$PAIRS" python3 - <<'EOF'
import glob, json, os, statistics
out, pairs = os.environ["OUT"], int(os.environ["PAIRS"])

def speedups(d):
    f = glob.glob(f"{d}/**/pillow_micro_results.json", recursive=True)[0]
    res = json.load(open(f))["results"]
    return {t: next((p["ratio"] for p in r.get("paired", []) if p["partner"] == "albumentationsx"), None)
            for t, r in res.items()}, res

walls = {}
for mode in ("fixed", "precision"):
    ws = [float(open(f"{out}/{mode}-{i}.wall").read()) for i in range(1, pairs + 1)]
    walls[mode] = statistics.mean(ws)
    runs = [speedups(f"{out}/{mode}-{i}") for i in range(1, pairs + 1)]
    print(f"\n{mode}: mean wall {walls[mode]:.1f} s over {pairs} invocations")
    deltas = []
    for t in sorted(runs[0][0]):
        vals = [r[0].get(t) for r in runs]
        line = "  ".join("–" if v is None else f"{v:6.3f}" for v in vals)
        if all(v is not None for v in vals) and len(vals) > 1:
            d = abs(vals[1] / vals[0] - 1)
            deltas.append(d)
            line += f"   |Δ| {d:.1%}"
        print(f"  {t:<16} Pillow ÷ AlbumentationsX {line}")
    if deltas:
        print(f"  median |Δ| between invocations: {statistics.median(deltas):.1%} (worst {max(deltas):.1%})")
    if mode == "precision":
        recs = [r.get("precision") for _, res in runs for r in res.values() if r.get("precision")]
        print(f"  rows that reached the target: {sum(p['reached'] for p in recs)} of {len(recs)}")
        per_row = statistics.mean(p["seconds"] for p in recs) if recs else 0.0
print(f"\ntime to result, precision ÷ fixed: {walls['precision'] / walls['fixed']:.2f}× "
      f"(fixed {walls['fixed']:.1f} s, precision {walls['precision']:.1f} s)")
# PROJECTION of the rgb micro matrix: rounds of 8 libraries take about 4× as long as rounds of 2,
# each transform spends at most its budget; worker starts as measured here, per library.
split = json.load(open(glob.glob(f"{out}/precision-1/**/pillow_micro_results.json", recursive=True)[0]))["metadata"]["time_split"]
parts = {p["part"]: p["seconds"] for p in split["parts"]}
starts = parts.get("worker start", 0) + parts.get("media load", 0)
setup = sum(parts.get(k, 0) for k in ("prepare", "check", "preflight", "warmup"))
transforms = len(speedups(f"{out}/precision-1")[1])
with open("specs/sets/rgb.txt") as f:
    paper = len([l for l in f if l.strip() and not l.startswith("#")])
rounds_row = per_row * 4
proj = paper * (rounds_row + setup / transforms * 4) + starts * 4
print(f"PROJECTION (not measured): rgb micro matrix, 8 libraries × {paper} transforms: ~{proj / 60:.0f} min "
      f"(from {per_row:.1f} s of rounds and {setup / transforms:.1f} s of set-up per transform for 2 libraries, ×4)")
EOF

if [ -n "${MATRIX:-}" ]; then
  start=$(date +%s.%N)
  "$BIN" run --config "$CONFIG" --transform-set paper --num-items 200 --precision "$PRECISION" \
    --libraries albumentationsx torchvision kornia pillow image imageproc fast_image_resize kornia-rs \
    --output "$OUT/matrix" "$@" >"$OUT/matrix.log" 2>&1 || { tail -20 "$OUT/matrix.log"; exit 1; }
  end=$(date +%s.%N)
  printf '\nrgb micro matrix with --precision %s: %.0f s\n' "$PRECISION" "$(python3 -c "print($end - $start)")"
  grep -E '^(time|precision|transforms)' "$OUT/matrix.log"
fi
