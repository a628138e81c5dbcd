#!/usr/bin/env bash
# The regression gate between two separate runs (docs/ci.md, "Measured"), used as docs/ci.md
# tells a maintainer to use it: plain runs of one config, a baseline artifact of 3 invocations,
# and `augbench compare --baseline b1 --baseline b2 --baseline b3 --current c
# --fail-on-regression`, the drift between invocations estimated from the three.
#
# Task: Pillow alone, GaussianBlur, HorizontalFlip, Resize × ITEMS images (`--num-items ITEMS
# --no-refresh-requirements`, default settings otherwise: 3 processes × 5 runs, interleaved).
#  1. A baseline artifact: 3 invocations of the locked Pillow.
#  2. Pairs, invocations alternating baseline/current: each pair runs one more baseline invocation,
#     then the current one, which is scored against the 3 newest baseline invocations (so the
#     artifact rolls forward: consecutive pairs share two of their three, and the tallies are not
#     independent). A/A pairs (current = the same locked Pillow, AA_N of them) and slowdown pairs
#     (current = Pillow whose `Image.filter`, so GaussianBlur, does SHARE more real work, N of them)
#     alternate, so a change of the host's load over the window falls on both alike.
# The slowed Pillow is measured by a plain run as library `pillow`, so its rows match the
# baseline's by (group, library, transform), the key `compare --baseline/--current` matches on:
# scripts/ab_fixture.sh writes the slowed PIL package, and this script installs it into a copy of
# the cached pillow environment under a cache root of its own (every other entry of the real cache
# linked), which the slowdown runs get as AUGBENCH_CACHE. Nothing else differs between the sides.
#
# Per pair it prints the gate's exit code, each row's ratio current ÷ baseline with its interval
# and verdict, τ̂ (the drift the compare estimated), the wall seconds of the pair's baseline and
# current invocations and the load; beside it, the verdicts the gate gave before the drift term
# (one baseline invocation, the pair's own, no drift; `compare` without --fail-on-regression).
# Tallies at the end: A/A pairs failing the gate (target ≤ 1 in 10), slowdown pairs failing it
# (target ≥ 9 of 10), and `regression` verdicts on the unchanged transforms (target: none).
#
# Usage: [AA_N=10] [N=10] [ITEMS=50] [SHARE=0.10] [AUGBENCH=<binary>] scripts/bench_gate.sh [work dir]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
AA_N=${AA_N:-10} N=${N:-10} ITEMS=${ITEMS:-50} SHARE=${SHARE:-0.10}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
W=$(cd "$W" && pwd)
load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
secs() { python3 -c "print(round($2 - $1))"; }

CONFIG="$W/gate.yaml"
cat >"$CONFIG" <<'EOF'
version: 1
selection:
  scenario: image-rgb
  mode: micro
  libraries: [pillow]
  transforms: [GaussianBlur, HorizontalFlip, Resize]
EOF
TASK=(--config "$CONFIG" --num-items "$ITEMS" --no-refresh-requirements)

