#!/usr/bin/env bash
# Verdict benchmarks (docs/ab.md, "Measured: verdicts you can gate on"), side by side in one window.
#  1. A/A: the locked Pillow as two variants, 3 transforms × ITEMS images, AA_N invocations.
#  2. Detection: a checkout whose `Image.filter` (GaussianBlur) does SHARE more real work
#     (scripts/ab_fixture.sh), N invocations per share; HorizontalFlip and Resize are unchanged.
# Every invocation is scored twice on the same files: by `augbench compare` (the shipped rule:
# thread-CPU ratios where recorded, Student's t over worker-process pairs) and by the wall-clock
# ratios under the same rule (what the verdict read before the CPU clock), at the default minimum
# effect. Prints per invocation its wall seconds and load, and the tallies at the end.
# Usage: scripts/bench_verdicts.sh [work dir]
#   (env: AA_N=20 N=10 SHARES="0.05 0.10" ITEMS=50 AUGBENCH=<binary>)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
W=${1:-$(mktemp -d)}
AA_N=${AA_N:-20} N=${N:-10} SHARES=${SHARES:-"0.05 0.10"} ITEMS=${ITEMS:-50}
CFG=$ROOT/configs/examples/ab_versions.yaml
PIN=$(grep '^pillow==' "$ROOT/envs/pillow.txt")
COMMON=(--num-items "$ITEMS" --no-refresh-requirements --transforms GaussianBlur,HorizontalFlip,Resize)
mkdir -p "$W"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "work dir: $W; load: $(load); $PIN"

score() { # <run folder> <label> → one line per transform: label transform ratio verdict wall_ratio wall_verdict clock
  "$A" compare "$1" --format json --out "$1.json" > /dev/null 2>&1 || true
  python3 "$ROOT/scripts/verdict_rescore.py" "$1" "$1.json" "$2"
}

invocation() { # <label> <out> <baseline source> <current source>
  local t0 t1
  t0=$(date +%s.%N)
  "$A" run -c "$CFG" -o "$2" "${COMMON[@]}" --variant "pillow@base=$3" --variant "pillow@cur=$4" \
    > "$2.log" 2>&1 || true
  t1=$(date +%s.%N)
  echo "# $1: $(python3 -c "print(round($t1 - $t0))") s, load $(load)"
  score "$2" "$1"
}

: > "$W/all.txt"
for i in $(seq "$AA_N"); do
  invocation "aa" "$W/aa$i" "$PIN" "$PIN" | tee -a "$W/all.txt"
done
for share in $SHARES; do
  "$ROOT/scripts/ab_fixture.sh" "$A" "$W/slow$share" "$share" > /dev/null
  for i in $(seq "$N"); do
    invocation "slow$share" "$W/s${share}_$i" "$PIN" "$W/slow$share" | tee -a "$W/all.txt"
  done
done
python3 "$ROOT/scripts/verdict_rescore.py" --tally "$W/all.txt"
echo "load at the end: $(load)"
