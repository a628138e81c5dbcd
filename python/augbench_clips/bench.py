"""The decode worker of the decode scenario: ``python -m augbench_clips.bench --decoder NAME``.

Speaks the worker protocol (``augbench_worker.protocol``: one JSON request per line, one response
per line) with these ops:

- ``hello``: decoder, versions, access pattern, threads.
- ``decode_open`` ``{"items": [{"source", "indices"}], "verify": {"dir", "height", "width"}|null}``:
  reads every clip once, untimed; checks it holds ``len(indices)`` 3-channel uint8 frames; with
  ``verify``, writes the top-left ``height × width`` region of each clip's frames (THWC uint8) to
  ``<dir>/<k>.u8`` so the coordinator can read the frame markers. Answers one clip's description.
- ``decode_time`` ``{"count": N}``: decodes the first N clips once, timed here; ``{"ns": [t]}``.
- ``shutdown``.

A decoder that is missing or cannot read a video answers ``unsupported`` with the reason.
"""

from __future__ import annotations

from augbench_worker import protocol

PROTOCOL_OUT = protocol.claim_stdout()

from augbench_worker import threads  # noqa: E402 - stdlib only, after claiming stdout

THREAD_ENV = threads.apply_env(threads.SINGLE)

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from augbench_clips import decoders  # noqa: E402
from augbench_worker import PROTOCOL_VERSION  # noqa: E402
from augbench_worker.protocol import BadRequest, ShutdownRequested, Unsupported, WorkerError  # noqa: E402

OPS = ("hello", "decode_open", "decode_time")


class DecodeWorker:
    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[tuple[str, list[int]]] = []
        self.decoder: decoders.Decoder | None = None
        self.startup: WorkerError | None = None
        try:
            self.decoder = decoders.DECODERS[name]()
        except decoders.DecoderUnavailable as exc:
            self.startup = Unsupported(str(exc))

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "shutdown":
            raise ShutdownRequested
        if op not in OPS:
            raise BadRequest(f"unknown op {op!r}; expected one of {', '.join(OPS)} or shutdown")
        if self.startup is not None:
            raise self.startup
        return getattr(self, op)(request)

    def hello(self, _request: dict[str, Any]) -> dict[str, Any]:
        d = self.ready()
        return {
            "protocol": PROTOCOL_VERSION,
            "library": d.NAME,
            "versions": d.versions(),
            "runtime": f"python {platform.python_version()}",
            "threads": {**THREAD_ENV, **{k: str(v) for k, v in d.threads().items()}},
            "access": d.ACCESS,
        }

    def decode_open(self, request: dict[str, Any]) -> dict[str, Any]:
        d = self.ready()
        items = request.get("items")
        if not isinstance(items, list) or not items:
            raise BadRequest("decode_open needs a non-empty list `items`")
        self.items = [(str(item["source"]), [int(i) for i in item["indices"]]) for item in items]
        verify = request.get("verify")
        start, sample = time.perf_counter(), None
        for k, (source, indices) in enumerate(self.items):
            clip = self.read(source, indices)
            frames = check_clip(d, clip, len(indices), source)
            if verify:
                write_region(frames, verify, k)
            sample = sample or describe(d, clip)
        return {"count": len(self.items), "seconds": time.perf_counter() - start, "sample": sample}

    def decode_time(self, request: dict[str, Any]) -> dict[str, Any]:
        self.ready()
        count = int(request.get("count", 0))
        if not self.items or not 0 < count <= len(self.items):
            raise BadRequest(f"decode_time needs 1 ≤ count ≤ {len(self.items)} after decode_open")
        read, items = self.decoder.read, self.items[:count]  # type: ignore[union-attr]
        start = time.perf_counter_ns()
        for source, indices in items:
            read(source, indices)
        return {"ns": [time.perf_counter_ns() - start]}

    def read(self, source: str, indices: list[int]) -> Any:
        try:
            return self.ready().read(source, indices)
        except decoders.DecoderUnavailable as exc:
            self.startup = Unsupported(str(exc))
            raise self.startup from None
        except decoders.Unreadable as exc:
            raise Unsupported(f"{self.name} cannot read {source}: {exc}") from None

    def ready(self) -> decoders.Decoder:
        assert self.decoder is not None
        return self.decoder


def check_clip(d: decoders.Decoder, clip: Any, length: int, source: str) -> np.ndarray:
    """The clip as THWC uint8, after checking it holds ``length`` 3-channel uint8 frames."""
    frames = d.to_thwc(clip)
    if frames.ndim != 4 or frames.shape[0] != length or frames.shape[3] != 3 or frames.dtype != np.uint8:
        raise WorkerError(
            protocol.CONTRACT,
            f"{d.NAME} returned {frames.dtype} frames of shape {list(frames.shape)} (as THWC) for {source}; "
            f"expected {length} frames × H × W × 3 uint8",
        )
    return frames


def write_region(frames: np.ndarray, verify: dict[str, Any], k: int) -> None:
    height, width = int(verify["height"]), int(verify["width"])
    region = np.ascontiguousarray(frames[:, :height, :width, :])
    region.tofile(os.path.join(str(verify["dir"]), f"{k:06d}.u8"))


def describe(d: decoders.Decoder, clip: Any) -> dict[str, Any]:
    return {
        "type_name": d.TYPE_NAME,
        "layout": d.LAYOUT,
        "shape": [int(x) for x in clip.shape],
        "dtype": str(clip.dtype).replace("torch.", ""),
        "device": d.device(clip),
        "channel_order": d.CHANNEL_ORDER,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m augbench_clips.bench", description=__doc__)
    parser.add_argument("--decoder", required=True, choices=sorted(decoders.DECODERS))
    args = parser.parse_args(argv)
    return protocol.serve(PROTOCOL_OUT, DecodeWorker(args.decoder).handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
