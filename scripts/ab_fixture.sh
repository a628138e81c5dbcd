#!/usr/bin/env bash
# Writes a local "checkout" of Pillow for A/B tests and benchmarks: the installed PIL package of
# augbench's pillow environment, copied with its bundled libraries into a Python project, with
# `Image.filter` (Pillow's GaussianBlur and every other ImageFilter) made slower by real extra
# work: after each call it filters a centred crop holding SHARE of the image's area once more, so
# the extra cost is SHARE of the call's own (a filter's cost grows with the area it covers) and
# behaves like the code it imitates on a loaded host: the same caches, the same preemption. No
# spin loop and no clock: an earlier version spun on the thread's CPU clock.
# MODE says where the extra time goes: `work` (default) on the calling thread; `thread` the same
# extra work on a helper thread the caller waits for (the caller's CPU clock does not see it);
# `sleep` the caller sleeps SHARE of the call's own wall time (no work at all). The last two are
# the variants whose thread CPU time and wall time disagree (docs/ab.md, "Which clock").
# Usage: scripts/ab_fixture.sh <augbench binary> <out dir> <share, e.g. 0.05> [work|thread|sleep]
set -euo pipefail
AUGBENCH=$1 OUT=$2 SHARE=$3 MODE=${4:-work}
case "$MODE" in work | thread | sleep) ;; *)
  echo "mode must be work, thread or sleep, got '$MODE'" >&2
  exit 2
  ;;
esac
TAG=slow
[ "$MODE" = work ] || TAG="slow.$MODE"
PY=$("$AUGBENCH" env python pillow)
SITE=$("$PY" -c 'import os, PIL; print(os.path.dirname(os.path.dirname(PIL.__file__)))')
VERSION=$("$PY" -c 'import PIL; print(PIL.__version__)')
rm -rf "$OUT" && mkdir -p "$OUT"
cp -r "$SITE/PIL" "$OUT/PIL"
[ -d "$SITE/pillow.libs" ] && cp -r "$SITE/pillow.libs" "$OUT/pillow.libs"
find "$OUT" -name __pycache__ -prune -exec rm -rf {} +
cat >> "$OUT/PIL/Image.py" <<PYEOF


# augbench A/B fixture: filter slowed by SHARE of its own cost, spent as MODE says.
def _augbench_slowed(fn, share, mode):
    import threading
    import time

    side = share ** 0.5

    def extra(image, args, kwargs):
        w, h = image.size
        cw, ch = max(1, round(w * side)), max(1, round(h * side))
        left, top = (w - cw) // 2, (h - ch) // 2
        fn(image.crop((left, top, left + cw, top + ch)), *args, **kwargs)

    def wrapper(self, *args, **kwargs):
        start = time.perf_counter() if mode == "sleep" else 0.0
        out = fn(self, *args, **kwargs)
        if share <= 0:
            return out
        if mode == "sleep":
            time.sleep(share * (time.perf_counter() - start))
        elif mode == "thread":
            helper = threading.Thread(target=extra, args=(self, args, kwargs))
            helper.start()
            helper.join()
        else:
            extra(self, args, kwargs)
        return out

    return wrapper


Image.filter = _augbench_slowed(Image.filter, $SHARE, "$MODE")
PYEOF
LIBS=""
[ -d "$OUT/pillow.libs" ] && LIBS='"pillow.libs" = "pillow.libs"'
cat > "$OUT/pyproject.toml" <<TOML
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "pillow"
version = "$VERSION+$TAG"

[tool.hatch.build.targets.wheel]
packages = ["PIL"]

[tool.hatch.build.targets.wheel.force-include]
$LIBS
TOML
echo "$OUT"
