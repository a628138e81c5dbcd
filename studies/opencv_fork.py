"""How often a child forked from a process that has run OpenCV's threaded loops blocks for good,
without and with the loaders' fork guard (``augbench_worker.threads.guard_opencv_fork``).

Each round runs ``cv2.warpAffine`` three times (OpenCV's pool does part of it), forks, and the child
runs it three times more; a child still running after a 3 s alarm blocked on a pool mutex a pool
thread held at the fork. Run it in an environment with OpenCV and numpy, with load beside it (the
window is narrow on an idle machine):

    (yes >/dev/null & yes >/dev/null & sleep 280; kill %1 %2) &
    PY=$(augbench env python albumentationsx)
    for r in 1 2; do $PY studies/opencv_fork.py none 60; $PY studies/opencv_fork.py guard 60; done
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


def main() -> None:
    guarded, seconds = sys.argv[1] == "guard", float(sys.argv[2])
    if guarded:
        from augbench_worker import threads

        threads.guard_opencv_fork()
    image = np.random.default_rng(0).integers(0, 255, (512, 512, 3), dtype=np.uint8)
    turn = cv2.getRotationMatrix2D((256, 256), 30, 1.0)
    blocked = forks = 0
    start = time.time()
    while time.time() - start < seconds:
        for _ in range(3):
            cv2.warpAffine(image, turn, (512, 512))
        pid = os.fork()
        if pid == 0:
            signal.alarm(3)
            for _ in range(3):
                cv2.warpAffine(image, turn, (512, 512))
            os._exit(0)
        forks += 1
        _, status = os.waitpid(pid, 0)
        blocked += status != 0
    label = "guard" if guarded else "no guard"
    print(f"{label}: {blocked} of {forks} children blocked (ended by the 3 s alarm) in {seconds:.0f} s", flush=True)


if __name__ == "__main__":
    main()
