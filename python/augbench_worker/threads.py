"""Thread policy of a worker process: pins math libraries to one thread for micro runs.

The coordinator passes ``AUGBENCH_THREAD_POLICY=single|pipeline-default``. Under ``single`` the
BLAS/OpenMP variables are (re-)asserted to 1 before any library is imported; each adapter then pins
its own runtime (OpenCV, torch) and everything applied is reported in ``hello.threads``.
"""

from __future__ import annotations

import os

POLICY_VAR = "AUGBENCH_THREAD_POLICY"
SINGLE = "single"
PIPELINE_DEFAULT = "pipeline-default"
PIPELINE_SINGLE_WORKER = "pipeline-single-worker"
POLICIES = (SINGLE, PIPELINE_DEFAULT, PIPELINE_SINGLE_WORKER)

# Variables read by OpenMP, OpenBLAS, MKL, NumExpr and Accelerate when their runtime loads.
THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


class PolicyError(ValueError):
    """``AUGBENCH_THREAD_POLICY`` holds a value the worker does not know."""


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
