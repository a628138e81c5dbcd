"""Decodes video files into clip folders for augbench's clip cache.

The Rust coordinator writes a job file ``{"clip_length": L, "min_side": S, "memory_bytes": M,
"items": [{"source": PATH, "out": DIR}, ...]}`` and runs ``python -m augbench_clips JOB.json``.
This module prints one JSON line first (``{"hello": {...}}``: decoder and version), then one JSON
line per item, in order: either ``{"source", "clip", "frames", "fps", "width", "height",
"indices", "note"}`` after writing ``DIR/frame_000.png`` … (lossless), or ``{"source",
"skipped": REASON}``. Frames are counted by decoding sequentially (the container's frame count
is only compared, never trusted). Only the standard library, NumPy and OpenCV are used.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import cv2
import numpy as np

# Name and version of the sampling rule; the Rust side (media/clips.rs) holds the same string.
SAMPLING_RULE = "linspace-floor-repeat-last/v1"


def sample_indices(frames: int, clip_length: int) -> list[int]:
    """Frame indices of a clip: exact ``floor(k * (frames - 1) / (clip_length - 1))``; a video
    shorter than the clip repeats its last frame. Integer arithmetic, like the Rust twin."""
    if frames <= 0 or clip_length <= 0:
        return []
    if frames < clip_length:
        return [min(k, frames - 1) for k in range(clip_length)]
    if clip_length == 1:
        return [0]
    return [k * (frames - 1) // (clip_length - 1) for k in range(clip_length)]


class Skip(Exception):
    """An input that cannot become a clip; the message is the reason shown to the user."""


def read_frames(source: str, memory_bytes: int) -> tuple[int, list[np.ndarray] | None, dict]:
    """Decodes ``source`` once, sequentially. Returns the number of decodable frames, the frames
    themselves while they fit in ``memory_bytes`` (else None), and the stream facts."""
    cap = cv2.VideoCapture(source)
    try:
        if not cap.isOpened():
            raise Skip("OpenCV cannot open it (not a video, or an unsupported container or codec)")
        facts = {
            "fps": float(cap.get(cv2.CAP_PROP_FPS) or 0.0),
            "announced": int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0),
        }
        kept: list[np.ndarray] | None = []
        count, held, shape = 0, 0, None
        while True:
            ok, frame = cap.read()
            if not ok or frame is None:
                break
            shape = check_shape(shape, frame, count)
            count += 1
            if kept is not None:
                kept.append(frame)
                held += frame.nbytes
                if held > memory_bytes:
                    kept = None
        facts["shape"] = shape
        return count, kept, facts
    finally:
        cap.release()


def check_shape(shape: tuple | None, frame: np.ndarray, index: int) -> tuple:
    """The frame shape every frame must share (workers stack a clip's frames)."""
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise Skip(f"frame {index} is not a 3-channel image (shape {frame.shape})")
    if shape is not None and frame.shape != shape:
        raise Skip(f"frame {index} is {frame.shape[1]}x{frame.shape[0]}, the first was {shape[1]}x{shape[0]}")
    return frame.shape


def pick_again(source: str, wanted: list[int]) -> dict[int, np.ndarray]:
    """Second sequential pass for a video too large to hold: keeps only the wanted frames."""
    need, got = set(wanted), {}
    cap = cv2.VideoCapture(source)
    try:
        index = 0
        while need - got.keys():
            ok, frame = cap.read()
            if not ok or frame is None:
                break
            if index in need:
                got[index] = frame
            index += 1
    finally:
        cap.release()
    missing = sorted(need - got.keys())
    if missing:
        raise Skip(f"frame {missing[0]} decoded on the first pass but not on the second")
    return got


def write_clip(out: str, frames: list[np.ndarray]) -> None:
    os.makedirs(out, exist_ok=True)
    for k, frame in enumerate(frames):
        path = os.path.join(out, f"frame_{k:03d}.png")
        if not cv2.imwrite(path, frame):
            raise OSError(f"OpenCV could not write {path}")


def decode_one(source: str, out: str, job: dict) -> dict[str, Any]:
    clip_length, min_side = int(job["clip_length"]), int(job.get("min_side", 1))
    count, kept, facts = read_frames(source, int(job.get("memory_bytes", 1 << 30)))
    if count == 0:
        raise Skip("no frame could be decoded (an empty, truncated or corrupt video)")
    height, width = facts["shape"][:2]
    if width < min_side or height < min_side:
        raise Skip(f"frames are {width}x{height} pixels, below the {min_side}-pixel minimum")
    indices = sample_indices(count, clip_length)
    frames = kept if kept is not None else pick_again(source, indices)
    write_clip(out, [frames[i] for i in indices])
    note = None
    if facts["announced"] > count:
        note = f"decoded {count} of the {facts['announced']} frames its header announces (truncated?)"
    return {
        "source": source,
        "clip": os.path.basename(out),
        "frames": count,
        "fps": facts["fps"],
        "width": width,
        "height": height,
        "indices": indices,
        "note": note,
    }


def decode_item(item: dict, job: dict) -> dict[str, Any]:
    """One item's manifest line; every failure becomes a skip with its reason."""
    source, out = str(item["source"]), str(item["out"])
    try:
        return decode_one(source, out, job)
    except Skip as exc:
        reason = str(exc)
    except (cv2.error, OSError, ValueError, MemoryError) as exc:
        reason = f"{type(exc).__name__}: {exc}".strip()
    shutil.rmtree(out, ignore_errors=True)
    return {"source": source, "skipped": reason}


def claim_stdout():
    """The manifest stream on a duplicate of fd 1; fd 1 itself (where FFmpeg or OpenCV might
    print) then points at stderr, so nothing else can corrupt the stream."""
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def emit(stream, line: dict) -> None:
    stream.write(json.dumps(line) + "\n")
    stream.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m augbench_clips JOB.json\n")
        return 2
    stream = claim_stdout()
    with open(argv[0], encoding="utf-8") as fh:
        job = json.load(fh)
    hello = {"decoder": "opencv", "version": cv2.__version__, "sampling_rule": SAMPLING_RULE}
    emit(stream, {"hello": hello})
    for item in job["items"]:
        emit(stream, decode_item(item, job))
    return 0
