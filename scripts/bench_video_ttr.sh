#!/usr/bin/env bash
# Video micro time to result (issue 13): AlbumentationsX, torchvision and Kornia on 16-frame clips,
# Resize, HorizontalFlip, GaussianBlur, ColorJitter, Rotate, 20 synthetic clips, the config's runs.
# An untimed run first puts the environments, the synthetic videos and the clip cache in place;
# then the task runs REPEATS times, each with its wall time and the load before it. Extra arguments
# go to every `augbench run` call.
#
#   [REPEATS=2] bash scripts/bench_video_ttr.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS="${REPEATS:-2}"
BIN="${AUGBENCH_BIN:-target/release/augbench}"
[ -x "$BIN" ] || cargo build --release -p augbench
OUT="$(mktemp -d -t augbench-video-ttr-XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
COMMON=(--config configs/examples/local_video_micro_cpu.yaml
  --libraries albumentationsx torchvision kornia --num-items 20)
TASK=("${COMMON[@]}" --transforms Resize HorizontalFlip GaussianBlur ColorJitter Rotate)

"$BIN" run "${COMMON[@]}" --transforms HorizontalFlip --num-runs 1 --output "$OUT/warm" "$@" \
  >"$OUT/warm.log" 2>&1 || { cat "$OUT/warm.log"; exit 1; }

for i in $(seq 1 "$REPEATS"); do
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  "$BIN" run "${TASK[@]}" --output "$OUT/run$i" "$@" >"$OUT/run$i.log" 2>&1 || { cat "$OUT/run$i.log"; exit 1; }
  end=$(date +%s.%N)
  rows=$(find "$OUT/run$i" -name '*_results.json' -exec grep -ho '"status": *"ok"' {} + | wc -l)
  printf 'run %d: 3 libraries x 5 transforms x 20 clips: time to result %.1f s, %d rows ok; load before (1/5/15 min): %s\n' \
    "$i" "$(python3 -c "print($end - $start)")" "$rows" "$load"
done
echo "load at the end (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
