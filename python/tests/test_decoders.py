"""The decode scenario's decoders (``augbench_clips.decoders``) and their worker
(``python -m augbench_clips.bench``), inside the environment that has them: every installed
decoder returns exactly the frames at the sampled indices (the rule's Python twin picks them) of a
real MJPEG AVI whose frame t is a flat gray of a level that encodes t, in its declared layout.
torchvision's decoder is checked the same way where torch is (test_decoder_torchvision.py).

``AUGBENCH_EXPECT_DECODERS=opencv,pyav,decord`` turns a decoder that is not available into a
failure instead of a skip (scripts/test.sh sets it for the video_decode environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import require

pytestmark = pytest.mark.environment("video_decode")

np = require("numpy")
cv2 = require("cv2")  # writes the test videos

from augbench_clips import decoders  # noqa: E402
from augbench_clips.decode import sample_indices  # noqa: E402

EXPECTED = {d for d in os.environ.get("AUGBENCH_EXPECT_DECODERS", "").split(",") if d}
# The decoders of this environment; torchvision's (torchcodec) runs where torch is, in
# test_decoder_torchvision.py (the library suite of the torch_stack environment).
HERE = sorted(name for name in decoders.DECODERS if name != decoders.TorchCodec.NAME)
STEP = 6  # gray level per frame index: frame t is level t * STEP
SIZE = (64, 48)


def write_video(path, frames: int) -> None:
    w, h = SIZE
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (w, h))
    assert out.isOpened()
    for t in range(frames):
        out.write(np.full((h, w, 3), t * STEP, dtype=np.uint8))
    out.release()


def frame_indices(frames: np.ndarray) -> list[int]:
    """The index each decoded frame carries (its mean gray level / STEP, rounded)."""
    return [int(round(float(f.mean()) / STEP)) for f in frames]


def decoder(name: str) -> decoders.Decoder:
    try:
        return decoders.DECODERS[name]()
    except decoders.DecoderUnavailable as exc:
        if name in EXPECTED:
            pytest.fail(f"{name} is expected in this environment: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("videos")
    paths = {}
    for frames in (37, 5):
        paths[frames] = folder / f"v{frames}.avi"
        write_video(paths[frames], frames)
    return paths


@pytest.mark.parametrize("name", HERE)
@pytest.mark.parametrize("frames,length", [(37, 16), (5, 8)])
def test_each_decoder_returns_exactly_the_sampled_frames(name, frames, length, videos):
    d = decoder(name)
    indices = sample_indices(frames, length)
    try:
        clip = d.read(str(videos[frames]), indices)
    except decoders.DecoderUnavailable as exc:  # torchcodec finds no FFmpeg on first use
        if name in EXPECTED:
            raise
        pytest.skip(str(exc))
    thwc = d.to_thwc(clip)
    assert thwc.shape == (length, SIZE[1], SIZE[0], 3) and thwc.dtype == np.uint8, thwc.shape
    assert frame_indices(thwc) == indices
    layout_shape = {"THWC": thwc.shape, "TCHW": (length, 3, SIZE[1], SIZE[0])}[d.LAYOUT]
    assert tuple(clip.shape) == layout_shape


@pytest.mark.parametrize("name", HERE)
def test_a_file_that_is_no_video_is_unreadable(name, tmp_path):
    d = decoder(name)
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"not a video" * 40)
    with pytest.raises((decoders.Unreadable, decoders.DecoderUnavailable)):
        d.read(str(junk), [0, 1])


def test_the_rule_picks_spread_indices_and_repeats_the_last_of_a_short_video():
    # test_decoder_torchvision.py uses these two lists (its environment has no OpenCV for decode.py)
    assert sample_indices(37, 16) == [0, 2, 4, 7, 9, 12, 14, 16, 19, 21, 24, 26, 28, 31, 33, 36]
    assert sample_indices(5, 8) == [0, 1, 2, 3, 4, 4, 4, 4]


def bench(name: str, requests: list[dict]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    lines = "".join(json.dumps(r) + "\n" for r in requests + [{"op": "shutdown"}])
    done = subprocess.run(
        [sys.executable, "-m", "augbench_clips.bench", "--decoder", name],
        input=lines, capture_output=True, text=True, env=env, timeout=120, check=True,
    )
    return [json.loads(x) for x in done.stdout.splitlines()]


def test_the_worker_checks_times_and_writes_the_marker_regions(videos, tmp_path):
    decoder("opencv")
    items = [{"source": str(videos[37]), "indices": sample_indices(37, 16)}]
    verify = {"dir": str(tmp_path), "height": 8, "width": 16}
    hello, opened, timed, bye = bench("opencv", [
        {"op": "hello"},
        {"op": "decode_open", "items": items, "verify": verify},
        {"op": "decode_time", "count": 1},
    ])
    assert hello["ok"] and hello["access"] == decoders.OpenCV.ACCESS
    assert hello["threads"]["AUGBENCH_THREAD_POLICY"] == "single"
    assert opened["count"] == 1 and opened["sample"]["shape"] == [16, SIZE[1], SIZE[0], 3]
    region = np.fromfile(tmp_path / "000000.u8", dtype=np.uint8).reshape(16, 8, 16, 3)
    assert frame_indices(region) == items[0]["indices"]
    assert timed["ok"] and len(timed["ns"]) == 1 and timed["ns"][0] > 0
    assert bye == {"ok": True}


def test_the_worker_answers_unsupported_for_an_unreadable_file_and_a_missing_library(tmp_path):
    decoder("opencv")
    junk = tmp_path / "junk.avi"
    junk.write_bytes(b"\0" * 100)
    _, opened, _ = bench("opencv", [{"op": "hello"}, {"op": "decode_open", "items": [{"source": str(junk), "indices": [0]}]}])
    assert not opened["ok"] and opened["kind"] == "unsupported", opened
    assert "junk.avi" in opened["error"], opened
    missing = [n for n, cls in decoders.DECODERS.items() if not importable_for(cls)]
    if not missing:
        pytest.skip("every decoder is importable here")
    hello, _ = bench(missing[0], [{"op": "hello"}])
    assert not hello["ok"] and hello["kind"] == "unsupported" and hello["error"], hello


def importable_for(cls) -> bool:
    try:
        cls()
        return True
    except decoders.DecoderUnavailable:
        return False
