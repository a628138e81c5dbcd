"""Adapter registry: library name → module, imported only when that library is served.

Each adapter module imports only its own library (+ numpy), so a worker never pays for, or
breaks on, another library's import.
"""

from __future__ import annotations

import importlib
import sys

from ..protocol import EXCEPTION, WorkerError
from .base import Adapter

# library name → (module under augbench_worker.adapters, distribution to install)
LIBRARIES: dict[str, tuple[str, str]] = {
    "albumentationsx": ("albumentationsx", "albumentationsx"),
    "torchvision": ("torchvision", "torchvision"),
    "kornia": ("kornia", "kornia"),
    "pillow": ("pillow", "pillow"),
}


def create(library: str) -> Adapter:
    """Import the adapter module for ``library`` and return a fresh adapter."""
    if library not in LIBRARIES:
        raise WorkerError(EXCEPTION, f"unknown library {library!r}; choose one of {', '.join(LIBRARIES)}")
    module_name, package = LIBRARIES[library]
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        raise WorkerError(
            EXCEPTION,
            f"library {library}: cannot import {exc.name or 'a dependency'} in environment {sys.prefix} "
            f"({exc}); install the package '{package}' there (augbench env build)",
        ) from None
    return module.ADAPTER()
