#!/usr/bin/env bash
# Paired speedups of two libraries across back-to-back invocations (issue "Verdicts you can gate
# a release on", third benchmark): AlbumentationsX + Pillow × 5 transforms on 50 images, the
# interleaved schedule, N invocations per build. With BEFORE=<binary> the invocations of this
# build and of the one before alternate (before, this, this, before, …), so a change in the host's
# load falls on both alike. Per build it prints, per transform, each invocation's Pillow ÷
# AlbumentationsX speedup, the median |Δ| between consecutive invocations (target ≤ 3%), and
# how often each invocation's stated interval covers the next invocation's speedup (target
# ≥ 90%): the table's interval over rounds (ci_low/ci_high) and, for comparison, Student's t over
# worker-process pairs of each pair's median ln ratio (what A/B verdicts read).
# EXTRA adds run arguments to this build's invocations, BEFORE_EXTRA to the other label's (with
# BEFORE_EXTRA alone the other label is this binary too): two settings side by side, e.g.
# BEFORE_EXTRA="" EXTRA="--precision 0.05 --transform-budget 4". The rerun interval (where a
# repeat's speedup lands) is checked beside the two confidence intervals.
# Usage: [N=3] [AUGBENCH=<binary>] [BEFORE=<binary>] [EXTRA=…] [BEFORE_EXTRA=…]
#        scripts/bench_speedups.sh [work dir]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
BEFORE=${BEFORE:-}
EXTRA=${EXTRA:-}
if [ -n "${BEFORE_EXTRA+set}" ] && [ -z "$BEFORE" ]; then BEFORE=$A; fi
BEFORE_EXTRA=${BEFORE_EXTRA:-}
N=${N:-3}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
CONFIG="$W/task.yaml"
printf 'version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n' >"$CONFIG"
TASK=(--config "$CONFIG" --libraries albumentationsx pillow --num-items 50 --no-refresh-requirements
  --transforms Resize HorizontalFlip GaussianBlur JpegCompression Rotate --schedule interleaved)
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "work dir: $W; load: $(load)"

invoke() { # <label> <binary> <index> <extra arguments, split on spaces>
  local dir="$W/$1-$3" t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # the extra arguments are words
  "$2" run "${TASK[@]}" $4 --output "$dir" >"$dir.log" 2>&1 || { tail -20 "$dir.log"; exit 1; }
  t1=$(date +%s.%N)
  echo "# $1 $3: $(python3 -c "print(round($t1 - $t0))") s, load $(load)"
}

for i in $(seq "$N"); do
  if [ -n "$BEFORE" ] && [ $((i % 2)) = 1 ]; then invoke before "$BEFORE" "$i" "$BEFORE_EXTRA"; fi
  invoke this "$A" "$i" "$EXTRA"
  if [ -n "$BEFORE" ] && [ $((i % 2)) = 0 ]; then invoke before "$BEFORE" "$i" "$BEFORE_EXTRA"; fi
done

python3 - "$W" "$N" <<'PY'
import json, math, pathlib, statistics, sys
W, N = pathlib.Path(sys.argv[1]), int(sys.argv[2])
A, B = "pillow", "albumentationsx"
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447}

def rows(run):
    """transform -> (speedup, round interval, process-pair interval) from A's paired record."""
    files = {}
    for f in (W / run).glob("**/*_results.json"):
        d = json.loads(f.read_text())
        files[d["metadata"]["library"]] = d["results"]
    out = {}
    for t, ra in files.get(A, {}).items():
        rb = files.get(B, {}).get(t)
        p = next((p for p in ra.get("paired", []) if p["partner"] == B), None)
        if ra.get("status") != "ok" or not rb or rb.get("status") != "ok" or not p:
            continue
        logs = [math.log(r) for r in p["ratios"]]
        groups, meds, k = ra.get("process_runs") or [len(logs)], [], 0
        for g in groups:
            meds.append(statistics.median(logs[k:k + g]))
            k += g
        pair = None
        if len(meds) >= 2:
            m, sd = statistics.mean(meds), statistics.stdev(meds)
            h = T975.get(len(meds) - 1, 2.4) * sd / math.sqrt(len(meds))
            pair = (math.exp(m - h), math.exp(m + h))
        out[t] = (p["ratio"], (p["ci_low"], p["ci_high"]), pair, (p["rerun_low"], p["rerun_high"]))
    return out

for label in ("before", "this"):
    runs = [rows(f"{label}-{i}") for i in range(1, N + 1) if (W / f"{label}-{i}").exists()]
    if len(runs) < 2:
        continue
    print(f"\n== {label}: {A} ÷ {B}, {len(runs)} invocations")
    deltas, cover_r, cover_p, cover_rerun, n = [], 0, 0, 0, 0
    for t in sorted(set.intersection(*(set(r) for r in runs))):
        vals = [r[t][0] for r in runs]
        print(f"{t:<16} " + " ".join(f"{v:7.3f}" for v in vals))
        for a, b in zip(runs, runs[1:]):
            deltas.append(abs(b[t][0] / a[t][0] - 1))
            lo, hi = a[t][1]
            cover_r += lo <= b[t][0] <= hi
            cover_p += bool(a[t][2]) and a[t][2][0] <= b[t][0] <= a[t][2][1]
            cover_rerun += a[t][3][0] <= b[t][0] <= a[t][3][1]
            n += 1
    print(f"median |Δ| {statistics.median(deltas):.1%} (worst {max(deltas):.1%}) over {n} consecutive pairs of rows")
    print(f"interval covers the next invocation's speedup: rounds {cover_r}/{n}, process pairs {cover_p}/{n}, "
          f"rerun interval {cover_rerun}/{n}")
PY
