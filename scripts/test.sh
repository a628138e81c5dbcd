#!/usr/bin/env bash
# The one test command (README "Test" section; .ci/run calls exactly this).
# On a fresh machine it installs what the tests need — uv, a test venv with pytest/pyarrow,
# Chromium for the HTML report check, the Python library environments (cached by augbench) —
# then runs the Rust tests and the Python suites.
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never
PY="$(command -v python3)"

step() { printf '\n== %s\n' "$*"; }

step "tools: uv"
command -v uv >/dev/null 2>&1 || "$PY" -m pip install --quiet uv
UV="$(command -v uv || echo "$HOME/.local/bin/uv")"

step "tools: Chromium (HTML report test)"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium not installed and cannot be installed here; its test will skip"
  fi
fi

step "python: test venv"
"$UV" venv --quiet --allow-existing --python "$PY" .venv-test
"$UV" pip install --quiet --python .venv-test/bin/python -r python/requirements-test.txt

step "rust: build"
cargo build --release -p augbench
export AUGBENCH_BIN="$PWD/target/release/augbench"

step "python: library and video-decode environments (cached under the augbench cache)"
for group in pillow albumentationsx torch_stack video_decode opencv albumentations; do
  "$AUGBENCH_BIN" env build "$group" --no-refresh-requirements
done

step "rust: tests"
cargo test --workspace --release

step "python: cell-log interop (pyarrow, pandas)"
.venv-test/bin/python -m pytest -q -p no:cacheprovider python/tests/test_cells_interop.py

step "python: worker protocol and adapters, inside each library environment"
# pytest (pure Python) goes into a folder of its own on PYTHONPATH, so the cached library
# environments stay exactly what their locks say.
"$UV" pip install --quiet --python "$PY" --target .pytest-only pytest
for group in pillow albumentationsx torch_stack opencv albumentations; do
  envpy="$("$AUGBENCH_BIN" env python "$group")"
  case "$group" in
    pillow) expect=pillow ;;
    albumentationsx) expect=albumentationsx ;;
    torch_stack) expect=torchvision,kornia,pillow ;;
    opencv) expect=opencv ;;
    albumentations) expect=albumentations,opencv ;;
  esac
  AUGBENCH_EXPECT_LIBS="$expect" PYTHONPATH=python:.pytest-only "$envpy" -m pytest -q -p no:cacheprovider python/tests/test_protocol.py python/tests/test_guard.py python/tests/test_adapters.py python/tests/test_pipeline.py python/tests/test_video.py
done

step "python: clip decoder (sampling rule, AVI round trip) and the decode scenario's decoders, inside the video_decode environment"
AUGBENCH_EXPECT_DECODERS=opencv,pyav,decord PYTHONPATH=python:.pytest-only "$("$AUGBENCH_BIN" env python video_decode)" -m pytest -q -p no:cacheprovider python/tests/test_clips_decode.py python/tests/test_decoders.py
echo "all tests passed"
