"""The video decoders of the decode scenario, one class each, behind one small interface.

Each class imports only its own library (in its constructor, so a missing library becomes an
``Unsupported`` reason rather than an import error), pins its decoding to one thread, and reads the
clip of one video: ``read(source, indices)`` returns the frames at ``indices`` (handed over by the
coordinator, which owns the sampling rule) in the decoder's native type. ``ACCESS`` says how the
decoder reaches them; it must match the matrix (``specs/matrix.yaml``), which the coordinator checks.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np


class Unreadable(Exception):
    """A video this decoder cannot open or read the sampled frames of (the message says why)."""


class DecoderUnavailable(Exception):
    """The decoder's library is missing or cannot load (the message says why)."""


class Decoder:
    NAME = ""
    ACCESS = ""
    PACKAGE = ""
    TYPE_NAME = "numpy.ndarray"
    LAYOUT = "THWC"
    CHANNEL_ORDER = "RGB"

    def versions(self) -> dict[str, str]:
        raise NotImplementedError

    def threads(self) -> dict[str, Any]:
        raise NotImplementedError

    def read(self, source: str, indices: list[int]) -> Any:
        raise NotImplementedError

    @staticmethod
    def to_thwc(clip: Any) -> np.ndarray:
        """The clip as a THWC uint8 NumPy array (for checks outside timing only)."""
        return np.asarray(clip)

    @staticmethod
    def device(clip: Any) -> str:
        return "cpu"


def stack(frames: list[np.ndarray]) -> np.ndarray:
    return np.stack(frames) if frames else np.empty((0, 0, 0, 3), dtype=np.uint8)


class OpenCV(Decoder):
    """``cv2.VideoCapture``: one seek (``CAP_PROP_POS_FRAMES``) and one read per sampled index."""

    NAME, ACCESS, PACKAGE, CHANNEL_ORDER = "opencv", "seek-per-frame", "opencv-python-headless", "BGR"

    def __init__(self) -> None:
        try:
            import cv2
        except ImportError as exc:
            raise DecoderUnavailable(f"OpenCV is not importable here: {exc}") from None
        self.cv2 = cv2
        cv2.setNumThreads(1)

    def versions(self) -> dict[str, str]:
        return {self.PACKAGE: self.cv2.__version__, "numpy": np.__version__}

    def threads(self) -> dict[str, Any]:
        return {"cv2.getNumThreads": self.cv2.getNumThreads(), "CAP_PROP_N_THREADS": 1}

    def read(self, source: str, indices: list[int]) -> np.ndarray:
        cv2 = self.cv2
        cap = cv2.VideoCapture(source, cv2.CAP_FFMPEG, [cv2.CAP_PROP_N_THREADS, 1])
        try:
            if not cap.isOpened():
                raise Unreadable("OpenCV cannot open it")
            frames = []
            for index in indices:
                cap.set(cv2.CAP_PROP_POS_FRAMES, index)
                ok, frame = cap.read()
                if not ok or frame is None:
                    raise Unreadable(f"OpenCV read no frame at index {index}")
                frames.append(frame)
            return stack(frames)
        finally:
            cap.release()


class PyAV(Decoder):
    """``av.open``: decodes frames in order up to the last sampled index, converts the sampled ones."""

    NAME, ACCESS, PACKAGE = "pyav", "sequential", "av"

    def __init__(self) -> None:
        try:
            import av
        except ImportError as exc:
            raise DecoderUnavailable(f"PyAV is not importable here: {exc}") from None
        self.av = av

    def versions(self) -> dict[str, str]:
        return {self.PACKAGE: self.av.__version__, "numpy": np.__version__}

    def threads(self) -> dict[str, Any]:
        return {"codec_context.thread_count": 1}

    def read(self, source: str, indices: list[int]) -> np.ndarray:
        wanted, got = set(indices), {}
        last = max(indices, default=-1)
        try:
            with self.av.open(source) as container:
                stream = container.streams.video[0]
                stream.codec_context.thread_count = 1
                for index, frame in enumerate(container.decode(stream)):
                    if index in wanted:
                        got[index] = frame.to_ndarray(format="rgb24")
                    if index >= last:
                        break
        except (self.av.FFmpegError, OSError, IndexError, ValueError) as exc:
            raise Unreadable(f"PyAV: {exc}") from None
        missing = sorted(wanted - got.keys())
        if missing:
            raise Unreadable(f"PyAV decoded no frame at index {missing[0]}")
        return stack([got[i] for i in indices])


