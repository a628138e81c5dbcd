#!/usr/bin/env bash
# Writes a local "checkout" of Pillow for A/B tests and benchmarks: the installed PIL package of
# augbench's pillow environment, copied with its bundled libraries into a Python project, with
# `Image.resize` made slower by a known share of its own CPU time: after each call the thread
# spins until its CPU clock has advanced by SHARE × what the call used. The spin is timed on the
# thread's CPU clock, not the wall clock: on a loaded machine a wall-clock wait is cut short or
# overshot by preemption (a 10% wall-clock wait read as 0.70–0.82× here, and 0% as 1.0), while
# extra CPU work scales with the host's speed like the work it imitates.
# Usage: scripts/ab_fixture.sh <augbench binary> <out dir> <share, e.g. 0.05>
set -euo pipefail
AUGBENCH=$1 OUT=$2 SHARE=$3
PY=$("$AUGBENCH" env python pillow)
SITE=$("$PY" -c 'import os, PIL; print(os.path.dirname(os.path.dirname(PIL.__file__)))')
VERSION=$("$PY" -c 'import PIL; print(PIL.__version__)')
rm -rf "$OUT" && mkdir -p "$OUT"
cp -r "$SITE/PIL" "$OUT/PIL"
[ -d "$SITE/pillow.libs" ] && cp -r "$SITE/pillow.libs" "$OUT/pillow.libs"
find "$OUT" -name __pycache__ -prune -exec rm -rf {} +
cat >> "$OUT/PIL/Image.py" <<PYEOF


# augbench A/B fixture: resize slowed by a share of its own CPU time.
def _augbench_slowed(fn, share):
    import time

    def wrapper(*args, **kwargs):
        start = time.thread_time()
        out = fn(*args, **kwargs)
        used = time.thread_time() - start
        end = time.thread_time() + used * share
        while time.thread_time() < end:
            pass
        return out

    return wrapper


Image.resize = _augbench_slowed(Image.resize, $SHARE)
PYEOF
LIBS=""
[ -d "$OUT/pillow.libs" ] && LIBS='"pillow.libs" = "pillow.libs"'
cat > "$OUT/pyproject.toml" <<TOML
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "pillow"
version = "$VERSION+slow"

[tool.hatch.build.targets.wheel]
packages = ["PIL"]

[tool.hatch.build.targets.wheel.force-include]
$LIBS
TOML
echo "$OUT"