# The slowed Pillow: a cache root whose pillow environment is a copy of the real one with the
# fixture's PIL in place of the installed one.
PY=$("$A" env python pillow)
ENV=$(cd "$(dirname "$PY")/.." && pwd)
CACHE=$(cd "$ENV/../.." && pwd)
SLOW_CACHE="$W/cache-slow"
rm -rf "$SLOW_CACHE" && mkdir -p "$SLOW_CACHE/envs"
for entry in "$CACHE"/*; do
  [ "$(basename "$entry")" = envs ] || ln -s "$entry" "$SLOW_CACHE/$(basename "$entry")"
done
for entry in "$CACHE"/envs/*; do
  [ "$entry" = "$ENV" ] || ln -s "$entry" "$SLOW_CACHE/envs/$(basename "$entry")"
done
cp -a "$ENV" "$SLOW_CACHE/envs/$(basename "$ENV")"
"$ROOT/scripts/ab_fixture.sh" "$A" "$W/fixture" "$SHARE" >/dev/null
SLOW_PY="$SLOW_CACHE/envs/$(basename "$ENV")/bin/python"
SITE=$("$SLOW_PY" -c 'import os, PIL; print(os.path.dirname(os.path.dirname(PIL.__file__)))')
case "$SITE" in "$SLOW_CACHE"/*) ;; *) echo "the copied environment imports PIL from $SITE" >&2; exit 2 ;; esac
rm -rf "$SITE/PIL" && cp -r "$W/fixture/PIL" "$SITE/PIL"
"$SLOW_PY" -m compileall -q "$SITE/PIL" >/dev/null # workers write no bytecode
[ "$(AUGBENCH_CACHE="$SLOW_CACHE" "$A" env python pillow)" = "$SLOW_PY" ] \
  || { echo "AUGBENCH_CACHE=$SLOW_CACHE does not pick the copied environment" >&2; exit 2; }
slowed='import PIL.Image as I; print("_augbench_slowed" in I.Image.filter.__qualname__)'
[ "$("$SLOW_PY" -c "$slowed")" = True ] || { echo "the copied Pillow is not slowed" >&2; exit 2; }
[ "$("$PY" -c "$slowed")" = False ] || { echo "the cached Pillow is slowed" >&2; exit 2; }

echo "work dir: $W; load: $(load); $(grep '^pillow==' "$ROOT/envs/pillow.txt"); $ITEMS images; share $SHARE"
echo "augbench: $A ($("$A" --version 2>/dev/null || echo '?'))"

invocation() { # <out> [cache] → wall seconds; a failed run stops the benchmark
  local t0 t1
  t0=$(now)
  if ! AUGBENCH_CACHE=${2:-$CACHE} "$A" run "${TASK[@]}" --output "$1" >"$1.log" 2>&1; then
    echo "run $1 failed:" >&2 && tail -20 "$1.log" >&2 && exit 1
  fi
  t1=$(now)
  secs "$t0" "$t1"
}

BASES=()
for b in 1 2 3; do
  s=$(invocation "$W/base$b")
  BASES+=("$W/base$b")
  echo "# baseline $b: $s s, load $(load)"
done

: >"$W/pairs.jsonl"
pair() { # <label> <index> [cache of the current side]
  local b=$((${#BASES[@]} + 1)) sb sc rc args=()
  sb=$(invocation "$W/base$b")
  BASES+=("$W/base$b")
  sc=$(invocation "$W/$1$2" "${3:-}")
  for base in "${BASES[@]: -3}"; do args+=(--baseline "$base"); done
  rc=0
  "$A" compare "${args[@]}" --current "$W/$1$2" --fail-on-regression --format json \
    --out "$W/$1$2.gate.json" >/dev/null 2>"$W/$1$2.gate.err" || rc=$?
  # Before the drift term: the pair's own baseline invocation alone, no drift (no gate: refused).
  "$A" compare --baseline "$W/base$b" --current "$W/$1$2" --format json \
    --out "$W/$1$2.one.json" >/dev/null 2>&1 || true
  python3 - "$1" "$2" "$rc" "$sb" "$sc" "$(load)" "$W/$1$2" "$W/pairs.jsonl" <<'PY'
import json, sys
label, i, rc, sb, sc, load, stem, out = sys.argv[1:]
def rows(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return None, {}
    return d.get("drift"), {r["transform"]: r for r in d.get("rows", [])}
drift, g = rows(stem + ".gate.json")
_, o = rows(stem + ".one.json")
p = {
    "label": label, "i": int(i), "rc": int(rc), "wall_base": int(sb), "wall_cur": int(sc),
    "load": load, "tau": (drift or {}).get("spread", (drift or {}).get("tau")),
    "rows": {t: {"ratio": r.get("ratio"), "interval": r.get("ratio_interval"),
                 "verdict": r["verdict"], "one": o.get(t, {}).get("verdict")}
             for t, r in g.items()},
    "error": open(stem + ".gate.err").read().strip()[-300:] if int(rc) not in (0, 1) else None,
}
with open(out, "a") as f:
    f.write(json.dumps(p) + "\n")
tau = "–" if p["tau"] is None else f"{100 * p['tau']:.1f}%"
print(f"# {label} {i}: exit {rc}, baseline {sb} s, current {sc} s, load {load}, drift {tau}")
for t, r in sorted(p["rows"].items()):
    iv = f" [{r['interval'][0]:.3f}, {r['interval'][1]:.3f}]" if r["interval"] else ""
    ratio = "–" if r["ratio"] is None else f"{r['ratio']:.3f}"
    print(f"    {t:<15} {ratio}{iv}  {r['verdict']}  (one invocation, no drift: {r['one']})")
if p["error"]:
    print("    error:", p["error"])
PY
}

for i in $(seq "$((AA_N > N ? AA_N : N))"); do
  if [ "$i" -le "$AA_N" ]; then pair aa "$i"; fi
  if [ "$i" -le "$N" ]; then pair slow "$i" "$SLOW_CACHE"; fi
done

python3 - "$W/pairs.jsonl" <<'PY'
import json, statistics, sys
pairs = [json.loads(l) for l in open(sys.argv[1])]
def of(label):
    return [p for p in pairs if p["label"] == label]
print("\n## tallies")
for label, name in (("aa", "A/A"), ("slow", "slowdown")):
    ps = of(label)
    if not ps:
        continue
    fails = sum(p["rc"] == 1 for p in ps)
    other = sum(p["rc"] not in (0, 1) for p in ps)
    print(f"{name}: {fails} of {len(ps)} pairs failed the gate (exit 1)" + (f", {other} exited otherwise" if other else ""))
    for t in sorted({t for p in ps for t in p["rows"]}):
        rs = [p["rows"][t] for p in ps if t in p["rows"]]
        ratios = sorted(r["ratio"] for r in rs if r["ratio"] is not None)
        count = lambda key: ", ".join(f"{v} {sum(r[key] == v for r in rs)}" for v in sorted({r[key] for r in rs}, key=str))
        span = f"{statistics.median(ratios):.3f} [{ratios[0]:.3f}, {ratios[-1]:.3f}]" if ratios else "–"
        print(f"    {t:<15} ratio {span}; gate: {count('verdict')}; one invocation, no drift: {count('one')}")
unchanged = [r for p in pairs for t, r in p["rows"].items() if p["label"] == "aa" or t != "GaussianBlur"]
print(f"unchanged rows called `regression`: {sum(r['verdict'] == 'regression' for r in unchanged)} of {len(unchanged)} "
      f"(one invocation, no drift: {sum(r['one'] == 'regression' for r in unchanged)})")
taus = sorted(p["tau"] for p in pairs if p["tau"] is not None)
if taus:
    print(f"drift estimated: median {100 * statistics.median(taus):.1f}% [{100 * taus[0]:.1f}%, {100 * taus[-1]:.1f}%] over {len(taus)} pairs")
walls = sorted([p["wall_base"] for p in pairs] + [p["wall_cur"] for p in pairs])
print(f"invocations: {walls[0]}–{walls[-1]} s (median {statistics.median(walls)} s)")
PY
echo "load at the end: $(load)"
