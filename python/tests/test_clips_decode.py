"""The clip decoder (``augbench_clips.decode``) inside the ``video_decode`` environment: the
sampling rule's known values (the same table as the Rust twin in media/clips.rs), a round trip
through a real MJPEG AVI, and skips with reasons for files OpenCV cannot use."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import require

pytestmark = pytest.mark.environment("video_decode")

cv2 = require("cv2")
np = require("numpy")

from augbench_clips.decode import SAMPLING_RULE, decode_item, sample_indices  # noqa: E402


def test_known_values_match_the_rust_table():
    assert sample_indices(5, 3) == [0, 2, 4]
    assert sample_indices(10, 4) == [0, 3, 6, 9]
    assert sample_indices(40, 16) == [0, 2, 5, 7, 10, 13, 15, 18, 20, 23, 26, 28, 31, 33, 36, 39]
    assert sample_indices(16, 16) == list(range(16))
    assert sample_indices(7, 1) == [0]
    assert sample_indices(31, 23)[11] == 15  # exact, where float linspace truncates to 14
    assert sample_indices(3, 6) == [0, 1, 2, 2, 2, 2]
    assert sample_indices(0, 16) == [] and sample_indices(10, 0) == []
    assert SAMPLING_RULE == "linspace-floor-repeat-last/v1"


@pytest.mark.parametrize("n,length", [(n, l) for n in range(1, 120, 7) for l in range(1, 33, 5)])
def test_rule_shape(n, length):
    idx = sample_indices(n, length)
    assert len(idx) == length
    assert idx[0] == 0 and all(0 <= i < n for i in idx)
    assert idx == sorted(idx)


def write_video(path, frames: int, size=(64, 48)) -> None:
    w, h = size
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (w, h))
    assert out.isOpened()
    for t in range(frames):
        out.write(np.full((h, w, 3), t * 20, dtype=np.uint8))
    out.release()


def test_a_video_becomes_png_frames_of_the_sampled_indices(tmp_path):
    src = tmp_path / "v.avi"
    write_video(src, 10)
    job = {"clip_length": 4, "min_side": 16, "memory_bytes": 1 << 30}
    line = decode_item({"source": str(src), "out": str(tmp_path / "clip_000000")}, job)
    assert line["frames"] == 10 and line["indices"] == [0, 3, 6, 9], line
    assert line["clip"] == "clip_000000" and line["note"] is None
    names = sorted(os.listdir(tmp_path / "clip_000000"))
    assert names == [f"frame_{k:03d}.png" for k in range(4)]
    levels = [int(cv2.imread(str(tmp_path / "clip_000000" / n)).mean()) for n in names]
    assert all(abs(got - t * 20) <= 4 for got, t in zip(levels, [0, 3, 6, 9])), levels


def test_a_video_held_only_partly_is_read_a_second_time(tmp_path):
    src = tmp_path / "v.avi"
    write_video(src, 6)
    job = {"clip_length": 3, "min_side": 16, "memory_bytes": 1}
    line = decode_item({"source": str(src), "out": str(tmp_path / "c")}, job)
    assert line["indices"] == [0, 2, 5] and len(os.listdir(tmp_path / "c")) == 3


def test_unusable_files_are_skipped_with_a_reason(tmp_path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video" * 30)
    tiny = tmp_path / "tiny.avi"
    write_video(tiny, 3, size=(8, 8))
    job = {"clip_length": 4, "min_side": 16, "memory_bytes": 1 << 30}
    for src, why in [(junk, "cannot open"), (tiny, "8x8 pixels")]:
        out = tmp_path / f"out_{src.stem}"
        line = decode_item({"source": str(src), "out": str(out)}, job)
        assert why in line["skipped"], line
        assert not out.exists(), "a skipped input leaves no folder"


def test_the_command_streams_hello_then_one_line_per_item(tmp_path):
    src = tmp_path / "v.avi"
    write_video(src, 5)
    job = tmp_path / "job.json"
    items = [{"source": str(src), "out": str(tmp_path / "a")}, {"source": "/nope.avi", "out": str(tmp_path / "b")}]
    job.write_text(json.dumps({"clip_length": 2, "min_side": 16, "items": items}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "augbench_clips", str(job)], capture_output=True, text=True, env=env, check=True)
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert lines[0]["hello"]["sampling_rule"] == SAMPLING_RULE
    assert lines[1]["indices"] == [0, 4] and "skipped" in lines[2]
