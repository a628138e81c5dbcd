#!/usr/bin/env bash
# A/B benchmarks (docs/ab.md, "Measured (scripts/bench_ab.sh)"), side by side in one window:
#  0. Runtime: configs/examples/ab_versions.yaml as committed (two Pillow releases, 5 transforms).
#  1. A/A: the same Pillow as two variants, 5 transforms, AA_N invocations: every verdict must be
#     "no change" and the paired ratio within ±3% of 1 in ≥ 90% of rows.
#  2. Detection: a local checkout whose Image.filter (GaussianBlur) does SHARE more real work
#     (scripts/ab_fixture.sh; SHARE 0 is the fixture's own cost and must read ~1.0), N
#     invocations per share: an A/B run (one interleaved run) against two separate runs compared
#     with `compare --baseline --current`, both at the default minimum effect. Prints detections
#     out of N per share and method, with the ratios' median and range.
# Every line carries the load average it ran under.
# Usage: scripts/bench_ab.sh [work dir]
#   (env: AA_N=3 N=10 SHARES="0 0.05 0.10 0.20" ITEMS=50 RUNTIME=1: 0 skips part 0)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
W=${1:-$(mktemp -d)}
AA_N=${AA_N:-3} N=${N:-10} SHARES=${SHARES:-"0 0.05 0.10 0.20"} ITEMS=${ITEMS:-50}
RUNTIME=${RUNTIME:-1}
CFG=$ROOT/configs/examples/ab_versions.yaml
PIN=$(grep '^pillow==' "$ROOT/envs/pillow.txt")
COMMON=(--num-items "$ITEMS" --no-refresh-requirements)
mkdir -p "$W"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "work dir: $W; load: $(load)"

verdicts() { # <compare json> <key: ab|rows> → "transform ratio verdict" lines
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["ab"]["rows"] if sys.argv[2] == "ab" else d["rows"]
for r in rows:
    if sys.argv[2] == "ab":
        ratio = r.get("ratio")
    else:
        ratio = r["current"] / r["baseline"] if r.get("current") and r.get("baseline") else None
    ratio = float("nan") if ratio is None else ratio
    print(r["transform"], f"{ratio:.4f}", r["verdict"])
PY
}

spread() { # <file of "transform ratio verdict" lines> → "median m [min, max]"
  python3 - "$1" <<'PY'
import statistics, sys
r = sorted(float(l.split()[1]) for l in open(sys.argv[1]) if l.strip() and l.split()[1] != "nan")
print(f"median {statistics.median(r):.3f} [{r[0]:.3f}, {r[-1]:.3f}]" if r else "no ratios")
PY
}

if [ "$RUNTIME" = 1 ]; then
  echo "== runtime: $CFG as committed (load before: $(load))"
  t0=$(date +%s.%N)
  "$A" run -c "$CFG" -o "$W/versions" --no-refresh-requirements > "$W/versions.log" 2>&1
  t1=$(date +%s.%N)
  "$A" compare "$W/versions" > "$W/versions.compare.txt" 2>&1 || true
  echo "ab_versions.yaml: $(python3 -c "print(round($t1 - $t0))") s wall; $(grep '^time:' "$W/versions.log" | cut -c1-120); load after: $(load)"
  grep -E '^\| [A-Za-z]+ \| [0-9.]+ ' "$W/versions.compare.txt" || true
fi

echo "== A/A: $PIN as two variants, 5 transforms, $AA_N invocations"
: > "$W/aa.txt"
for i in $(seq "$AA_N"); do
  t0=$(date +%s.%N)
  "$A" run -c "$CFG" -o "$W/aa$i" "${COMMON[@]}" --variant "pillow@a=$PIN" --variant "pillow@b=$PIN" > /dev/null 2>&1
  t1=$(date +%s.%N)
  "$A" compare "$W/aa$i" --format json --out "$W/aa$i.json" 2> /dev/null
  echo "invocation $i: $(python3 -c "print(round($t1 - $t0))") s, load $(load)"
  verdicts "$W/aa$i.json" ab | tee -a "$W/aa.txt"
done
python3 - "$W/aa.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rows if r[1] != "nan"]
within = sum(abs(float(r[1]) - 1) <= 0.03 for r in ok)
changes = [r for r in rows if r[2] != "same"]
print(f"A/A: {len(rows)} rows, ratio within ±3% in {within}/{len(ok)} ({100*within/max(len(ok),1):.0f}%), verdicts other than no change: {len(changes)}")
PY
echo "A/A ratios: $(spread "$W/aa.txt"); load: $(load)"

echo "== detection: GaussianBlur slowed by SHARE more real work, $N invocations per share"
for share in $SHARES; do
  "$ROOT/scripts/ab_fixture.sh" "$A" "$W/slow$share" "$share" > /dev/null
  ab=0 rr=0; : > "$W/ratios$share.txt"; : > "$W/rr$share.txt"
  for i in $(seq "$N"); do
    o="$W/ab${share}_$i"
    "$A" run -c "$CFG" -o "$o" "${COMMON[@]}" --transforms GaussianBlur \
      --variant "pillow@released=$PIN" --variant "pillow@local=$W/slow$share" > /dev/null 2>&1
    "$A" compare "$o" --format json --out "$o.json" 2> /dev/null
    line=$(verdicts "$o.json" ab | grep '^GaussianBlur ')
    echo "$line" >> "$W/ratios$share.txt"
    [[ $line == *regression* ]] && ab=$((ab + 1))
    # Run against run: the same label in two separate runs, one after the other.
    "$A" run -c "$CFG" -o "$o.base" "${COMMON[@]}" --transforms GaussianBlur --variant "pillow@x=$PIN" > /dev/null 2>&1
    "$A" run -c "$CFG" -o "$o.cur" "${COMMON[@]}" --transforms GaussianBlur --variant "pillow@x=$W/slow$share" > /dev/null 2>&1
    "$A" compare --baseline "$o.base" --current "$o.cur" --format json --out "$o.rr.json" 2> /dev/null
    rline=$(verdicts "$o.rr.json" rows | grep '^GaussianBlur ')
    echo "$rline" >> "$W/rr$share.txt"
    [[ $rline == *regression* ]] && rr=$((rr + 1))
    echo "  share $share #$i: A/B $line; run vs run $rline; load $(load)"
  done
  echo "share $share: A/B detected $ab/$N (paired ratio $(spread "$W/ratios$share.txt")); run vs run detected $rr/$N (ratio $(spread "$W/rr$share.txt")); load $(load)"
done
echo "load at the end: $(load)"
