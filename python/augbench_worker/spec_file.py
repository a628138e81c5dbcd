"""Custom spec files (``--spec my_transforms.py``): validation and lookup.

A spec file defines ``LIBRARY`` (one of the worker's libraries), ``__call__(transform, image)``
and ``TRANSFORMS = [{"name": ..., "transform": ...}, ...]``. It is checked when the worker starts,
before any timing; every problem is reported naming the file and, where there is one, the line.
"""

from __future__ import annotations

import ast
import traceback
import types
import warnings
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from . import guard
from .protocol import BAD_INPUT, CONTRACT, Unsupported, WorkerError


class SpecError(WorkerError):
    """A spec file the user must fix."""

    def __init__(self, path: str, line: int | None, problem: str, detail: str = "") -> None:
        where = f"spec file {path} line {line}" if line else f"spec file {path}"
        super().__init__(BAD_INPUT, f"{where}: {problem}", detail)


@dataclass
class SpecFile:
    path: str
    library: str
    call: Callable[[Any, Any], Any]
    transforms: dict[str, Any] = field(default_factory=dict)
    # Warnings the libraries emitted while the file built its transforms (recorded with each row).
    warnings: list[str] = field(default_factory=list)

    def apply_for(self, name: str) -> Callable[[Any], Any]:
        if name not in self.transforms:
            raise Unsupported(f"spec file {self.path} defines no transform named {name!r}")
        transform, call = self.transforms[name], self.call
        return lambda image: call(transform, image)


def _parse(path: str) -> tuple[str, ast.Module]:
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except OSError as exc:
        raise SpecError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    try:
        return source, ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise SpecError(path, exc.lineno, f"SyntaxError: {exc.msg}") from None


def _definition_lines(tree: ast.Module) -> dict[str, int]:
    """Line of the top-level assignment or ``def`` of each name."""
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[node.name] = node.lineno
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                lines[target.id] = node.lineno
    return lines


def library_line(source: str) -> tuple[int, str | None] | None:
    """The ``LIBRARY`` line of a spec file's source: its 1-based number and the quoted name on it
    (``None``: not a string literal). The coordinator reads it by the same rule before choosing the
    environment (``library_line`` in augbench-exec); ``tests/fixtures/spec_library_cases.json``
    states the rule and both sides test against its cases."""
    for number, line in enumerate(source.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.startswith("LIBRARY"):
            continue
        rest = line[len("LIBRARY") :].lstrip()
        if not rest.startswith("="):
            continue
        value = rest[1:].strip()
        quote = value[:1] if value[:1] in ("'", '"') else None
        return number, (value[1:].split(quote)[0] if quote else None)
    return None


def declared_library(path: str, known: tuple[str, ...]) -> str:
    """``LIBRARY`` read from the source without running it (so threads can be pinned first)."""
    source, _ = _parse(path)
    found = library_line(source)
    if found is None:
        raise SpecError(path, None, 'LIBRARY is not defined; add a line such as LIBRARY = "albumentationsx"')
    number, name = found
    if name not in known:
        raise SpecError(path, number, f"LIBRARY must be a string literal, one of {', '.join(known)}")
    return name


def _failing_line(path: str, exc: BaseException) -> int | None:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line


def load(path: str, known: tuple[str, ...]) -> SpecFile:
    """Run the spec file and validate its three required names."""
    source, tree = _parse(path)
    lines = _definition_lines(tree)
    library = declared_library(path, known)
    module = types.ModuleType("augbench_spec")
    module.__file__ = path
    noted = _run(path, source, module)
    call = module.__dict__.get("__call__")
    if not callable(call):
        raise SpecError(path, lines.get("__call__"), "define a function __call__(transform, image)")
    return SpecFile(path, library, call, _transforms(path, module, lines.get("TRANSFORMS")), noted)


def _run(path: str, source: str, module: types.ModuleType) -> list[str]:
    """Execute the file under the parameter guard; returns the warnings to record."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - running the user's spec is the point
        except Exception as exc:  # noqa: BLE001
            where, problem = _failing_line(path, exc), f"{type(exc).__name__}: {exc}"
            if isinstance(exc, TypeError) and guard.BAD_CALL.search(str(exc)):
                raise WorkerError(CONTRACT, f"spec file {path} line {where}: {problem}", traceback.format_exc()) from None
            raise SpecError(path, where, problem, traceback.format_exc()) from None
    texts = [guard.describe(w) for w in caught]
    flagged = [w.lineno for w, t in zip(caught, texts) if w.filename == path and guard.ignores_a_parameter(t)]
    where = f"spec file {path} line {flagged[0]}" if flagged else f"spec file {path}"
    return guard.verdict(where, guard.unique(texts))


def _transforms(path: str, module: types.ModuleType, line: int | None) -> dict[str, Any]:
    entries = module.__dict__.get("TRANSFORMS")
    if not isinstance(entries, (list, tuple)):
        raise SpecError(path, line, 'TRANSFORMS must be a list of {"name": ..., "transform": ...}')
    found: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "transform" not in entry:
            raise SpecError(path, line, f'TRANSFORMS[{index}] must be a dict with a string "name" and a "transform"')
        if entry["name"] in found:
            raise SpecError(path, line, f"TRANSFORMS[{index}] repeats the name {entry['name']!r}")
        found[entry["name"]] = entry["transform"]
    if not found:
        raise SpecError(path, line, "TRANSFORMS is empty")
    return found
