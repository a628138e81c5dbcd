"""Video clips through the real protocol: AlbumentationsX (THWC uint8 via ``images=``),
torchvision (TCHW uint8) and Kornia (TCHW float32) load clip folders and run every transform of
the video set once per clip; supported transforms keep the clip's frame axis and meet the spec's
output rule, the rest (exactly those ``video_unsupported.json`` lists) answer ``unsupported``. A
random transform draws its parameters once per clip: on a clip of identical frames every output
frame is the same. Pillow has no clip layout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import _encode, LIBRARY_MODULES, load_registry, load_set, require, SharedWorkers, _synthetic, WorkerClient
from test_adapters import require_library

pytestmark = pytest.mark.environment("library")

REGISTRY = load_registry()
# What each library's adapter cannot build on clips, kept on purpose: an adapter that starts
# answering `unsupported` for more (or fewer) transforms fails here instead of passing quietly.
UNSUPPORTED = json.loads((Path(__file__).parent / "video_unsupported.json").read_text())
FRAMES = 4
VIDEO_LIBRARIES = ["albumentationsx", "albumentations", "torchvision", "kornia"]
AXES = {"THWC": (-1, [1, 2]), "TCHW": (1, [2, 3])}  # channel axis, spatial axes


@pytest.fixture(scope="session")
def clip_dirs(tmp_path_factory) -> list[str]:
    """Two clip folders of FRAMES frames each (the second: one frame repeated)."""
    require("numpy")
    root = tmp_path_factory.mktemp("clips")
    folders = []
    for clip in range(2):
        folder = root / f"clip_{clip:03d}"
        folder.mkdir()
        for t in range(FRAMES):
            frame = _synthetic(256, 320, seed=clip * 10 + (t if clip == 0 else 0))
            _encode(frame, folder / f"frame_{t:03d}.jpg")
        folders.append(str(folder))
    return folders


def clip_worker(library: str, folders: list[str], pool: SharedWorkers) -> WorkerClient:
    require_library(library)
    client, loaded = pool.loaded(library, media="video", paths=folders, channels=3, clip_length=FRAMES, device="cpu")
    assert loaded["count"] == len(folders) and loaded["layout"] in AXES, loaded
    return client


def assert_clip_contract(name: str, checked: dict) -> None:
    spec, layout = REGISTRY[name], checked["layout"]
    channel, spatial = AXES[layout]
    shape_in, shape_out = checked["input_shape"], checked["output_shape"]
    assert shape_out[0] == shape_in[0] == FRAMES, checked  # the frame axis survives
    assert shape_out[channel] == shape_in[channel], checked
    if spec["rule"] == "same":
        assert shape_out == shape_in, checked
    elif spec["rule"] == "fixed":
        assert [shape_out[a] for a in spatial] == spec["size"], checked
    expected_dtype = checked["input_dtype"] if spec["dtype"] == "same" else spec["dtype"]
    assert checked["output_dtype"] == expected_dtype, checked


CASES = [pytest.param(lib, name, id=f"{lib}-{name}") for lib in VIDEO_LIBRARIES for name in load_set("video")]


@pytest.mark.parametrize(("library", "name"), CASES)
def test_clip_contract(library: str, name: str, clip_dirs: list[str], shared_workers: SharedWorkers) -> None:
    client = clip_worker(library, clip_dirs, shared_workers)
    prepared = client.request("prepare", transform=name, params=REGISTRY[name]["params"], device="cpu")
    listed = name in UNSUPPORTED[library]
    if not prepared["ok"]:
        assert prepared["kind"] == "unsupported" and len(prepared["error"]) > 10, prepared
        assert listed, f"{library} no longer builds {name} on clips ({prepared['error']}); video_unsupported.json does not list it"
        return
    assert not listed, f"{library} now builds {name} on clips: take it out of video_unsupported.json"
    checked = client.request("check")
    assert checked["ok"], checked
    assert_clip_contract(name, checked)
    timed = client.request("time", start=0, count=2, loops=2)
    assert timed["ok"], timed


@pytest.mark.parametrize("library", VIDEO_LIBRARIES)
def test_one_parameter_draw_per_clip(library: str, clip_dirs: list[str]) -> None:
    """Item 1 holds one frame four times: a random crop must cut every frame the same way."""
    import numpy as np

    require_library(library)
    from augbench_worker.adapters import create

    adapter = create(library)
    adapter.load({"media": "video", "paths": clip_dirs, "channels": 3, "device": "cpu"})
    name = "RandomResizedCrop"
    adapter.prepare({"transform": name, "params": REGISTRY[name]["params"], "seed": 3})
    for _ in range(3):
        out = adapter.prepared.run(adapter.items[1])
        frames = np.asarray(out.cpu() if hasattr(out, "cpu") else out)
        assert all(np.array_equal(frames[0], frames[t]) for t in range(1, FRAMES)), library


@pytest.mark.parametrize(("library", "dtype"), [("kornia", "float16"), ("torchvision", "uint8")])
def test_clips_on_cuda_in_the_native_dtype(library: str, dtype: str, clip_dirs: list[str]) -> None:
    """On a CUDA machine: Kornia holds clips as float16, torchvision as uint8, and every video
    transform either meets the clip contract on the GPU or answers with a reason. Skipped
    without CUDA (CI has none); ``AUGBENCH_GPU_REPORT`` names a JSON file for the outcomes."""
    torch = require("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    require_library(library)
    client = WorkerClient("--library", library)
    try:
        loaded = client.request("load", media="video", paths=clip_dirs, channels=3, clip_length=FRAMES, device="cuda")
        assert loaded["ok"] and loaded["dtype"] == dtype, loaded
        outcomes = {name: _cuda_outcome(client, name) for name in load_set("video")}
    finally:
        client.close()
    report = os.environ.get("AUGBENCH_GPU_REPORT")
    if report:
        with open(f"{report}.{library}.json", "w") as handle:
            json.dump(outcomes, handle, indent=1)
    failed = {n: o for n, o in outcomes.items() if o["status"] == "error"}
    assert sum(o["status"] == "ok" for o in outcomes.values()) >= 10, outcomes
    assert not failed, failed


def _cuda_outcome(client: WorkerClient, name: str) -> dict:
    prepared = client.request("prepare", transform=name, params=REGISTRY[name]["params"], device="cuda")
    if not prepared["ok"]:
        status = "unsupported" if prepared["kind"] == "unsupported" else "error"
        return {"status": status, "reason": prepared["error"][:200]}
    checked = client.request("check")
    if not checked["ok"]:
        return {"status": "error", "reason": checked["error"][:300]}
    assert_clip_contract(name, checked)
    timed = client.request("time", start=0, count=2, loops=3)
    if not timed["ok"]:
        return {"status": "error", "reason": timed["error"][:300]}
    per_clip = min(timed["ns"]) / 2 / 1e9
    return {"status": "ok", "dtype": checked["output_dtype"], "clips_per_sec": round(1 / per_clip, 1)}


def test_pillow_has_no_clip_layout(clip_dirs: list[str], worker_factory) -> None:
    require("PIL")
    client = worker_factory("--library", "pillow")
    loaded = client.request("load", media="video", paths=clip_dirs, channels=3, device="cpu")
    assert not loaded["ok"] and loaded["kind"] == "unsupported", loaded
