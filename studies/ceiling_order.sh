#!/usr/bin/env bash
# Pipeline rows against their own decode ceiling (issue 22, item 5): does the order in which a
# run measures the ceiling row (`DecodeOnly`) bias a row against it? Back to back, alternating
# (A-B-A-B), PAIRS invocations in each order on the same files: `first` (as shipped: the ceiling
# row is the first transform of every process) and `last` (the ceiling row after the others).
# Prints, per invocation, each row's figure ÷ the ceiling's figure, whether the row reads above
# the ceiling beyond both intervals (the `unstable` mark's test), and the load; then per order the
# mean ratio and its spread. A row does at least the ceiling's work, so a ratio above 1 beyond
# the intervals is a bias of the measurement (or a transform that makes later stages cheaper).
#
#   [LIBRARY=image] [ROWS="HorizontalFlip RandomCrop224"] [PAIRS=3] [WORKERS=2] [BATCH=16]
#   [ITEMS=50] [RUNS=5] [PROCESSES=1] bash studies/ceiling_order.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${AUGBENCH_BIN:-target/release/augbench}"
LIBRARY="${LIBRARY:-image}"
read -r -a ROWS <<<"${ROWS:-HorizontalFlip RandomCrop224}"
PAIRS="${PAIRS:-3}"
[ -x "$BIN" ] || cargo build --release -p augbench
OUT="$(mktemp -d -t augbench-ceiling-XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
CONFIG="$OUT/pipeline.yaml"
printf 'version: 1\nselection: {scenario: image-rgb, mode: pipeline}\nexecution: {workers: %s, batch_size: %s, num_runs: %s, processes: %s, thread_policy: pipeline-default}\n' \
  "${WORKERS:-2}" "${BATCH:-16}" "${RUNS:-5}" "${PROCESSES:-1}" >"$CONFIG"
CEILING=DecodeOnly
COMMON=(--config "$CONFIG" --libraries "$LIBRARY" --num-items "${ITEMS:-50}")

invoke() { # order pair [extra run arguments]
  local order="$1" pair="$2" dir transforms
  shift 2
  if [ "$order" = first ]; then transforms=("${ROWS[@]}"); else transforms=("${ROWS[@]}" "$CEILING"); fi
  dir="$OUT/$order-$pair"
  cut -d' ' -f1-3 /proc/loadavg >"$dir.load"
  "$BIN" run "${COMMON[@]}" --transforms "${transforms[@]}" --output "$dir" "$@" >"$dir.log" 2>&1 \
    || { cat "$dir.log"; exit 1; }
}

# Not timed: environment and dataset into the cache.
"$BIN" run "${COMMON[@]}" --transforms "${ROWS[0]}" --num-runs 1 --output "$OUT/warm" "$@" >"$OUT/warm.log" 2>&1 \
  || { cat "$OUT/warm.log"; exit 1; }
for i in $(seq 1 "$PAIRS"); do
  if [ $((i % 2)) = 1 ]; then orders=(first last); else orders=(last first); fi
  for o in "${orders[@]}"; do invoke "$o" "$i" "$@"; done
done

OUT="$OUT" PAIRS="$PAIRS" LIBRARY="$LIBRARY" CEILING="$CEILING" python3 - <<'EOF'
import glob, json, os, statistics
out, pairs, lib, ceiling = os.environ["OUT"], int(os.environ["PAIRS"]), os.environ["LIBRARY"], os.environ["CEILING"]

def rows(d):
    files = [json.load(open(f)) for f in glob.glob(f"{d}/**/*_results.json", recursive=True)]
    (data,) = [x for x in files if x["metadata"]["library"] == lib]
    return data["results"]

def fig(r):
    return r.get("figure_throughput") or r["median_throughput"], r.get("figure_low"), r.get("figure_high")

ratios = {}
print(f"{lib}: row figure / {ceiling} figure (img/s), per invocation")
for i in range(1, pairs + 1):
    for order in ("first", "last"):
        d = f"{out}/{order}-{i}"
        res, load = rows(d), open(f"{d}.load").read().strip()
        c, clo, chi = fig(res[ceiling])
        for name, r in sorted(res.items()):
            if name == ceiling or r.get("status") != "ok":
                continue
            v, lo, hi = fig(r)
            above = lo is not None and chi is not None and lo > chi
            mark = r.get("unstable_reason") or ""
            ratios.setdefault((order, name), []).append(v / c)
            print(f"  {order:5} {i}: {name:15} {v:8.0f} / {c:8.0f} = {v / c:5.3f}"
                  f"{'  ABOVE beyond intervals' if above else ''}  load {load}"
                  f"{'  [' + mark[:90] + ']' if mark else ''}")
print("\nper order: mean ratio (min-max) over invocations")
for (order, name), rs in sorted(ratios.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(f"  {name:15} ceiling {order:5}: {statistics.mean(rs):5.3f} ({min(rs):.3f}-{max(rs):.3f}), n={len(rs)}")
EOF
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
