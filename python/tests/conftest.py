"""Shared test helpers: the canonical transform registry (read from specs/), synthetic JPEGs
written with whatever encoder the running environment has, and a client that drives a real
``python -m augbench_worker`` subprocess over the JSON-lines protocol.

Discovery: every ``test_*.py`` declares the environment it runs in with
``pytestmark = pytest.mark.environment("<name>")`` (one of ``ENVIRONMENTS``); ``pytest
python/tests --environment <name>`` collects exactly those files, and a file that declares none is
a collection error, so a new file can never be silently left out. ``require(module)`` imports a
module or skips, except where the run promises it (``AUGBENCH_EXPECT_LIBS``,
``AUGBENCH_EXPECT_DECODERS``, ``AUGBENCH_EXPECT_MODULES``; and under ``CI`` a run must promise
something): there a missing module is a failure.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
SPECS_DIR = REPO / "specs"
RESPONSE_TIMEOUT_S = 120

# The environments a test file can declare: the test venv (pyarrow, pandas), each library
# environment (run once per library group), the video_decode environment, the dali environment
# (DALI's pipeline backend: no torch, no micro rows, so the library suites do not apply there).
ENVIRONMENTS = ("interop", "library", "video_decode", "dali")
_DECLARED = re.compile(r"""^pytestmark\s*=.*pytest\.mark\.environment\(\s*["'](\w+)["']""", re.M)

# library → the module its adapter imports (the suite skips a library that is not importable)
LIBRARY_MODULES = {
    "albumentationsx": "albumentations",
    "torchvision": "torchvision",
    "kornia": "kornia",
    "pillow": "PIL",
    "albumentations": "albumentations",
    "opencv": "cv2",
}
# AlbumentationsX and Albumentations 2.0.8 both install the module ``albumentations``: which
# library an environment has is told by the installed distribution.
LIBRARY_DISTRIBUTIONS = {"albumentationsx": "albumentationsx", "albumentations": "albumentations"}
# (height, width) of the synthetic images: one not divisible by common grid sizes on purpose.
IMAGE_SIZES = [(256, 320), (250, 333), (300, 260)]


# Modules each promised library or decoder brings with it (beyond its own adapter module).
PROMISED_WITH = {
    "albumentationsx": ("numpy",),
    "torchvision": ("torch", "numpy", "PIL", "torchcodec"),  # torchcodec: its video decoder
    "kornia": ("torch", "numpy"),
    "pillow": ("numpy",),
    "opencv": ("cv2", "numpy"),
    "albumentations": ("cv2", "numpy"),
    "dali": ("nvidia.dali", "numpy", "PIL"),
    "pyav": ("av", "numpy"),
    "decord": ("decord", "numpy"),
}


def pytest_addoption(parser) -> None:
    parser.addoption("--environment", choices=ENVIRONMENTS, help="collect the test files that declare this environment")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "environment(name): the environment a test file runs in (conftest.py)")
    config.addinivalue_line(
        "markers",
        "generic: worker-loop behaviour that no library changes; scripts/test.sh runs it in one environment",
    )


def pytest_collection_modifyitems(config, items) -> None:
    """Where the run names its environment's libraries (``AUGBENCH_EXPECT_LIBS``), a case
    parametrized with another library is deselected: that library has an environment of its own,
    where it runs (an environment may still import it, e.g. OpenCV inside AlbumentationsX's)."""
    own = set(_listed("AUGBENCH_EXPECT_LIBS"))
    if not own:
        return
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        library = params.get("library")
        (dropped if library in LIBRARY_MODULES and library not in own else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def declared_environment(path: Path) -> str | None:
    match = _DECLARED.search(path.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def pytest_ignore_collect(collection_path, config):
    """Test files of other environments are not even imported (their libraries are absent)."""
    path = Path(collection_path)
    if not (path.is_file() and path.name.startswith("test_") and path.suffix == ".py"):
        return None
    declared = declared_environment(path)
    if declared not in ENVIRONMENTS:
        raise pytest.UsageError(
            f"{path}: declares no environment; add pytestmark = pytest.mark.environment(NAME), NAME one of {ENVIRONMENTS}"
        )
    wanted = config.getoption("--environment")
    return True if wanted is not None and declared != wanted else None


def importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _listed(variable: str) -> list[str]:
    return [name for name in os.environ.get(variable, "").split(",") if name]


def promised_modules() -> set[str]:
    """The modules this run promises: a missing one is a broken environment, not a skip."""
    names = _listed("AUGBENCH_EXPECT_LIBS") + _listed("AUGBENCH_EXPECT_DECODERS")
    modules = set(_listed("AUGBENCH_EXPECT_MODULES"))
    for name in names:
        modules.add(LIBRARY_MODULES.get(name, name))
        modules.update(PROMISED_WITH.get(name, ()))
    return modules


def skip_unless_promised(reason: str) -> None:
    """Skip where nothing is promised; a run that promises libraries (or CI) fails instead."""
    if promised_modules() or os.environ.get("CI"):
        pytest.fail(f"{reason}, but this run promises {sorted(promised_modules())}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(module: str):
    """Import ``module``; skip without it, fail where the run promises it."""
    if importable(module):
        return importlib.import_module(module)
    if module in promised_modules():
        pytest.fail(f"{module} is promised in this environment but not importable", pytrace=False)
    if os.environ.get("CI") and not promised_modules():
        pytest.fail(f"{module} is not importable and this CI run promises no library (set AUGBENCH_EXPECT_LIBS)", pytrace=False)
    pytest.skip(f"{module} is not installed here", allow_module_level=True)


def has_library(library: str) -> bool:
    """Whether this interpreter has ``library`` itself (not another distribution of its module)."""
    if not importable(LIBRARY_MODULES[library]):
        return False
    distribution = LIBRARY_DISTRIBUTIONS.get(library)
    if distribution is None:
        return True
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def require_library(library: str) -> None:
    """Skip a library this interpreter lacks, unless AUGBENCH_EXPECT_LIBS names it (set by
    scripts/test.sh for each environment group), where a failed import is a broken environment."""
    expected = {n for n in os.environ.get("AUGBENCH_EXPECT_LIBS", "").split(",") if n}
    if library in expected:
        importlib.import_module(LIBRARY_MODULES[library])
        assert has_library(library), f"{library}'s own distribution is not installed here"
    elif not has_library(library):
        require(LIBRARY_MODULES[library])
        pytest.skip(f"{library} is not installed here (another distribution has its module)")


def load_registry() -> dict[str, dict[str, Any]]:
    """Parse specs/transforms.yaml (flow-style entries; no YAML library in every env)."""
    entries: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    for line in (SPECS_DIR / "transforms.yaml").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("- name:"):
            current = {"name": stripped.split(":", 1)[1].strip()}
            entries[current["name"]] = current
        elif stripped.startswith("params:"):
            current["params"] = json.loads(stripped.split(":", 1)[1])
        elif stripped.startswith("output:"):
            current["rule"] = re.search(r"rule:\s*(\w+)", stripped).group(1)
            size = re.search(r"size:\s*\[(\d+),\s*(\d+)\]", stripped)
            current["size"] = [int(size.group(1)), int(size.group(2))] if size else None
        elif stripped.startswith("dtype:"):
            current["dtype"] = stripped.split(":", 1)[1].strip()
    return entries


def load_set(name: str) -> list[str]:
    lines = (SPECS_DIR / "sets" / f"{name}.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _synthetic(height: int, width: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255 / width, yy * 255 / height, (xx + yy) * 127 / (width + height)], axis=2)
    return np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)


def _encode(array, path: Path) -> None:
    """Write a JPEG with the first encoder this environment has."""
    if importable("PIL"):
        from PIL import Image

        Image.fromarray(array).save(path, quality=90)
    elif importable("cv2"):
        import cv2

        cv2.imwrite(str(path), array[:, :, ::-1])
    elif importable("torchvision"):
        import torch
        from torchvision.io import encode_jpeg, write_file

        write_file(str(path), encode_jpeg(torch.from_numpy(array).permute(2, 0, 1).contiguous(), quality=90))
    else:
        skip_unless_promised("no JPEG encoder (Pillow, OpenCV or torchvision) in this environment")


@pytest.fixture(scope="session")
def jpeg_paths(tmp_path_factory) -> list[str]:
    require("numpy")
    folder = tmp_path_factory.mktemp("images")
    paths = []
    for index, (height, width) in enumerate(IMAGE_SIZES):
        path = folder / f"img{index}.jpg"
        _encode(_synthetic(height, width, seed=index), path)
        paths.append(str(path))
    return paths


class WorkerClient:
    """A real worker subprocess; ``request`` sends one line and reads one response line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
        full_env.update(env or {})
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "augbench_worker", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=full_env,
        )

    def send_raw(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], RESPONSE_TIMEOUT_S)
        assert ready, f"no response within {RESPONSE_TIMEOUT_S}s; stderr:\n{self.log()}"
        raw = self.proc.stdout.readline()
        assert raw, f"worker closed stdout; stderr:\n{self.log()}"
        return json.loads(raw)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.send_raw(json.dumps({"op": op, **fields}))

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def close(self) -> int:
        if self.proc.poll() is None:
            self.request("shutdown")
        code = self.proc.wait(timeout=RESPONSE_TIMEOUT_S)
        self.stderr.close()
        return code


class SharedWorkers:
    """One plain ``--library X`` worker per library for the whole session. A torch-stack worker
    costs 5–12 s to start (``import torchvision`` brings in ``torch._dynamo``), and a ``load``
    replaces a worker's items, so the suites that only need a library with some items loaded
    share its worker. A test that changes how a worker starts (a spec file, thread variables, a
    device it must fail on) or ends it starts its own with ``worker_factory``."""

    def __init__(self) -> None:
        self._clients: dict[str, WorkerClient] = {}
        self._loads: dict[str, tuple[str, dict[str, Any]]] = {}

    def worker(self, library: str) -> WorkerClient:
        """The library's worker, started (and greeted) on first use or after it died; the caller
        may change what it holds, so its next ``loaded`` loads again."""
        self._loads.pop(library, None)
        client = self._clients.get(library)
        if client is None or client.proc.poll() is not None:
            client = WorkerClient("--library", library)
            hello = client.request("hello")
            assert hello["ok"], hello
            self._clients[library] = client
        return client

    def loaded(self, library: str, **load: Any) -> tuple[WorkerClient, dict[str, Any]]:
        """The library's worker holding exactly these items (``load`` fields), and the ``load``
        response: loaded once for as long as the next caller asks for the same items."""
        key = json.dumps(load, sort_keys=True)
        client = self._clients.get(library)
        held = self._loads.get(library)
        if client is not None and client.proc.poll() is None and held is not None and held[0] == key:
            return client, held[1]
        client = self.worker(library)
        response = client.request("load", **load)
        assert response["ok"], response
        self._loads[library] = (key, response)
        return client, response

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
        self._loads.clear()


@pytest.fixture(scope="session")
def shared_workers():
    pool = SharedWorkers()
    yield pool
    pool.close()


@pytest.fixture
def worker_factory():
    started: list[WorkerClient] = []

    def start(*args: str, env: dict[str, str] | None = None) -> WorkerClient:
        client = WorkerClient(*args, env=env)
        started.append(client)
        return client

    yield start
    for client in started:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


def first_importable_library() -> str:
    """The lightest adapter library this interpreter can import (protocol tests need a real one);
    of the run's own libraries where it names them."""
    own = set(_listed("AUGBENCH_EXPECT_LIBS"))
    for library in ("pillow", "opencv", "kornia", "torchvision", "albumentations", "albumentationsx"):  # fastest import first
        if (not own or library in own) and has_library(library):
            return library
    skip_unless_promised("no adapter library importable in this interpreter")
