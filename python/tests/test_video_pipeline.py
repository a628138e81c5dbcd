"""Video pipeline rows inside each library environment with torch: clip folders go through the
recipe in the library's native clip layout (AlbumentationsX THWC via ``images=``, torchvision
TCHW uint8, Kornia TCHW) and come out of a real ``DataLoader`` as one B×T×3×H×W float32
normalized batch; every frame of a clip shares one crop window and one parameter draw; the
memory scope preloads clips; the ceiling row and the GPU split path work on clips; Pillow refuses.
"""

from __future__ import annotations

import pytest

from conftest import _encode, has_library, importable, LIBRARY_MODULES, load_registry, require, _synthetic

pytestmark = pytest.mark.environment("library")

torch = require("torch")

from augbench_worker import adapters, pipeline  # noqa: E402 - needs torch, skipped above
from augbench_worker.protocol import CONTRACT, WorkerError  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CROP = {"name": "RandomCrop224", "params": {"height": 224, "width": 224}}
FRAMES = 4
REGISTRY = load_registry()
VIDEO = [lib for lib in ("albumentationsx", "albumentations", "torchvision", "kornia") if has_library(lib)]


@pytest.fixture(scope="session")
def clip_folders(tmp_path_factory) -> list[str]:
    """Three clip folders of FRAMES 256×320 JPEG frames; the last holds one frame repeated."""
    root = tmp_path_factory.mktemp("video_pipeline")
    folders = []
    for clip in range(3):
        folder = root / f"clip_{clip:06d}"
        folder.mkdir()
        for t in range(FRAMES):
            frame = _synthetic(256, 320, seed=100 + clip * 10 + (0 if clip == 2 else t))
            _encode(frame, folder / f"frame_{t:03d}.jpg")
        folders.append(str(folder))
    return folders


def ops_for(library: str, folders: list[str], preload: bool = False) -> pipeline.PipelineOps:
    adapter = adapters.create(library)
    request = {"media": "video", "paths": folders, "channels": 3, "clip_length": FRAMES}
    adapter.load({**request, "pipeline": True, "preload": preload})
    return pipeline.PipelineOps(adapter)


def prepare(ops, transform: str = "Rotate", split: bool = False, ceiling: bool = False) -> dict:
    params = {} if ceiling else REGISTRY[transform]["params"]
    request = {"transform": transform, "params": params, "crop": CROP, "mean": MEAN, "std": STD, "ceiling": ceiling}
    return ops.prepare({**request, "split": split, "seed": 0, "preflight_items": 1})


def start(ops, items: int, workers: int = 2, batch_size: int = 2, frames: int | None = FRAMES) -> dict:
    request = {"workers": workers, "batch_size": batch_size, "prefetch": 2, "warm_batches": 1, "seed": 0}
    return ops.start({**request, "order": list(range(items)), "size": [224, 224], "frames": frames})


@pytest.mark.parametrize("library", VIDEO)
def test_clip_batches_meet_the_contract_in_loader_workers(library, clip_folders) -> None:
    ops = ops_for(library, clip_folders)
    assert isinstance(ops.adapter.items[0], str), "the decode scope keeps clip folders"
    prepare(ops)
    started = start(ops, len(clip_folders))
    assert started["batch"]["shape"] == [2, FRAMES, 3, 224, 224] and started["batch"]["dtype"] == "float32"
    assert [r["worker"] for r in started["worker_threads"]] == [0, 1]
    window = ops.handle("pipeline_run", {"min_batches": 3, "min_time": 0.0})
    assert len(window["ns"]) == 3 and window["items"] == 6, "items are clips"
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", VIDEO)
@pytest.mark.parametrize("transform", ["Rotate", "RandomResizedCrop"])
def test_frames_of_a_clip_share_one_crop_and_one_draw(library, transform, clip_folders) -> None:
    """The last clip holds one frame four times: one crop window and one draw of T per clip
    give four identical output frames; per-frame draws (or windows) would not."""
    ops = ops_for(library, [clip_folders[2]] * 4)
    if transform == "RandomResizedCrop":  # a crop transform is the crop stage itself
        params = REGISTRY[transform]["params"]
        request = {"transform": transform, "params": params, "crop": None, "mean": MEAN, "std": STD}
        ops.prepare({**request, "split": False, "seed": 0, "preflight_items": 1})
    else:
        prepare(ops, transform)
    start(ops, 4, workers=0, batch_size=1)
    for _ in range(3):
        clip = pipeline.next_batch(ops.session)[0]
        assert all(torch.equal(clip[0], clip[t]) for t in range(1, FRAMES)), library
    first, second = pipeline.next_batch(ops.session)[0], pipeline.next_batch(ops.session)[0]
    assert not torch.equal(first, second), "clips draw anew (the check above could fail)"
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", VIDEO)
def test_the_memory_scope_preloads_clips_and_the_ceiling_row_runs(library, clip_folders) -> None:
    ops = ops_for(library, clip_folders, preload=True)
    item = ops.adapter.items[0]
    assert not isinstance(item, str) and FRAMES in list(item.shape)[:1], "a preloaded clip"
    assert prepare(ops, "DecodeOnly", ceiling=True)["decoder"] == ops.adapter.decoder
    assert start(ops, len(clip_folders), workers=0)["batch"]["shape"] == [2, FRAMES, 3, 224, 224]
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", [lib for lib in VIDEO if lib in ("torchvision", "kornia")])
def test_the_gpu_split_runs_clips_on_the_cpu(library, clip_folders) -> None:
    ops = ops_for(library, clip_folders)
    assert prepare(ops, split=True)["split"] and ops.recipe.batch is not None
    assert start(ops, len(clip_folders))["batch"]["shape"] == [2, FRAMES, 3, 224, 224]
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", VIDEO[:1])
def test_an_image_contract_on_clips_fails_before_timing(library, clip_folders) -> None:
    ops = ops_for(library, clip_folders)
    prepare(ops)
    with pytest.raises(WorkerError) as caught:
        start(ops, len(clip_folders), workers=0, frames=None)
    assert caught.value.kind == CONTRACT and f"[2, {FRAMES}, 3, 224, 224]" in caught.value.message


def test_the_clip_contract_names_what_came_out() -> None:
    normalized = torch.rand(2, FRAMES, 3, 224, 224) - 0.5
    assert pipeline.check_batch(normalized, 2, [224, 224], FRAMES)["shape"] == [2, FRAMES, 3, 224, 224]
    for bad, fragment in [
        (torch.rand(2, 3, 224, 224) - 0.5, "a tensor [2, 3, 224, 224] float32, expected float32 [2, 4, 3, 224x224]"),
        (torch.rand(2, FRAMES, 224, 224, 3) - 0.5, "normalized TCHW clips"),
        (torch.rand(2, FRAMES, 3, 224, 224), "not normalized"),
    ]:
        with pytest.raises(WorkerError) as caught:
            pipeline.check_batch(bad, 2, [224, 224], FRAMES)
        assert caught.value.kind == CONTRACT and fragment in caught.value.message, caught.value.message


def test_pillow_refuses_video_pipeline_rows(clip_folders) -> None:
    require("PIL")
    from augbench_worker.protocol import Unsupported

    adapter = adapters.create("pillow")
    with pytest.raises(Unsupported, match="no video clip layout"):
        adapter.load({"media": "video", "paths": clip_folders, "channels": 3, "pipeline": True, "preload": False})
