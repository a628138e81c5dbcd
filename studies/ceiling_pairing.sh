#!/usr/bin/env bash
# Pipeline rows against their decode ceiling, two ways from the same runs (issue 22, item 5):
# the share paired with the ceiling's windows of the row's own rounds (`pipeline.ceiling`, the
# companion loader) against the row's figure ÷ the `DecodeOnly` row's figure (measured as its own
# transform, first in every process). INVOCATIONS back-to-back interleaved runs over LIBRARIES ×
# ROWS. Prints per invocation each row's two shares, whether each reads above 1 beyond its
# interval, and the load; then per way the share of rows above their ceiling and the median
# |Δ| of the shares between consecutive invocations. A row does at least the ceiling's work, so
# a share above 1 beyond the interval is a bias of the measurement.
#
#   [LIBRARIES="image pillow albumentationsx torchvision"] [ROWS="HorizontalFlip RandomCrop224"]
#   [INVOCATIONS=3] [WORKERS=2] [BATCH=16] [ITEMS=100] [RUNS=3] [PROCESSES=3]
#   bash studies/ceiling_pairing.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${AUGBENCH_BIN:-target/release/augbench}"
read -r -a LIBS <<<"${LIBRARIES:-image pillow albumentationsx torchvision}"
read -r -a ROWS <<<"${ROWS:-HorizontalFlip RandomCrop224}"
INVOCATIONS="${INVOCATIONS:-3}"
[ -x "$BIN" ] || cargo build --release -p augbench
OUT="$(mktemp -d -t augbench-ceiling-pairing-XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
config() { # processes
  printf 'version: 1\nselection: {scenario: image-rgb, mode: pipeline}\nexecution: {workers: %s, batch_size: %s, num_runs: %s, processes: %s, thread_policy: pipeline-default}\n' \
    "${WORKERS:-2}" "${BATCH:-16}" "${RUNS:-3}" "$1"
}
config "${PROCESSES:-3}" >"$OUT/pipeline.yaml"
config 1 >"$OUT/warm.yaml"
ROWS_ARGS=(--libraries "${LIBS[@]}" --num-items "${ITEMS:-100}" --transforms "${ROWS[@]}")
COMMON=(--config "$OUT/pipeline.yaml" "${ROWS_ARGS[@]}")

# Not timed: environments and dataset into the cache.
"$BIN" run --config "$OUT/warm.yaml" "${ROWS_ARGS[@]}" --num-runs 1 --output "$OUT/warm" "$@" >"$OUT/warm.log" 2>&1 \
  || { cat "$OUT/warm.log"; exit 1; }
for i in $(seq 1 "$INVOCATIONS"); do
  cut -d' ' -f1-3 /proc/loadavg >"$OUT/run$i.load"
  "$BIN" run "${COMMON[@]}" --output "$OUT/run$i" "$@" >"$OUT/run$i.log" 2>&1 || { cat "$OUT/run$i.log"; exit 1; }
done

OUT="$OUT" INVOCATIONS="$INVOCATIONS" python3 - <<'EOF'
import glob, json, os, statistics
out, n = os.environ["OUT"], int(os.environ["INVOCATIONS"])
CEILING = "DecodeOnly"

def shares(run):
    found = {}
    for f in glob.glob(f"{out}/{run}/**/*_results.json", recursive=True):
        data = json.load(open(f))
        res = data["results"]
        c = res.get(CEILING, {})
        cfig, chigh = c.get("figure_throughput"), c.get("figure_high")
        for name, r in res.items():
            if name == CEILING or r.get("status") != "ok" or not cfig:
                continue
            paired = (r.get("pipeline") or {}).get("ceiling")
            apart = r["figure_throughput"] / cfig
            apart_above = (r.get("figure_low") or 0) > (chigh or cfig)
            halves = "second half" in (r.get("unstable_reason") or "") or "second halves" in (r.get("unstable_reason") or "")
            found[(data["metadata"]["library"], name)] = (
                apart, apart_above, paired and paired["ratio"], bool(paired and paired["rerun_low"] > 1),
                r["figure_throughput"], halves)
    return found

runs = [shares(f"run{i}") for i in range(1, n + 1)]
print("row: share of its ceiling, measured apart (row figure ÷ DecodeOnly row) | paired in the same rounds")
for i, rs in enumerate(runs, 1):
    load = open(f"{out}/run{i}.load").read().strip()
    print(f"invocation {i} (load before: {load})")
    for (lib, name), (a, aa, p, pa, *_) in sorted(rs.items()):
        ps = f"{p:6.3f}{' ABOVE' if pa else '      '}" if p else "     –      "
        print(f"  {lib:16} {name:15} apart {a:6.3f}{' ABOVE' if aa else '      '}  paired {ps}")

for label, k, above in (("apart", 0, 1), ("paired", 2, 3)):
    cells = [r for rs in runs for r in rs.values() if r[k]]
    marked = sum(1 for r in cells if r[above])
    beyond_one = sum(1 for r in cells if r[k] > 1)
    deltas = [abs(b[key][k] / a[key][k] - 1) for a, b in zip(runs, runs[1:])
              for key in a if key in b and a[key][k] and b[key][k]]
    med = statistics.median(deltas) * 100 if deltas else float("nan")
    print(f"{label:6}: {marked}/{len(cells)} above their ceiling beyond the interval, "
          f"{beyond_one}/{len(cells)} above 1 at all; median |Δ| between invocations {med:.1f}% "
          f"(worst {max(deltas) * 100 if deltas else float('nan'):.1f}%)")

# The pipeline's own mark on its windows' half rates (`the windows' second halves ran N% off …`):
# does a marked row's figure move more between invocations than an unmarked one's?
moved = {True: [], False: []}
for a, b in zip(runs, runs[1:]):
    for key in a:
        if key in b:
            moved[a[key][5]].append(abs(b[key][4] / a[key][4] - 1))
cells = sum(len(rs) for rs in runs)
marked = sum(1 for rs in runs for r in rs.values() if r[5])
med = {k: statistics.median(v) * 100 if v else float("nan") for k, v in moved.items()}
print(f"half-rate mark: {marked}/{cells} rows; figure |Δ| marked {med[True]:.1f}% vs unmarked {med[False]:.1f}%")
EOF
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
