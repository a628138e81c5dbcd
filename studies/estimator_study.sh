#!/usr/bin/env bash
# Estimator study (issue 22): which figure of a row's timed runs repeats between invocations on a
# shared machine, and how far each reads from a quiet measurement of the same row.
# INVOCATIONS back-to-back `augbench run`s (interleaved schedule, every library of a transform in
# the same rounds) over the rows below: 4 Python libraries and the 4 Rust crates × 5 transforms
# (31 supported rows), 50 images, 3 runs × 3 worker processes. Then one quiet reference: the same
# rows with `--schedule sequential`, every library's job alone (nothing else of the study runs;
# the machine itself may still be shared, and the script prints its load). With PIPELINE=1 a
# small pipeline study follows (2 loader workers, batch 16, 3 transforms, 3 libraries, 1 process).
# Every run's per-run throughputs stay in the result files; studies/estimator_study.py reads them
# and prints each candidate estimator's repeatability and bias, and the `unstable` marks' share
# and the |Δ| of marked against unmarked rows.
#
# NO_QUIET=1 leaves out the quiet reference (a validation of the marks on fresh invocations).
#
#   [INVOCATIONS=3] [PIPELINE=1] [NO_QUIET=1] [KEEP=1] [STUDY_OUT=DIR] bash studies/estimator_study.sh [--no-refresh-requirements]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${AUGBENCH_BIN:-target/release/augbench}"
INVOCATIONS="${INVOCATIONS:-3}"
[ -x "$BIN" ] || cargo build --release -p augbench
if [ -n "${STUDY_OUT:-}" ]; then
  OUT="$STUDY_OUT"
  mkdir -p "$OUT"
else
  OUT="$(mktemp -d -t augbench-estimator-study-XXXXXX)"
  trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
fi

cat >"$OUT/micro.yaml" <<'YAML'
version: 1
selection:
  scenario: image-rgb
  mode: micro
  libraries: [albumentationsx, torchvision, kornia, pillow, image, imageproc, fast_image_resize, kornia-rs]
  transforms: [Resize, HorizontalFlip, GaussianBlur, Grayscale, Rotate]
data:
  num_items: 50
execution:
  num_runs: 3
  processes: 3
YAML
cat >"$OUT/pipeline.yaml" <<'YAML'
version: 1
selection:
  scenario: image-rgb
  mode: pipeline
  libraries: [albumentationsx, torchvision, pillow]
  transforms: [HorizontalFlip, RandomCrop224, GaussianBlur]
data:
  num_items: 200
execution:
  num_runs: 3
  processes: 1
  workers: 2
  batch_size: 16
YAML

invoke() { # config name [extra run arguments]
  local cfg="$1" name="$2" start end
  shift 2
  printf '%-16s load before (1/5/15 min): %s ... ' "$name" "$(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s)
  "$BIN" run --config "$cfg" --output "$OUT/$name" "$@" >"$OUT/$name.log" 2>&1 \
    || { echo "failed"; tail -20 "$OUT/$name.log"; exit 1; }
  end=$(date +%s)
  echo "$((end - start)) s"
}

# Not timed: environments and the synthetic dataset into the cache.
invoke "$OUT/micro.yaml" warm --transforms HorizontalFlip --num-runs 1 --num-items 10 "$@" >/dev/null
for i in $(seq 1 "$INVOCATIONS"); do
  invoke "$OUT/micro.yaml" "micro-$i" "$@"
done
[ -n "${NO_QUIET:-}" ] || invoke "$OUT/micro.yaml" micro-quiet --schedule sequential "$@"
if [ -n "${PIPELINE:-}" ]; then
  for i in $(seq 1 "$INVOCATIONS"); do
    invoke "$OUT/pipeline.yaml" "pipeline-$i" "$@"
  done
  [ -n "${NO_QUIET:-}" ] || invoke "$OUT/pipeline.yaml" pipeline-quiet --schedule sequential "$@"
fi
python3 studies/estimator_study.py "$OUT"
