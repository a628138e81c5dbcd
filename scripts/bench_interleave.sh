#!/usr/bin/env bash
# Paired, interleaved measurement against sequential (issue 10): AlbumentationsX + Pillow ×
# Resize, HorizontalFlip, GaussianBlur, JpegCompression, Rotate on 50 images, environments cached.
# PAIRS times, back to back: two consecutive invocations with `--schedule sequential` and two with
# `--schedule interleaved` (which schedule goes first alternates). For each schedule it prints,
# per transform, the Pillow ÷ AlbumentationsX speedup of both invocations of a pair and their
# |delta| (target <= 5% median interleaved), whether each invocation's paired interval covers the
# other's speedup (target >= 90% of rows; the 95% interval over rounds and the rerun interval of
# the ratio), the range of each speedup over all invocations of a schedule (minutes apart), and
# the wall time of interleaved against sequential (target: at most +25%).
# Sequential speedups are ratios of the two medians (there is nothing to pair). Load is printed
# with every invocation. Extra arguments go to every `augbench run` call. NOISE=1 adds a noisy
# neighbour for the timed invocations: one process that spins for 2–6 s, then sleeps for 2–6 s
# (seeded), the kind of drift a shared machine has on a busy day.
#
#   [PAIRS=3] [NOISE=1] [CONFIG=FILE] bash scripts/bench_interleave.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-3}"
TAG=interleave
# shellcheck source=scripts/bench_task.sh
. scripts/bench_task.sh
warm_cache "$@"

NOISE_PID=""
if [ -n "${NOISE:-}" ]; then
  python3 -c '
import random, time
rng = random.Random(7)
while True:
    end = time.time() + rng.uniform(2, 6)
    while time.time() < end:
        pass
    time.sleep(rng.uniform(2, 6))
' &
  NOISE_PID=$!
  trap '[ -n "$NOISE_PID" ] && kill "$NOISE_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
  echo "noisy neighbour: pid $NOISE_PID"
fi

invoke() { # schedule pair a|b [extra run arguments]
  local sched="$1" pair="$2" which="$3" dir load start end
  shift 3
  dir="$OUT/$sched-$pair$which"
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  "$BIN" run "${TASK[@]}" --schedule "$sched" --output "$dir" "$@" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)" >"$dir.wall"
  printf '%-11s pair %d%s: %6.1f s; load before (1/5/15 min): %s\n' "$sched" "$pair" "$which" "$(cat "$dir.wall")" "$load"
}

for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then order=(sequential interleaved); else order=(interleaved sequential); fi
  for s in "${order[@]}"; do
    invoke "$s" "$i" a "$@"
    invoke "$s" "$i" b "$@"
  done
done

python3 - "$OUT" "$PAIRS" <<'PY'
import json, pathlib, statistics, sys
out, pairs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
A, B = "pillow", "albumentationsx"

def load(run):
    files = {}
    for f in (out / run).glob("**/*_results.json"):
        d = json.loads(f.read_text())
        files[d["metadata"]["library"]] = d["results"]
    return files

def speedups(run):
    """transform -> (speedup, paired record or None)"""
    r = load(run)
    found = {}
    for t, ra in r.get(A, {}).items():
        rb = r.get(B, {}).get(t)
        if ra.get("status") != "ok" or not rb or rb.get("status") != "ok":
            continue
        p = next((p for p in ra.get("paired", []) if p["partner"] == B), None)
        s = p["ratio"] if p else ra["median_throughput"] / rb["median_throughput"]
        found[t] = (s, p)
    return found

def wall(run):
    return float((out / f"{run}.wall").read_text())

summary = {}
for sched in ("sequential", "interleaved"):
    print(f"\n== {sched}: {A} ÷ {B} per transform (a, b: consecutive invocations)")
    print(f"{'pair':<5} {'transform':<16} {'a':>7} {'b':>7} {'|delta|':>8}  ci covers  rerun covers")
    deltas, rows, ci_ok, rerun_ok, walls = [], 0, 0, 0, []
    for i in range(1, pairs + 1):
        a, b = speedups(f"{sched}-{i}a"), speedups(f"{sched}-{i}b")
        walls += [wall(f"{sched}-{i}a"), wall(f"{sched}-{i}b")]
        for t in sorted(set(a) & set(b)):
            (sa, pa), (sb, pb) = a[t], b[t]
            d = abs(sb - sa) / sa
            deltas.append((d, i, t))
            rows += 1
            def cov(lo, hi):
                if not (pa and pb):
                    return None
                return pa[lo] <= sb <= pa[hi] and pb[lo] <= sa <= pb[hi]
            c, r = cov("ci_low", "ci_high"), cov("rerun_low", "rerun_high")
            ci_ok += bool(c)
            rerun_ok += bool(r)
            fmt = lambda x: "n/a" if x is None else ("yes" if x else "no")
            print(f"{i:<5} {t:<16} {sa:>7.3f} {sb:>7.3f} {d:>8.1%}  {fmt(c):<9}  {fmt(r)}")
    if not rows:
        print("no transform measured by both libraries in both invocations")
        continue
    med = statistics.median(d for d, _, _ in deltas)
    worst = max(deltas)
    summary[sched] = statistics.mean(walls)
    print(f"median |delta| {med:.1%} over {rows} rows; worst {worst[0]:.1%} ({worst[2]}, pair {worst[1]})")
    # Across all invocations of the schedule (minutes apart, not only consecutive ones).
    every = [speedups(f"{sched}-{i}{x}") for i in range(1, pairs + 1) for x in "ab"]
    ranges = []
    for t in sorted(set.intersection(*(set(e) for e in every))):
        vals = [e[t][0] for e in every]
        ranges.append(((max(vals) - min(vals)) / statistics.median(vals), t))
    if ranges:
        spread = ", ".join(f"{t} {r:.0%}" for r, t in ranges)
        print(f"range over all {len(every)} invocations, (max - min) / median: {spread}; "
              f"median {statistics.median(r for r, _ in ranges):.1%}")
    if sched == "interleaved":
        print(f"paired interval covers the other invocation's speedup: ci {ci_ok}/{rows} = {ci_ok/rows:.0%}, "
              f"rerun {rerun_ok}/{rows} = {rerun_ok/rows:.0%} (target >= 90%)")
    print(f"mean wall time {summary[sched]:.1f} s")
if len(summary) == 2:
    ratio = summary["interleaved"] / summary["sequential"]
    print(f"\nwall time interleaved / sequential: {ratio:.2f} (target <= 1.25)")
PY