class Decord(Decoder):
    """``decord.VideoReader``: all sampled indices in one ``get_batch`` call, as a NumPy array."""

    NAME, ACCESS, PACKAGE = "decord", "batch-fetch", "decord"

    def __init__(self) -> None:
        try:
            import decord
        except ImportError as exc:
            raise DecoderUnavailable(f"decord is not importable here: {exc}") from None
        self.decord = decord

    def versions(self) -> dict[str, str]:
        return {self.PACKAGE: self.decord.__version__, "numpy": np.__version__}

    def threads(self) -> dict[str, Any]:
        return {"VideoReader.num_threads": 1}

    def read(self, source: str, indices: list[int]) -> np.ndarray:
        try:
            reader = self.decord.VideoReader(source, ctx=self.decord.cpu(0), num_threads=1)
            return reader.get_batch(indices).asnumpy()
        except (self.decord.DECORDError, IndexError, RuntimeError) as exc:
            raise Unreadable(f"decord: {first_line(exc)}") from None


class TorchCodec(Decoder):
    """torchvision's video decoding: ``torchcodec.decoders.VideoDecoder`` (exact seeks), all
    sampled indices in one ``get_frames_at`` call, as a TCHW uint8 tensor."""

    NAME, ACCESS, PACKAGE = "torchvision", "batch-fetch", "torchvision"
    TYPE_NAME, LAYOUT = "torch.Tensor", "TCHW"

    def __init__(self) -> None:
        try:
            import torch
            import torchvision
        except ImportError as exc:
            raise DecoderUnavailable(f"torchvision is not importable here: {exc}") from None
        self.torch, self.torchvision = torch, torchvision
        torch.set_num_threads(1)
        io_video = hasattr(torchvision.io, "read_video")
        try:
            import torchcodec
            from torchcodec.decoders import VideoDecoder
        except ImportError as exc:
            io = "has a deprecated" if io_video else "has no"
            raise DecoderUnavailable(
                f"torchvision {torchvision.__version__} {io} video reader in torchvision.io and its "
                f"video decoder torchcodec is not importable ({exc})"
            ) from None
        self.torchcodec, self.VideoDecoder = torchcodec, VideoDecoder

    def versions(self) -> dict[str, str]:
        return {
            self.PACKAGE: self.torchvision.__version__,
            "torchcodec": self.torchcodec.__version__,
            "torch": self.torch.__version__,
        }

    def threads(self) -> dict[str, Any]:
        return {"torch.get_num_threads": self.torch.get_num_threads(), "num_ffmpeg_threads": 1}

    def read(self, source: str, indices: list[int]) -> Any:
        try:
            decoder = self.VideoDecoder(source, dimension_order="NCHW", num_ffmpeg_threads=1, seek_mode="exact")
        except RuntimeError as exc:
            if "Could not load libtorchcodec" in str(exc):
                raise DecoderUnavailable(ffmpeg_missing(self.torchcodec.__version__, str(exc))) from None
            raise Unreadable(f"torchcodec: {first_line(exc)}") from None
        except ValueError as exc:
            raise Unreadable(f"torchcodec: {first_line(exc)}") from None
        try:
            return decoder.get_frames_at(indices).data
        except (RuntimeError, IndexError, ValueError) as exc:
            raise Unreadable(f"torchcodec: {first_line(exc)}") from None

    @staticmethod
    def to_thwc(clip: Any) -> np.ndarray:
        return clip.permute(0, 2, 3, 1).contiguous().numpy()

    @staticmethod
    def device(clip: Any) -> str:
        return str(clip.device)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def ffmpeg_missing(version: str, message: str) -> str:
    """torchcodec's load failure in one line: the FFmpeg libraries it looked for."""
    libs = sorted(set(re.findall(r"(libav\w+\.so\.\d+): cannot open shared object file", message)))
    found = f" (not found: {', '.join(libs)})" if libs else ""
    return (
        f"torchcodec {version} could not load FFmpeg's shared libraries (it supports FFmpeg 4 to 9){found}; "
        "install FFmpeg on the system, e.g. `apt-get install ffmpeg`"
    )


DECODERS = {cls.NAME: cls for cls in (OpenCV, PyAV, Decord, TorchCodec)}
