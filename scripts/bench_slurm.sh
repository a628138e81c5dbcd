#!/usr/bin/env bash
# The Slurm engine's overhead (docs/cluster.md): the quickstart (configs/examples/quickstart.yaml)
# run here, then on a one-node cluster on this machine in 3 shards (`--remote-attached`: submit,
# wait, fetch), then here again (local, Slurm, local, so a change of the machine's load falls on
# both). Prints each wall time, the time from sbatch to the first task running and from the last
# task's end to the merged results (from `scontrol show job`), and the paired speedups of each
# library against Pillow in the runs side by side (median |Δ| between runs).
#
# Usage: [AUGBENCH=<binary>] scripts/bench_slurm.sh [work dir]   (root, slurm-wlm and munge installed)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${AUGBENCH:-$ROOT/target/release/augbench}
W=${1:-$(mktemp -d)}
mkdir -p "$W" && W=$(cd "$W" && pwd)
now() { date +%s.%N; }
CLUSTER="$W/cluster"
"$ROOT/scripts/slurm_cluster.sh" start "$CLUSTER" >/dev/null
trap '"$ROOT/scripts/slurm_cluster.sh" stop "$CLUSTER"' EXIT
export SLURM_CONF="$CLUSTER/slurm.conf"
base=$(grep -v '^ *output_dir:' "$ROOT/configs/examples/quickstart.yaml" | grep -v '^output:')
printf '%s\noutput:\n  output_dir: %s\n' "$base" "$W/local" >"$W/local.yaml"
printf '%s\noutput:\n  output_dir: %s\ncloud:\n  provider: slurm\n  shared_dir: %s\n  shards: 3\n' \
  "$base" "$W/slurm" "$W/shared" >"$W/slurm.yaml"
timed() { # <label> <args…>
  local t0 t1
  t0=$(now)
  "$A" "${@:2}" >"$W/$1.log" 2>&1 || { echo "$1 failed:"; tail -20 "$W/$1.log"; exit 1; }
  t1=$(now)
  echo "$1 $(python3 -c "print(round($t1 - $t0, 1))") $t1" >>"$W/walls.txt"
}
: >"$W/walls.txt"
timed local1 run --config "$W/local.yaml" --output "$W/local1" --no-refresh-requirements
timed slurm run --config "$W/slurm.yaml" --remote-attached --no-refresh-requirements
timed local2 run --config "$W/local.yaml" --output "$W/local2" --no-refresh-requirements
id=$(python3 -c "import json; print(json.load(open('$W/slurm/cloud_run.json'))['jobs'][0]['id'])")
scontrol show job -o "$id" >"$W/scontrol.txt"
python3 - "$W" <<'PY'
import datetime, json, pathlib, statistics, sys
w = pathlib.Path(sys.argv[1])
walls = {l.split()[0]: (float(l.split()[1]), float(l.split()[2])) for l in open(w / "walls.txt")}
def t(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
jobs = [dict(kv.split("=", 1) for kv in line.split() if "=" in kv) for line in open(w / "scontrol.txt")]
submit = min(t(j["SubmitTime"]) for j in jobs)
start = min(t(j["StartTime"]) for j in jobs)
end = max(t(j["EndTime"]) for j in jobs)
print(f"wall: local {walls['local1'][0]} s, Slurm 3 shards {walls['slurm'][0]} s, local {walls['local2'][0]} s")
print(f"sbatch → first task running: {start - submit:.0f} s; tasks ran {end - start:.0f} s in all "
      f"(one node, --exclusive: one task at a time); last task's end → merged: {walls['slurm'][1] - end:.1f} s "
      f"(scontrol's times are whole seconds)")
def medians(out):
    m = {}
    for f in (out / "image-rgb/micro").glob("*_results.json"):
        d = json.load(open(f))
        for tr, r in d["results"].items():
            if r.get("status") == "ok" and r.get("median_throughput"):
                m[(d["metadata"]["library"], tr)] = r["median_throughput"]
    return m
runs = {k: medians(w / k) for k in ("local1", "slurm", "local2")}
def speedups(m):
    return {(l, tr): v / m[("pillow", tr)] for (l, tr), v in m.items() if l != "pillow" and ("pillow", tr) in m}
s = {k: speedups(v) for k, v in runs.items()}
for a, b in (("local1", "local2"), ("local1", "slurm"), ("local2", "slurm")):
    keys = s[a].keys() & s[b].keys()
    d = sorted(abs(s[b][k] / s[a][k] - 1) for k in keys)
    if d:
        print(f"paired speedups vs Pillow, {a} vs {b}: median |Δ| {100 * statistics.median(d):.1f}%, "
              f"p90 {100 * d[int(0.9 * (len(d) - 1))]:.1f}%, over {len(d)} pairs")
PY
