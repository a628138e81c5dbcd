# The shared task of the AlbumentationsX + Pillow benchmark scripts (sourced, not run): the
# binary, a temporary output folder (kept with KEEP=1), the config (CONFIG=FILE, or augbench's
# defaults with only the selection spelled out), the 5-transform task on 50 images, and an
# untimed run that puts the environments and the synthetic dataset in the cache.
# Before sourcing: `cd` to the repository root and set TAG (the output folder's name).
BIN="${AUGBENCH_BIN:-target/release/augbench}"
CONFIG="${CONFIG:-}"
[ -x "$BIN" ] || cargo build --release -p augbench
OUT="$(mktemp -d -t "augbench-$TAG-XXXXXX")"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
if [ -z "$CONFIG" ]; then
  CONFIG="$OUT/task.yaml"
  printf 'version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n' >"$CONFIG"
fi
COMMON=(--config "$CONFIG" --libraries albumentationsx pillow --num-items 50)
TASK=("${COMMON[@]}" --transforms Resize HorizontalFlip GaussianBlur JpegCompression Rotate)

# Not timed: environments and the synthetic dataset into the cache.
warm_cache() {
  "$BIN" run "${COMMON[@]}" --transforms HorizontalFlip --num-runs 1 --output "$OUT/warm" "$@" >"$OUT/warm.log" 2>&1 \
    || { cat "$OUT/warm.log"; exit 1; }
}
