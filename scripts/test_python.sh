#!/usr/bin/env bash
# The Python suites: pytest on python/tests once per environment (scripts/test.sh runs this beside
# the Rust tests, after it has built the binary and the environments; on its own it needs both).
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never
PY="$(command -v python3)"
UV="$(command -v uv || echo "$HOME/.local/bin/uv")"
AUGBENCH_BIN="${AUGBENCH_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/augbench}"

TIMES=()
last_step="" last_start=$SECONDS
close_step() { [ -n "$last_step" ] && TIMES+=("$(printf '%5d s  %s' $((SECONDS - last_start)) "$last_step")"); true; }
step() { close_step; last_step="$*" last_start=$SECONDS; printf '\n== %s\n' "$*"; }

# Python test files are discovered, never listed: each declares its environment
# (`pytestmark = pytest.mark.environment(...)`, python/tests/conftest.py), a file that declares
# none stops the run, and the AUGBENCH_EXPECT_* variables turn a missing promised library into a
# failure instead of a skip.
PYTEST=(-m pytest -q -p no:cacheprovider python/tests)

step "python: cell-log interop (pyarrow, pandas), in the test venv"
AUGBENCH_EXPECT_MODULES=pyarrow,pandas,numpy .venv-test/bin/python "${PYTEST[@]}" --environment interop

step "python: pytest for the library environments"
# pytest (pure Python) goes into a folder of its own on PYTHONPATH, so the cached library
# environments stay exactly what their locks say.
"$UV" pip install --quiet --python "$PY" --target .pytest-only pytest
# Each environment runs the cases of its own libraries (AUGBENCH_EXPECT_LIBS; cases of a library
# that merely comes along, like OpenCV inside AlbumentationsX's, are deselected: they run in that
# library's own environment), and the worker-loop cases no library changes (marker `generic`) run
# once, in the first.
for group in pillow albumentationsx torch_stack opencv albumentations; do
  step "python: worker protocol, adapters, pipeline and video in the $group environment"
  envpy="$("$AUGBENCH_BIN" env python "$group")"
  case "$group" in
    pillow) expect=pillow ;;
    albumentationsx) expect=albumentationsx ;;
    torch_stack) expect=torchvision,kornia ;;
    opencv) expect=opencv ;;
    albumentations) expect=albumentations ;;
  esac
  only=()
  [ "$group" = pillow ] || only=(-m "not generic")
  AUGBENCH_EXPECT_LIBS="$expect" PYTHONPATH=python:.pytest-only "$envpy" "${PYTEST[@]}" --environment library "${only[@]}"
done

step "python: DALI's pipeline backend (CPU mode), inside the dali environment"
AUGBENCH_EXPECT_LIBS=dali PYTHONPATH=python:.pytest-only "$("$AUGBENCH_BIN" env python dali)" "${PYTEST[@]}" --environment dali

step "python: clip decoder (sampling rule, AVI round trip) and the decode scenario's decoders, inside the video_decode environment"
AUGBENCH_EXPECT_DECODERS=opencv,pyav,decord PYTHONPATH=python:.pytest-only "$("$AUGBENCH_BIN" env python video_decode)" "${PYTEST[@]}" --environment video_decode
close_step
printf '\n== time per Python step\n'; printf '%s\n' "${TIMES[@]}"
