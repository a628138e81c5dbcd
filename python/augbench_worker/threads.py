"""Thread policy of a worker process: pins math libraries to one thread for micro runs.

The coordinator passes ``AUGBENCH_THREAD_POLICY=single|pipeline-default``. Under ``single`` the
BLAS/OpenMP variables are (re-)asserted to 1 before any library is imported; each adapter then pins
its own runtime (OpenCV, torch) and everything applied is reported in ``hello.threads``. Loader
starts also guard their forks against OpenCV's thread pool (``guard_opencv_fork``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

POLICY_VAR = "AUGBENCH_THREAD_POLICY"
SINGLE = "single"
PIPELINE_DEFAULT = "pipeline-default"
PIPELINE_SINGLE_WORKER = "pipeline-single-worker"
POLICIES = (SINGLE, PIPELINE_DEFAULT, PIPELINE_SINGLE_WORKER)

# Variables read by OpenMP, OpenBLAS, MKL, NumExpr, Accelerate and Rayon when their runtime
# loads, plus OPENCV_NUM_THREADS: the coordinator's list (THREAD_ENV_VARS in
# crates/augbench-protocol/src/threads.rs says why each is there); a Rust test there fails when
# the two differ.
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "RAYON_NUM_THREADS",
    "OPENCV_NUM_THREADS",
)


class PolicyError(ValueError):
    """``AUGBENCH_THREAD_POLICY`` holds a value the worker does not know."""


# A/B micro runs: the coordinator pins both workers of a process pair to the same CPU
# (docs/ab.md, "Chunked rounds"); unset, the worker runs where the kernel puts it.
PIN_CPU_VAR = "AUGBENCH_PIN_CPU"


def pin_cpu() -> int | None:
    """Pins this process (and every thread it starts later) to the CPU the coordinator named."""
    value = os.environ.get(PIN_CPU_VAR)
    if value is None or not hasattr(os, "sched_setaffinity"):
        return None
    os.sched_setaffinity(0, {int(value)})
    return int(value)


def read_policy() -> str:
    """The requested policy; a worker started by hand (no variable) measures like a micro run."""
    value = os.environ.get(POLICY_VAR, SINGLE)
    if value not in POLICIES:
        raise PolicyError(f"{POLICY_VAR}={value!r} is not one of {', '.join(POLICIES)}")
    return value


def apply_env(policy: str) -> dict[str, str]:
    """Set the thread variables under ``single``; return the values now in effect."""
    if policy == SINGLE:
        for var in THREAD_ENV_VARS:
            os.environ[var] = "1"
    report = {POLICY_VAR: policy}
    for var in THREAD_ENV_VARS:
        report[var] = os.environ.get(var, "unset")
    return report


def pin_torch(torch: Any, single: bool) -> dict[str, str]:
    """Pin an imported ``torch`` module to one intra-op and one inter-op thread under ``single``;
    return its thread counts now in effect. Takes the module so this file imports no library:
    the torch adapters pass theirs, AlbumentationsX the one it imported itself."""
    if single:
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # only settable before the first inter-op parallel work
            pass
    return {
        "torch.num_threads": str(torch.get_num_threads()),
        "torch.num_interop_threads": str(torch.get_num_interop_threads()),
    }


# A fork of a process whose OpenCV thread pool has run work copies the pool's mutexes as they are
# at that instant: a pool thread may hold one (it locks its own on the way to sleep), and the
# child, which has none of the pool's threads, then blocks on it the first time OpenCV runs a
# parallel loop (seen: a DataLoader worker stuck in cv2.warpAffine; 15 of 3,410 forks under load,
# studies/opencv_fork.py).
# PyTorch's loader forks its workers from the process that built and ran the recipe, so the
# guard stops the pool around every fork: before it, ``cv2.setNumThreads(1)`` joins the pool's
# threads (no job is running on the forking thread); after it, parent and child get their count
# back and OpenCV starts fresh threads at its next parallel loop. Each process keeps the thread
# count it had. The guard looks ``cv2`` up when a fork happens and imports nothing.
_fork_guarded = False
_counts_at_fork: list[int] = []


def guard_opencv_fork() -> None:
    """Register (once per process) the fork handlers that stop OpenCV's pool around a fork."""
    global _fork_guarded
    if _fork_guarded:
        return
    os.register_at_fork(before=_stop_opencv_pool, after_in_parent=_restart_opencv_pool, after_in_child=_restart_opencv_pool)
    _fork_guarded = True


def _stop_opencv_pool() -> None:
    cv2 = sys.modules.get("cv2")
    count = cv2.getNumThreads() if cv2 is not None else 0
    _counts_at_fork.append(count)
    if count > 1:
        cv2.setNumThreads(1)


def _restart_opencv_pool() -> None:
    count = _counts_at_fork.pop() if _counts_at_fork else 0
    if count > 1:
        sys.modules["cv2"].setNumThreads(count)
