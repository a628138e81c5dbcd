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
# The workspace crates compile incrementally, each checkout folder into its own incremental
# folder beside the target folder's compiled dependencies (scripts/rustc-incremental.sh): a
# fresh clone in a folder that built before, as CI's checkout is, recompiles only what its commit
# changed (docs/ci.md, "The build cache"). Each folder holds 1-2 GB: only the most recently used
# ones are kept. The test and wheel steps below build with the same settings, so they compile
# nothing again.
incremental_root="${CARGO_TARGET_DIR:-$PWD/target}/incremental-by-checkout"
export AUGBENCH_INCREMENTAL_DIR="$incremental_root/$(printf '%s' "$PWD" | sha256sum | cut -c1-16)"
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/rustc-incremental.sh"
mkdir -p "$AUGBENCH_INCREMENTAL_DIR" && touch "$AUGBENCH_INCREMENTAL_DIR"
ls -1dt "$incremental_root"/*/ | tail -n +7 | xargs -r rm -rf
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

# The Python suites run after the Rust tests, not beside them (docs/ci.md says why). Each suite
# runs on one core (pytest and the workers it starts, one at a time), so two run at once: `queue`
# collects the suites, and `run_queued` starts them longest first (each suite's time of the last
# run, kept in SUITE_TIMES; a suite with no time yet goes first), one in the background whenever
# fewer than two run, so the longest never starts last and leaves a core idle at the end. Each
# one's output is kept apart and printed whole, in queue order, with its time, once all have
# ended; any failed suite fails the step, and a suite still running after SUITE_LIMIT_S is
# stopped and fails it (pytest has no timeout of its own). Two at a time once left a forked
# loader worker blocked on a lock of OpenCV's thread pool; the loaders now stop that pool around a
# fork (`threads.guard_opencv_fork`, docs/ci.md).
# Python test files are discovered, never listed: each declares its environment
# (`pytestmark = pytest.mark.environment(...)`, python/tests/conftest.py), a file that declares
# none stops the run, and the AUGBENCH_EXPECT_* variables turn a missing promised library into a
# failure instead of a skip.
PYTEST=(-m pytest -q -p no:cacheprovider python/tests)
SUITE_LIMIT_S=600
SUITE_TIMES="${AUGBENCH_SUITE_TIMES:-${XDG_CACHE_HOME:-$HOME/.cache}/augbench/ci-suite-times.tsv}"
SUITE_LOGS="$(mktemp -d)"
trap 'rm -rf "$SUITE_LOGS"' EXIT
SUITES=() SUITE_CMDS=()
queue() { # queue <title> <command…>
  SUITES+=("$1")
  shift
  SUITE_CMDS+=("$(printf '%q ' "$@")")
}
# Prints the queue's indices, longest first by SUITE_TIMES ("<seconds>\t<title>" lines).
longest_first() {
  local -A last=()
  local n took title
  if [ -r "$SUITE_TIMES" ]; then
    while IFS=$'\t' read -r took title; do last["$title"]="$took"; done <"$SUITE_TIMES"
  fi
  for n in "${!SUITES[@]}"; do
    printf '%s\t%s\n' "${last["${SUITES[$n]}"]:-1000000}" "$n"
  done | sort -t$'\t' -k1,1nr -k2,2n | cut -f2
}
run_queued() {
  local n
  for n in $(longest_first); do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    printf '   started: %s\n' "${SUITES[$n]}"
    (
      start=$SECONDS
      rc=0
      eval "timeout --kill-after=10 $SUITE_LIMIT_S ${SUITE_CMDS[$n]}" >"$SUITE_LOGS/$n.log" 2>&1 || rc=$?
      echo "$rc $((SECONDS - start))" >"$SUITE_LOGS/$n.rc"
    ) &
  done
}
# Waits for every suite, prints each one's output and time, keeps the times for the next run's
# order, and fails when any failed.
suites_done() {
  wait
  close_step
  last_step=""
  local failed=0 n rc took times="$SUITE_LOGS/times.tsv"
  for n in "${!SUITES[@]}"; do
    read -r rc took <"$SUITE_LOGS/$n.rc"
    printf '\n== %s (%s s, exit %s)\n' "${SUITES[$n]}" "$took" "$rc"
    [ "$rc" != 124 ] && [ "$rc" != 137 ] || echo "stopped after ${SUITE_LIMIT_S} s: a test hung"
    cat "$SUITE_LOGS/$n.log"
    TIMES+=("$(printf '%5d s    %s' "$took" "${SUITES[$n]}")")
    printf '%s\t%s\n' "$took" "${SUITES[$n]}" >>"$times"
    [ "$rc" = 0 ] || failed=1
  done
  # Written whole then renamed, so a stopped run never leaves half a file.
  mkdir -p "$(dirname "$SUITE_TIMES")" && cp "$times" "$SUITE_TIMES.tmp" && mv "$SUITE_TIMES.tmp" "$SUITE_TIMES" || true
  [ "$failed" = 0 ] || { echo "a Python suite failed (its output is above)"; exit 1; }
}

step "python: the suites, two at a time, longest first (each one's time is listed under it)"
# pytest (pure Python) goes into a folder of its own on PYTHONPATH, so the cached library
# environments stay exactly what their locks say.
"$UV" pip install --quiet --python "$PY" --target .pytest-only pytest

# `-rA` names every test and its outcome in the log, so it shows polars and DuckDB ran.
queue "python: cell-log interop (pyarrow, pandas, polars, DuckDB), in the test venv" \
  env AUGBENCH_EXPECT_MODULES=pyarrow,pandas,numpy,polars,duckdb \
  .venv-test/bin/python "${PYTEST[@]}" -rA --environment interop

# Each environment runs the cases of its own libraries (AUGBENCH_EXPECT_LIBS; cases of a library
# that merely comes along, like OpenCV inside AlbumentationsX's, are deselected: they run in that
# library's own environment), and the worker-loop cases no library changes (marker `generic`) run
# once, in `generic_group` below.
# The groups and their libraries come from the support matrix (specs/matrix.yaml, as
# `augbench list libraries` prints it): every python_worker library's env group, in matrix order,
# one line per group, "<group> <library>,<library>". DALI's pipeline backend and the video
# decoders have suites of their own below.
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
  envpy="$("$AUGBENCH_BIN" env python "$group")"
  only=()
  [ "$group" = "$generic_group" ] || only=(-m "not generic")
  # `-rA`: the log names every case and its outcome (torchvision's decoder, torchcodec, among them).
  queue "python: worker protocol, adapters, pipeline and video in the $group environment" \
    env AUGBENCH_EXPECT_LIBS="$expect" PYTHONPATH=python:.pytest-only \
    "$envpy" "${PYTEST[@]}" -rA --environment library "${only[@]}"
done 3<<< "$library_groups"

queue "python: DALI's pipeline backend (CPU mode), inside the dali environment" \
  env AUGBENCH_EXPECT_LIBS=dali PYTHONPATH=python:.pytest-only \
  "$("$AUGBENCH_BIN" env python dali)" "${PYTEST[@]}" --environment dali

# The decoders promised here are the matrix's decoders of the video_decode group.
decoders="$("$AUGBENCH_BIN" list decoders | awk -F '  +' 'NR > 1 && $2 == "video_decode" { printf "%s%s", sep, $1; sep = "," }')"
# `-rA` again: the log shows each decoder's tests ran.
queue "python: clip decoder (sampling rule, AVI round trip) and the decode scenario's decoders, inside the video_decode environment" \
  env AUGBENCH_EXPECT_DECODERS="$decoders" PYTHONPATH=python:.pytest-only \
  "$("$AUGBENCH_BIN" env python video_decode)" "${PYTEST[@]}" -rA --environment video_decode
run_queued
suites_done
close_step
printf '\n== time per step\n'; printf '%s\n' "${TIMES[@]}"
echo "all tests passed"
