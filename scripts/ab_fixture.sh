#!/usr/bin/env bash
# Writes a local "checkout" of Pillow for A/B tests and benchmarks: the installed PIL package of
# augbench's pillow environment, copied with its bundled libraries into a Python project, with
# `Image.filter` (Pillow's GaussianBlur and every other ImageFilter) made slower by real extra
# work: after each call it filters a centred crop holding SHARE of the image's area once more, so
# the extra cost is SHARE of the call's own (a filter's cost grows with the area it covers) and
# behaves like the code it imitates on a loaded host: the same caches, the same preemption. No
# spin loop and no clock: an earlier version spun on the thread's CPU clock.
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


# augbench A/B fixture: filter slowed by real extra work on SHARE of the image's area.
def _augbench_slowed(fn, share):
    side = share ** 0.5

    def wrapper(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        if share > 0:
            w, h = self.size
            cw, ch = max(1, round(w * side)), max(1, round(h * side))
            left, top = (w - cw) // 2, (h - ch) // 2
            fn(self.crop((left, top, left + cw, top + ch)), *args, **kwargs)
        return out

    return wrapper


Image.filter = _augbench_slowed(Image.filter, $SHARE)
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
