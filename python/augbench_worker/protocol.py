"""JSON-lines transport and error model of the worker protocol (stdlib only).

Owns: claiming the original stdout for the protocol and pointing fd 1 / ``sys.stdout`` at stderr,
reading one request per line, writing one response per line, and turning any failure into
``{"ok": false, "error", "kind", "detail"}`` without ending the loop.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, TextIO
from collections.abc import Callable

# Failure kinds of the protocol (docs/protocol.md).
UNSUPPORTED = "unsupported"
CONTRACT = "contract"
EXCEPTION = "exception"
BAD_REQUEST = "bad_request"
# The user's input cannot be used: a spec file to fix, or media none of which decodes.
BAD_INPUT = "bad_input"


class WorkerError(Exception):
    """A failure reported to the coordinator as one protocol error response."""

    def __init__(self, kind: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail


class Unsupported(WorkerError):
    """The library has no direct equivalent of a request (transform, layout, device)."""

    def __init__(self, reason: str) -> None:
        super().__init__(UNSUPPORTED, reason)


class BadRequest(WorkerError):
    """The request is malformed or arrives in the wrong order."""

    def __init__(self, message: str) -> None:
        super().__init__(BAD_REQUEST, message)


class ShutdownRequested(Exception):
    """Raised by the handler after answering ``shutdown``."""


def int_field(request: dict, key: str, minimum: int, default: int | None = None) -> int:
    """The integer ``request[key]`` (``default`` when absent), at least ``minimum``; else ``BadRequest``."""
    value = request.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadRequest(f'"{key}" must be an integer >= {minimum}, got {value!r}')
    return value


def claim_stdout() -> TextIO:
    """Keep the protocol on a duplicate of fd 1, then send fd 1 and ``sys.stdout`` to stderr.

    Must run before any library import: afterwards a library that prints (from Python or C)
    writes into the worker's log instead of corrupting the response stream.
    """
    sys.stdout.flush()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1, newline="\n")


def error_response(err: WorkerError) -> dict[str, Any]:
    return {"ok": False, "error": err.message, "kind": err.kind, "detail": err.detail}


def unexpected_error(exc: BaseException) -> WorkerError:
    """Wrap an exception that no code path anticipated as kind ``exception``."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    message = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
    return WorkerError(EXCEPTION, message, traceback.format_exc())


def parse_request(line: str) -> dict[str, Any]:
    try:
        request = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"request is not valid JSON (column {exc.colno}): {exc.msg}") from None
    if not isinstance(request, dict):
        raise BadRequest("request must be a JSON object")
    if not isinstance(request.get("op"), str):
        raise BadRequest('request has no string field "op"')
    return request


def respond(out: TextIO, response: dict[str, Any]) -> None:
    out.write(json.dumps(response, separators=(",", ":"), allow_nan=False) + "\n")
    out.flush()


def serve(out: TextIO, handle: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """Answer requests from stdin until EOF or ``shutdown``; returns the exit status."""
    stdin = sys.stdin.buffer
    while True:
        try:
            raw = stdin.readline()
        except RuntimeError as exc:
            # A signal handler raised while the worker waited (torch's SIGCHLD handler, when a
            # loader worker dies between requests): nothing was read; the next request reports it.
            print(f"augbench worker: while waiting for a request: {exc}", file=sys.stderr)
            continue
        if not raw:
            return 0
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        try:
            result = handle(parse_request(line))
            respond(out, {"ok": True, **result})
        except ShutdownRequested:
            respond(out, {"ok": True})
            return 0
        except WorkerError as err:
            respond(out, error_response(err))
        except Exception as exc:  # noqa: BLE001 - every failure becomes a response
            respond(out, error_response(unexpected_error(exc)))
