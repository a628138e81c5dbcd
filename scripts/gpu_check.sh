#!/usr/bin/env bash
# GPU check: on a CUDA machine, the GPU micro and pipeline rows of torchvision and Kornia, DALI's
# GPU pipeline rows (`mixed` decode) and the production cells of torchvision_gpu and kornia_gpu
# beside their CPU runs, on 256 synthetic images (configs/examples/gpu_check_*.yaml), then a
# summary: the comparison tables, each torch pipeline row's peak GPU memory and the production
# table (items/s, peak PSS and peak GPU memory per cell). Anywhere else it says there is no CUDA
# device and exits 0.
#   OUT=<folder> (default: a new temporary folder)   AUGBENCH_BIN=<binary> (default: release build)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${AUGBENCH_BIN:-target/release/augbench}"
[ -x "$BIN" ] || cargo build --release -p augbench
say() { printf '\n== gpu_check: %s\n' "$*"; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no CUDA device (nvidia-smi finds no GPU): nothing to check on this machine"
  exit 0
fi
PY="$("$BIN" env python torch_stack 2>/dev/null || true)"
if [ -z "$PY" ]; then
  "$BIN" env build torch_stack --no-refresh-requirements
  PY="$("$BIN" env python torch_stack)"
fi
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  say "no CUDA device (torch.cuda.is_available() is False in the torch_stack environment): nothing to check"
  exit 0
fi
nvidia-smi -L

OUT="${OUT:-$(mktemp -d)}"
started=$(date +%s)
for mode in micro pipeline; do
  say "$mode rows (torchvision, kornia on cuda)"
  "$BIN" run --config "configs/examples/gpu_check_$mode.yaml" --output "$OUT" --no-refresh-requirements || true
done
say "DALI pipeline rows (mixed decode, operators on the GPU)"
"$BIN" run --config configs/examples/gpu_check_dali.yaml --output "$OUT" --no-refresh-requirements || true

say "production cells (torchvision_gpu, kornia_gpu and their CPU runs)"
"$BIN" production --config configs/examples/gpu_check_production.yaml --output-dir "$OUT/production" \
  --no-refresh-requirements || true

say "summary ($(( $(date +%s) - started )) s; results in $OUT)"
"$BIN" compare "$OUT/production" || true
"$BIN" compare "$OUT" || true
"$PY" - "$OUT" <<'PY'
import glob, json, sys
for path in sorted(glob.glob(f"{sys.argv[1]}/**/*_results.json", recursive=True)):
    file = json.load(open(path))
    meta = file["metadata"]
    for name, row in file["results"].items():
        memory = row.get("gpu_memory") or {}  # torch's allocator; DALI rows have none
        peak = memory.get("peak_allocated_bytes")
        rate = row.get("median_throughput")
        print(f"{meta['library']:12} {meta['mode']:8} {meta['device']:5} {name:18} {row['status']:11} "
              f"{rate and f'{rate:9.0f} img/s' or '':>15} {peak and f'peak {peak / 2**20:7.1f} MiB' or ''}")
PY
