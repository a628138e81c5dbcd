#!/usr/bin/env bash
# Verdict benchmarks (docs/ab.md, "Measured: verdicts you can gate on"), side by side in one window.
#  1. A/A: the locked Pillow as two variants, 3 transforms × ITEMS images, AA_N invocations.
#  2. Detection: a checkout whose `Image.filter` (GaussianBlur) does SHARE more real work
#     (scripts/ab_fixture.sh), N invocations per share; HorizontalFlip and Resize are unchanged.
# Labels alternate invocation by invocation. Every invocation is scored twice on the same files: by `augbench compare` (the shipped rule:
# thread-CPU ratios where recorded, Student's t over worker-process pairs) and by the wall-clock
# ratios under the same rule (what the verdict read before the CPU clock), at the default minimum
# effect. Prints per invocation its wall seconds and load, and the tallies at the end.
# BEFORE=<another augbench binary> adds, after every BEFORE_EVERY-th invocation, the same
# invocation by that binary (labelled `<label>_before`): a schedule change side by side with the
# build before it, in the same window.
# Usage: scripts/bench_verdicts.sh [work dir]
#   (env: AA_N=20 N=10 SHARES="0.05 0.10" ITEMS=50 AUGBENCH=<binary> BEFORE=<binary> BEFORE_EVERY=3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
W=${1:-$(mktemp -d)}
AA_N=${AA_N:-20} N=${N:-10} SHARES=${SHARES:-"0.05 0.10"} ITEMS=${ITEMS:-50}
BEFORE=${BEFORE:-} BEFORE_EVERY=${BEFORE_EVERY:-3}
CFG=$ROOT/configs/examples/ab_versions.yaml
PIN=$(grep '^pillow==' "$ROOT/envs/pillow.txt")
COMMON=(--num-items "$ITEMS" --no-refresh-requirements --transforms GaussianBlur,HorizontalFlip,Resize)
mkdir -p "$W"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "work dir: $W; load: $(load); $PIN"

score() { # <run folder> <label> [binary] → one line per transform: label transform ratio verdict wall_ratio wall_verdict clock
  "${3:-$A}" compare "$1" --format json --out "$1.json" > /dev/null 2>&1 || true
  python3 "$ROOT/scripts/verdict_rescore.py" "$1" "$1.json" "$2"
}

invocation() { # <label> <out> <baseline source> <current source> [binary]
  local t0 t1 bin=${5:-$A}
  t0=$(date +%s.%N)
  "$bin" run -c "$CFG" -o "$2" "${COMMON[@]}" --variant "pillow@base=$3" --variant "pillow@cur=$4" \
    > "$2.log" 2>&1 || true
  t1=$(date +%s.%N)
  echo "# $1: $(python3 -c "print(round($t1 - $t0))") s, load $(load)"
  score "$2" "$1" "$bin"
}

both() { # <index> <label> <out> <baseline source> <current source>: this build, then maybe BEFORE
  invocation "$2" "$3" "$4" "$5"
  if [ -n "$BEFORE" ] && [ $(($1 % BEFORE_EVERY)) = 0 ]; then
    invocation "$2_before" "$3_before" "$4" "$5" "$BEFORE"
  fi
}

: > "$W/all.txt"
for share in $SHARES; do
  "$ROOT/scripts/ab_fixture.sh" "$A" "$W/slow$share" "$share" > /dev/null
done
# Interleaved: invocation i of every label runs before invocation i + 1 of any, so a change in
# the host's load over the window falls on every label alike.
for i in $(seq "$((AA_N > N ? AA_N : N))"); do
  if [ "$i" -le "$AA_N" ]; then
    both "$i" "aa" "$W/aa$i" "$PIN" "$PIN" | tee -a "$W/all.txt"
  fi
  if [ "$i" -le "$N" ]; then
    for share in $SHARES; do
      both "$i" "slow$share" "$W/s${share}_$i" "$PIN" "$W/slow$share" | tee -a "$W/all.txt"
    done
  fi
done
python3 "$ROOT/scripts/verdict_rescore.py" --tally "$W/all.txt"
echo "load at the end: $(load)"
