"""Adapter registry: library name → module, imported only when that library is served.

Each adapter module imports only its own library (+ numpy), so a worker never pays for, or
breaks on, another library's import.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys

from ..protocol import EXCEPTION, WorkerError
from .base import Adapter

# library name → (module under augbench_worker.adapters, distribution to install)
LIBRARIES: dict[str, tuple[str, str]] = {
    "albumentationsx": ("albumentationsx", "albumentationsx"),
    "torchvision": ("torchvision", "torchvision"),
    "kornia": ("kornia", "kornia"),
    "pillow": ("pillow", "pillow"),
    "albumentations": ("albumentations", "albumentations"),
    "opencv": ("opencv", "opencv-python-headless"),
    "dali": ("dali", "nvidia-dali-cuda120"),
}

# Libraries whose module another distribution installs too (AlbumentationsX and Albumentations
# 2.0.8 are both ``albumentations``): the worker checks that this distribution is the one present,
# so a row is never measured with one and labelled with the other.
DISTRIBUTIONS = {"albumentationsx": "albumentationsx", "albumentations": "albumentations"}


def _check_distribution(library: str) -> None:
    distribution = DISTRIBUTIONS.get(library)
    if distribution is None:
        return
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise WorkerError(
            EXCEPTION,
            f"library {library}: cannot import it in environment {sys.prefix}: its module comes from another "
            f"distribution there; install the package '{LIBRARIES[library][1]}' (augbench env build)",
        ) from None


def create(library: str) -> Adapter:
    """Import the adapter module for ``library`` and return a fresh adapter."""
    if library not in LIBRARIES:
        raise WorkerError(EXCEPTION, f"unknown library {library!r}; choose one of {', '.join(LIBRARIES)}")
    module_name, package = LIBRARIES[library]
    _check_distribution(library)
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        raise WorkerError(
            EXCEPTION,
            f"library {library}: cannot import {exc.name or 'a dependency'} in environment {sys.prefix} "
            f"({exc}); install the package '{package}' there (augbench env build)",
        ) from None
    return module.ADAPTER()
