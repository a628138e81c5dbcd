#!/usr/bin/env bash
# The one test command (README "Test" section; .ci/run calls exactly this).
# On a fresh machine it installs what the tests need — uv, a test venv with pytest/pyarrow,
# Chromium for the HTML report check, Valgrind, FFmpeg for torchvision's video decoder, Slurm and
# munge (each Slurm test starts and stops a one-node cluster, scripts/slurm_cluster.sh), the
# Python library environments (cached by augbench) — then runs the Rust tests and the Python
# suites.
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PYTHON_DOWNLOADS=never
PY="$(command -v python3)"

# Each step prints its start; the time each took is listed at the end (where CI's time goes).
TIMES=()
last_step="" last_start=$SECONDS
close_step() { [ -n "$last_step" ] && TIMES+=("$(printf '%5d s  %s' $((SECONDS - last_start)) "$last_step")"); true; }
step() { close_step; last_step="$*" last_start=$SECONDS; printf '\n== %s\n' "$*"; }

step "tools: uv"
command -v uv >/dev/null 2>&1 || "$PY" -m pip install --quiet uv
UV="$(command -v uv || echo "$HOME/.local/bin/uv")"

# A system tool the tests promise, from Debian's packages when missing (root and apt-get only).
apt_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
  else
    echo "$1 not installed and cannot be installed here; its tests will fail (or skip outside CI)"
  fi
}

step "tools: Chromium (HTML report test)"
apt_tool chromium chromium

step "tools: Valgrind (instruction counts, measure: instructions)"
apt_tool valgrind valgrind

step "tools: FFmpeg (torchvision's video decoder, torchcodec, loads its shared libraries)"
apt_tool ffmpeg ffmpeg

step "tools: Slurm and munge (the Slurm engine's tests start a one-node cluster of their own)"
apt_tool slurmctld slurm-wlm
apt_tool munged munge

step "python: test venv"
"$UV" venv --quiet --allow-existing --python "$PY" .venv-test
"$UV" pip install --quiet --python .venv-test/bin/python -r python/requirements-test.txt

step "rust: build (the binary and every test binary, once, with the tests' features)"
# `cargo build -p augbench` alone resolves features without the dev-dependencies, so the test
# step would compile serde and everything above it a second time; this builds them once.
cargo test --workspace --release --no-run
export AUGBENCH_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/augbench"

step "python: library and video-decode environments (cached under the augbench cache)"
# Every group in envs/ (embedded in the binary; `env build` with no names builds them all), so
# the list of groups lives in envs/ and specs/matrix.yaml only.
"$AUGBENCH_BIN" env build --no-refresh-requirements

step "wheel: build from the same target folder, install into a fresh venv, quickstart from it"
# pyproject.toml gives maturin the features the build above gave the binary, so this compiles
# nothing and the wheel carries the binary the tests run; the quickstart finds Pillow's
# environment built by the step above.
bash scripts/wheel.sh

step "rust: tests"
# Most integration tests wait on worker processes (Python imports, timeouts) more than they
# compute: four at a time keep both cores busy. One invocation of the whole workspace, as built
# above (a package subset would resolve other features and compile again). The tests whose
# verdict reads timing intervals (modules `alone`: the A/B gate, the docs' gate examples, the
# precision tests that expect a loose target reached) wait for the next step.
cargo test --workspace --release -- --test-threads=4 --skip alone::

step "rust: verdicts on timing intervals (A/B gate, the docs' gate examples, precision reached), alone: their intervals widen with anything beside them"
cargo test --workspace --release -- alone:: --test-threads=1

# The Python suites run after the Rust tests, not beside them (docs/ci.md says why).
# Python test files are discovered, never listed: each declares its environment
# (`pytestmark = pytest.mark.environment(...)`, python/tests/conftest.py), a file that declares
# none stops the run, and the AUGBENCH_EXPECT_* variables turn a missing promised library into a
# failure instead of a skip.
PYTEST=(-m pytest -q -p no:cacheprovider python/tests)

step "python: cell-log interop (pyarrow, pandas, polars, DuckDB), in the test venv"
# `-rA` names every test and its outcome in the log, so it shows polars and DuckDB ran.
AUGBENCH_EXPECT_MODULES=pyarrow,pandas,numpy,polars,duckdb .venv-test/bin/python "${PYTEST[@]}" -rA --environment interop

step "python: pytest for the library environments"
# pytest (pure Python) goes into a folder of its own on PYTHONPATH, so the cached library
# environments stay exactly what their locks say.
"$UV" pip install --quiet --python "$PY" --target .pytest-only pytest
# Each environment runs the cases of its own libraries (AUGBENCH_EXPECT_LIBS; cases of a library
# that merely comes along, like OpenCV inside AlbumentationsX's, are deselected: they run in that
# library's own environment), and the worker-loop cases no library changes (marker `generic`) run
# once, in `generic_group` below.
# The groups and their libraries come from the support matrix (specs/matrix.yaml, as
# `augbench list libraries` prints it): every python_worker library's env group, in matrix order,
# one line per group, "<group> <library>,<library>". DALI's pipeline backend and the video
# decoders have steps of their own below.
library_groups="$("$AUGBENCH_BIN" list libraries | awk -F '  +' '
  NR > 1 && $4 == "python_worker" {
    if (!($5 in libs)) { order[n++] = $5; libs[$5] = $1 } else { libs[$5] = libs[$5] "," $1 }
  }
  END { for (i = 0; i < n; i++) print order[i], libs[order[i]] }')"
[ -n "$library_groups" ] || { echo "augbench list libraries named no python_worker library"; exit 1; }
# The generic cases start some thirty workers, so they run where a worker starts fastest:
# Pillow's environment (its import takes ~0.2 s; in AlbumentationsX's, the first group, they took
# 47 s against 5 s). The first group when the matrix has no pillow group.
generic_group=pillow
grep -q "^$generic_group " <<<"$library_groups" || generic_group="${library_groups%% *}"
while read -r group expect <&3; do
  step "python: worker protocol, adapters, pipeline and video in the $group environment"
  envpy="$("$AUGBENCH_BIN" env python "$group")"
  only=()
  [ "$group" = "$generic_group" ] || only=(-m "not generic")
  # `-rA`: the log names every case and its outcome (torchvision's decoder, torchcodec, among them).
  AUGBENCH_EXPECT_LIBS="$expect" PYTHONPATH=python:.pytest-only "$envpy" "${PYTEST[@]}" -rA --environment library "${only[@]}"
done 3<<< "$library_groups"

step "python: DALI's pipeline backend (CPU mode), inside the dali environment"
AUGBENCH_EXPECT_LIBS=dali PYTHONPATH=python:.pytest-only "$("$AUGBENCH_BIN" env python dali)" "${PYTEST[@]}" --environment dali

step "python: clip decoder (sampling rule, AVI round trip) and the decode scenario's decoders, inside the video_decode environment"
# The decoders promised here are the matrix's decoders of the video_decode group.
decoders="$("$AUGBENCH_BIN" list decoders | awk -F '  +' 'NR > 1 && $2 == "video_decode" { printf "%s%s", sep, $1; sep = "," }')"
# `-rA` again: the log shows each decoder's tests ran.
AUGBENCH_EXPECT_DECODERS="$decoders" PYTHONPATH=python:.pytest-only "$("$AUGBENCH_BIN" env python video_decode)" "${PYTEST[@]}" -rA --environment video_decode
close_step
printf '\n== time per step\n'; printf '%s\n' "${TIMES[@]}"
echo "all tests passed"
