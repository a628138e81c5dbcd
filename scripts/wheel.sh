#!/usr/bin/env bash
# Builds the Python wheel that carries the `augbench` binary (pyproject.toml, maturin
# `bindings = "bin"`), installs it into a fresh virtual environment outside the repository, and
# runs the quickstart from the installed binary in a fresh folder that is not the repository:
# the check that the wheel alone is enough to run a benchmark (docs/install.md).
#
#   bash scripts/wheel.sh [OUT_DIR]     # the wheel lands in OUT_DIR (default: a new temp folder)
#
# The build uses the same target folder as the tests ($CARGO_TARGET_DIR, else target/) and the
# features pyproject.toml names, which are the ones `cargo test --workspace --release` gives the
# binary: right after scripts/test.sh's build step it compiles nothing. maturin comes from
# $MATURIN, else the test venv (.venv-test, python/requirements-test.txt), else PATH.
# The quickstart uses the augbench cache as it is ($AUGBENCH_CACHE, default ~/.cache/augbench);
# point AUGBENCH_CACHE at an empty folder to time a first run from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export UV_PYTHON_DOWNLOADS="${UV_PYTHON_DOWNLOADS:-never}"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
fail() { echo "wheel.sh: $*" >&2; exit 1; }

if [ -n "${MATURIN:-}" ]; then :
elif [ -x .venv-test/bin/maturin ]; then MATURIN="$ROOT/.venv-test/bin/maturin"
elif command -v maturin >/dev/null 2>&1; then MATURIN="$(command -v maturin)"
else fail "maturin not found: set MATURIN, or install python/requirements-test.txt into .venv-test"
fi
UV="$(command -v uv || echo "$HOME/.local/bin/uv")"
[ -x "$UV" ] || fail "uv not found (on PATH or in ~/.local/bin)"
PY="$(command -v python3)" || fail "python3 not found"

OUT="${1:-$(mktemp -d)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/augbench_cli-*.whl

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
case "$SCRATCH/" in "$ROOT"/*) fail "the temp folder $SCRATCH is inside the repository (TMPDIR)";; esac

# 1. The wheel, from the tests' target folder.
start=$(now_ms)
"$MATURIN" build --release --out "$OUT" 2>&1 | tee "$SCRATCH/build.log"
build_ms=$(($(now_ms) - start))
compiled=$(grep -c '^ *Compiling ' "$SCRATCH/build.log" || true)
wheels=("$OUT"/augbench_cli-*.whl)
[ "${#wheels[@]}" = 1 ] && [ -f "${wheels[0]}" ] || fail "expected one augbench_cli wheel in $OUT"
WHEEL="${wheels[0]}"

# 2. A fresh virtual environment outside the repository, with the wheel and nothing else.
VENV="$SCRATCH/venv"
"$UV" venv --quiet --python "$PY" "$VENV"
start=$(now_ms)
"$UV" pip install --quiet --python "$VENV/bin/python" "$WHEEL"
install_ms=$(($(now_ms) - start))

# PATH: a folder holding only a link to the venv's augbench (what `uv tool install` and pipx
# do), then PATH without any folder that holds another augbench (the target folder, ~/.cargo/bin
# after `cargo install`): every call below is the wheel's binary, and `python3` stays the one
# a user has.
mkdir -p "$SCRATCH/bin"
ln -s "$VENV/bin/augbench" "$SCRATCH/bin/augbench"
path="$SCRATCH/bin"
IFS=: read -ra entries <<< "$PATH"
for d in "${entries[@]}"; do
  if [ -n "$d" ] && [ ! -x "$d/augbench" ]; then path="$path:$d"; fi
done
export PATH="$path"
BIN="$(command -v augbench)" || fail "augbench is not on PATH after installing the wheel"
[ "$(readlink -f "$BIN")" = "$(readlink -f "$VENV/bin/augbench")" ] ||
  fail "augbench resolves to $BIN, not the venv's"
BIN="$VENV/bin/augbench"

# 3. From a folder that is not the repository: version, start-up, the quickstart config, a
# short run.
RUN="$SCRATCH/run"
mkdir -p "$RUN"
cd "$RUN"
augbench --version
best_us=""
for _ in 1 2 3 4 5; do
  t0=$(date +%s%N)
  augbench --version >/dev/null
  t=$((($(date +%s%N) - t0) / 1000))
  if [ -z "$best_us" ] || [ "$t" -lt "$best_us" ]; then best_us=$t; fi
done
start=$(now_ms)
augbench init quickstart
[ -f quickstart.yaml ] || fail "augbench init quickstart wrote no quickstart.yaml"
# Two libraries (Pillow through its Python worker, the `image` crate in the binary's own native
# worker), two transforms, 8 images, 2 timed runs: seconds with a warm cache.
augbench run --config quickstart.yaml --libraries pillow,image --transforms Resize,HorizontalFlip \
  --num-items 8 --num-runs 2 --output results --no-refresh-requirements
run_ms=$(($(now_ms) - start))
results=$(find results -name '*_results.json' | wc -l)
[ "$results" -ge 2 ] || fail "the run wrote $results result JSON files, expected one per library (2)"

wheel_name="$(basename "$WHEEL")"
tag="${wheel_name%.whl}"
tag="${tag##*-}"
printf '\n== wheel\n'
echo "wheel:           $WHEEL"
echo "platform tag:    $tag"
echo "build:           $(secs "$build_ms") ($compiled crates compiled; 0 when the tests' build came first)"
echo "wheel size:      $(mib "$(stat -c %s "$WHEEL")")"
echo "binary size:     $(mib "$(stat -c %s "$BIN")")"
if command -v ldd >/dev/null 2>&1; then
  echo "links:           $(ldd "$BIN" | awk '{ print $1 }' | tr '\n' ' ')"
fi
echo "install:         $(secs "$install_ms") (uv pip install into a fresh venv)"
echo "--version:       $(awk -v us="$best_us" 'BEGIN { printf "%.1f ms", us / 1000 }') (best of 5)"
echo "first result:    $(secs "$run_ms") (init quickstart + a run of 2 libraries x 2 transforms, $results result files)"
