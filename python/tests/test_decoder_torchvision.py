"""The decode scenario's torchvision decoder (``augbench_clips.decoders.TorchCodec``: torchcodec's
``VideoDecoder``) inside the environment that has it, torch_stack: it returns exactly the frames
at the sampled indices of a real MJPEG AVI whose frame t is a flat gray of a level that encodes t,
as a TCHW uint8 tensor, and a file that is no video is ``Unreadable``. test_decoders.py checks the
other decoders the same way in the video_decode environment (torch is not there).

torchcodec loads the system's FFmpeg shared libraries, and the test videos are written with the
system's ``ffmpeg`` (Debian: ``apt-get install ffmpeg``; scripts/test.sh installs it). Where the
run promises FFmpeg (``CI`` set, or ``AUGBENCH_EXPECT_TOOLS`` naming ffmpeg) a missing FFmpeg
fails these tests; elsewhere they skip. torchcodec itself comes with torchvision
(conftest.PROMISED_WITH), so it is a failure wherever torchvision is promised.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import has_library, require

pytestmark = pytest.mark.environment("library")

if not has_library("torchvision"):
    require("torchvision")  # skips in the environments of other libraries; fails where promised
np = require("numpy")
require("torchcodec")

from augbench_clips import decoders  # noqa: E402

# What the sampling rule (augbench_clips.decode.sample_indices, checked in test_decoders.py) picks
# for 16 of 37 frames and 8 of 5: decode.py imports OpenCV, which this environment does not have.
SAMPLED = {
    (37, 16): [0, 2, 4, 7, 9, 12, 14, 16, 19, 21, 24, 26, 28, 31, 33, 36],
    (5, 8): [0, 1, 2, 3, 4, 4, 4, 4],
}

STEP = 6  # gray level per frame index: frame t is level t * STEP
SIZE = (64, 48)


def ffmpeg_promised() -> bool:
    tools = os.environ.get("AUGBENCH_EXPECT_TOOLS", "").split(",")
    return bool(os.environ.get("CI")) or "ffmpeg" in (t.strip() for t in tools)


def no_ffmpeg(reason: str) -> None:
    if ffmpeg_promised():
        pytest.fail(f"this run promises FFmpeg (CI or AUGBENCH_EXPECT_TOOLS): {reason}", pytrace=False)
    pytest.skip(reason)


def write_video(path, frames: int) -> None:
    """An MJPEG AVI (the codec and container of the synthetic videos) written by the system's
    ffmpeg from raw gray frames, frame t at level t * STEP."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        no_ffmpeg("no ffmpeg on PATH to write the test videos (Debian: apt-get install ffmpeg)")
    w, h = SIZE
    raw = b"".join(np.full((h, w, 3), t * STEP, dtype=np.uint8).tobytes() for t in range(frames))
    subprocess.run(
        [ffmpeg, "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", "25",
         "-i", "-", "-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj420p", str(path)],
        input=raw, check=True, timeout=60,
    )  # fmt: skip


def frame_indices(frames) -> list[int]:
    """The index each decoded frame carries (its mean gray level / STEP, rounded)."""
    return [int(round(float(f.mean()) / STEP)) for f in frames]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("videos")
    paths = {}
    for frames in (37, 5):
        paths[frames] = folder / f"v{frames}.avi"
        write_video(paths[frames], frames)
    return paths


def read(d: decoders.Decoder, source: str, indices: list[int]):
    try:
        return d.read(source, indices)
    except decoders.DecoderUnavailable as exc:  # torchcodec finds no FFmpeg libraries on first use
        no_ffmpeg(str(exc))


@pytest.mark.parametrize("frames,length", [(37, 16), (5, 8)])
def test_torchcodec_returns_exactly_the_sampled_frames(frames, length, videos):
    d = decoders.TorchCodec()
    assert set(d.versions()) == {"torchvision", "torchcodec", "torch"}
    indices = SAMPLED[(frames, length)]
    clip = read(d, str(videos[frames]), indices)
    assert d.LAYOUT == "TCHW" and tuple(clip.shape) == (length, 3, SIZE[1], SIZE[0]), clip.shape
    assert d.device(clip) == "cpu"
    thwc = d.to_thwc(clip)
    assert thwc.shape == (length, SIZE[1], SIZE[0], 3) and thwc.dtype == np.uint8, thwc.shape
    assert frame_indices(thwc) == indices


def test_a_file_that_is_no_video_is_unreadable(tmp_path, videos):
    d = decoders.TorchCodec()
    read(d, str(videos[5]), [0])  # FFmpeg loads (or the test fails/skips as promised)
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"not a video" * 40)
    with pytest.raises(decoders.Unreadable, match="torchcodec"):
        d.read(str(junk), [0, 1])
