#!/usr/bin/env bash
# Writes a local "checkout" of Pillow for A/B tests and benchmarks: the installed PIL package of
# augbench's pillow environment, copied with its bundled libraries into a Python project, with
# `Image.resize` made slower by a known share of its own time (busy wait, so the share holds at
# any speed). Usage: scripts/ab_fixture.sh <augbench binary> <out dir> <share, e.g. 0.05>
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


# augbench A/B fixture: resize slowed by a share of its own time.
def _augbench_slowed(fn, share):
    import time

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        end = time.perf_counter() + (time.perf_counter() - start) * share
        while time.perf_counter() < end:
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
