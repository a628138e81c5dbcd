"""Request dispatch for one worker process: startup (spec file, adapter, thread pins) and the ops.

Startup failures (unknown thread policy, a library that does not import, a broken spec file)
do not exit: the worker answers every request except ``shutdown`` with that error, so the
coordinator can report it with the environment and file named.
"""

from __future__ import annotations

import platform
from typing import Any

from . import PROTOCOL_VERSION, adapters, spec_file, threads
from .protocol import EXCEPTION, BadRequest, ShutdownRequested, WorkerError


MICRO_OPS = ("hello", "load", "prepare", "check", "time", "emit")
PIPELINE_OPS = ("pipeline_prepare", "pipeline_start", "pipeline_run", "pipeline_stop")
PRODUCTION_OPS = ("production_cell", "production_builds")
ALL_OPS = MICRO_OPS + PIPELINE_OPS + PRODUCTION_OPS
LOADER_SLOTS = ("row", "ceiling")


class Worker:
    def __init__(
        self,
        library: str | None,
        spec_path: str | None,
        policy: str,
        thread_env: dict[str, str],
        policy_error: str | None = None,
    ) -> None:
        self.library = library or ""
        self.policy = policy
        self.adapter: adapters.Adapter | None = None
        self.spec: spec_file.SpecFile | None = None
        self.thread_report: dict[str, str] = dict(thread_env)
        self.startup_error: WorkerError | None = None
        self.pipeline_ops: dict[str, Any] = {}
        try:
            if policy_error is not None:
                raise WorkerError(EXCEPTION, policy_error)
            self._start(library, spec_path)
        except WorkerError as err:
            self.startup_error = err

    def _start(self, library: str | None, spec_path: str | None) -> None:
        if spec_path is not None:
            declared = spec_file.declared_library(spec_path, tuple(adapters.LIBRARIES))
            if library and declared != library:
                raise spec_file.SpecError(spec_path, None, f"LIBRARY is {declared!r} but the worker serves {library!r}")
            self.library = library = declared
        if not library:
            raise BadRequest("no library: pass --library or a --spec file that defines LIBRARY")
        self.adapter = adapters.create(library)
        self.thread_report.update(self.adapter.pin_threads(self.policy == threads.SINGLE))
        if spec_path is not None:
            self.spec = spec_file.load(spec_path, tuple(adapters.LIBRARIES))
            self.adapter.custom = self.spec

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "shutdown":
            raise ShutdownRequested
        if op not in ALL_OPS:
            raise BadRequest(f"unknown op {op!r}; expected one of {', '.join(ALL_OPS)} or shutdown")
        if self.startup_error is not None:
            raise self.startup_error
        assert self.adapter is not None
        if op == "hello":
            return self.hello()
        if op in PIPELINE_OPS:
            return self.pipeline(request.get("slot", "row")).handle(op, request)
        if op in PRODUCTION_OPS:
            from . import production  # noqa: PLC0415 - production cells only (brings torch)

            if op == "production_builds":
                return production.builds(self.adapter, request)
            return production.measure(self.adapter, request)
        return getattr(self.adapter, op)(request)

    def pipeline(self, slot: Any) -> Any:
        """The slot's loader side (the adapter's: torch's DataLoader, or DALI's pipeline), created
        on the slot's first op. Two slots, each with its own recipe and loader over the same
        media: ``row``, and ``ceiling``, the decode ceiling's loader that the coordinator keeps up
        beside the rows so every round times both."""
        if slot not in LOADER_SLOTS:
            raise BadRequest(f"unknown loader slot {slot!r}; expected one of {', '.join(LOADER_SLOTS)}")
        if slot not in self.pipeline_ops:
            assert self.adapter is not None
            self.pipeline_ops[slot] = self.adapter.pipeline_ops()
        return self.pipeline_ops[slot]

    def hello(self) -> dict[str, Any]:
        assert self.adapter is not None
        response = {
            "protocol": PROTOCOL_VERSION,
            "library": self.library,
            "versions": self.adapter.versions(),
            "runtime": f"python {platform.python_version()}",
            "threads": self.thread_report,
            "devices": self.adapter.available_devices(),
            "cpu_features": adapters.base.cpu_features(),
        }
        if self.adapter.decoder:
            response["decoder"] = self.adapter.decoder
        if self.adapter.device_decoders:
            response["device_decoders"] = self.adapter.device_decoders
        if self.spec is not None:
            response["spec"] = {"path": self.spec.path, "transforms": list(self.spec.transforms)}
        return response
