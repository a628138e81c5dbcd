"""Image + targets (mask, boxes, keypoints) in micro mode, through a real worker: each library's own
joint call must move the targets with the image (a flip mirrors them, a resize scales them, a
pixel transform leaves them alone), the worker times it, and what a library cannot do is
``unsupported`` with a reason, never an exception (docs/protocol.md, "Targets").

The targets file describes the conftest's synthetic JPEGs: two boxes, three keypoints and a mask
with one filled rectangle on image 0 and image 2, none (but a mask) on image 1.
"""

from __future__ import annotations

import json
from pathlib import Path


import pytest
from conftest import require_library, IMAGE_SIZES, load_registry, require, SharedWorkers

pytestmark = pytest.mark.environment("library")

REGISTRY = load_registry()
TARGET_LIBRARIES = ("albumentationsx", "albumentations", "torchvision", "kornia")
NO_TARGET_LIBRARIES = ("pillow", "opencv")
KINDS = ["mask", "boxes", "keypoints"]
# The spatial transforms of the paper set, plus pixel transforms that must carry the targets along.
SPATIAL = (
    "Resize", "RandomCrop224", "RandomResizedCrop", "CenterCrop224", "HorizontalFlip", "VerticalFlip", "Pad",
    "Rotate", "Affine", "Perspective", "Elastic", "Shear", "LongestMaxSize", "SmallestMaxSize", "RandomRotate90",
    "Transpose",
)
PIXEL = ("GaussianBlur", "Brightness", "JpegCompression")
MASK_CLASS = 3
MASK_BOX = (40, 100, 60, 160)  # rows 40..99, columns 60..159 hold MASK_CLASS


def _boxes(height: int, width: int) -> list[list[float]]:
    return [[20.0, 10.0, 60.0, 30.0], [100.5, 50.0, 180.0, float(height - 20)]]


def _keypoints(height: int, width: int) -> list[list[float]]:
    return [[20.0, 10.0], [150.0, 90.0], [float(width - 5), float(height - 5)]]


def _mask(height: int, width: int) -> dict:
    import numpy as np

    mask = np.zeros((height, width), dtype=np.uint8)
    top, bottom, left, right = MASK_BOX
    mask[top:bottom, left:right] = MASK_CLASS
    flat = mask.reshape(-1)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    runs = np.diff(np.r_[starts, flat.size])
    return {"values": flat[starts].tolist(), "runs": runs.tolist()}


def _entry(index: int, height: int, width: int) -> dict:
    entry = {"width": width, "height": height, "mask": _mask(height, width)}
    if index != 1:  # image 1: no boxes, no keypoints (valid)
        entry.update(boxes=_boxes(height, width), labels=[1, 2], keypoints=_keypoints(height, width))
    return entry


def _write(folder: Path, name: str, items: dict) -> str:
    path = folder / name
    path.write_text(json.dumps({"version": 1, "items": items}))
    return str(path)


@pytest.fixture(scope="session")
def targets_file(jpeg_paths: list[str], tmp_path_factory) -> str:
    items = {path: _entry(i, h, w) for i, (path, (h, w)) in enumerate(zip(jpeg_paths, IMAGE_SIZES))}
    return _write(tmp_path_factory.mktemp("targets"), "targets.json", items)


def _load(library: str, paths: list[str], file: str, pool: SharedWorkers, kinds: list[str] = KINDS):
    require_library(library)
    return pool.loaded(library, media="image", paths=paths, channels=3, device="cpu", targets={"file": file, "kinds": kinds})


def _emit(client, folder: Path) -> list[dict]:
    import numpy as np

    folder.mkdir()
    emitted = client.request("emit", dir=str(folder), seed=0)
    assert emitted["ok"], emitted
    outputs = []
    for out in emitted["outputs"]:
        targets = json.loads(Path(out["targets_file"]).read_text())
        h, w, _ = out["shape"]
        mask = np.fromfile(out["mask_file"], dtype=np.uint8).reshape(h, w) if "mask_file" in out else None
        outputs.append({**out, **targets, "mask": mask})
    return outputs


def _expected_mask(height: int, width: int):
    import numpy as np

    mask = np.zeros((height, width), dtype=np.uint8)
    top, bottom, left, right = MASK_BOX
    mask[top:bottom, left:right] = MASK_CLASS
    return mask


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_load_reports_targets(library: str, jpeg_paths, targets_file, shared_workers) -> None:
    _, loaded = _load(library, jpeg_paths, targets_file, shared_workers)
    assert loaded["count"] == 3 and loaded["skipped"] == []
    assert loaded["targets"] == {"kinds": KINDS, "items": 3, "boxes": 4, "keypoints": 6}


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_horizontal_flip_mirrors_targets(library: str, jpeg_paths, targets_file, shared_workers, tmp_path) -> None:
    np = require("numpy")
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers)
    prepared = client.request("prepare", transform="HorizontalFlip", params={}, device="cpu", seed=0)
    assert prepared["ok"] and prepared["targets"] == KINDS, prepared
    checked = client.request("check")
    assert checked["ok"], checked
    assert checked["targets_out"] == {"boxes": 2, "keypoints": 3, "mask_shape": [256, 320]}
    for index, out in enumerate(_emit(client, tmp_path / "out")):
        height, width = IMAGE_SIZES[index]
        assert out["shape"][:2] == [height, width]
        assert np.array_equal(out["mask"], _expected_mask(height, width)[:, ::-1]), "the mask is mirrored"
        if index == 1:
            assert out["boxes"] == [] and out["labels"] == [] and out["keypoints"] == []
            continue
        boxes = np.array(_boxes(height, width))
        mirrored = np.stack([width - boxes[:, 2], boxes[:, 1], width - boxes[:, 0], boxes[:, 3]], axis=1)
        assert np.allclose(out["boxes"], mirrored, atol=1.0), (out["boxes"], mirrored)
        assert out["labels"] == [1, 2]
        points = np.array(_keypoints(height, width))
        assert np.allclose(out["keypoints"], np.stack([width - points[:, 0], points[:, 1]], axis=1), atol=1.0)


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_resize_scales_targets(library: str, jpeg_paths, targets_file, shared_workers, tmp_path) -> None:
    np = require("numpy")
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers)
    size = REGISTRY["Resize"]["params"]["target_size"]
    prepared = client.request("prepare", transform="Resize", params=REGISTRY["Resize"]["params"], device="cpu")
    assert prepared["ok"], prepared
    checked = client.request("check")
    assert checked["ok"], checked
    assert checked["targets_out"]["mask_shape"] == [size, size]
    for index, out in enumerate(_emit(client, tmp_path / "out")):
        height, width = IMAGE_SIZES[index]
        sx, sy = size / width, size / height
        assert out["shape"][:2] == [size, size] and out["mask"].shape == (size, size)
        rows, cols = np.nonzero(out["mask"] == MASK_CLASS)
        top, bottom, left, right = MASK_BOX
        assert abs(rows.min() - top * sy) <= 2 and abs(rows.max() + 1 - bottom * sy) <= 2
        assert abs(cols.min() - left * sx) <= 2 and abs(cols.max() + 1 - right * sx) <= 2
        if index == 1:
            continue
        scaled = np.array(_boxes(height, width)) * [sx, sy, sx, sy]
        assert np.allclose(out["boxes"], scaled, atol=1.0), (out["boxes"], scaled)
        points = np.array(_keypoints(height, width)) * [sx, sy]
        assert np.allclose(out["keypoints"], points, atol=1.0), (out["keypoints"], points)


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_pixel_transform_leaves_targets_and_is_timed(library, jpeg_paths, targets_file, shared_workers, tmp_path) -> None:
    np = require("numpy")
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers)
    prepared = client.request("prepare", transform="GaussianBlur", params=REGISTRY["GaussianBlur"]["params"], device="cpu")
    assert prepared["ok"], prepared
    checked = client.request("check")
    assert checked["ok"], checked
    assert checked["output_shape"] == checked["input_shape"]
    for index, out in enumerate(_emit(client, tmp_path / "out")):
        height, width = IMAGE_SIZES[index]
        assert np.array_equal(out["mask"], _expected_mask(height, width))
        if index != 1:
            assert np.allclose(out["boxes"], _boxes(height, width), atol=1e-3)
            assert np.allclose(out["keypoints"], _keypoints(height, width), atol=1e-3)
    timed = client.request("time", start=0, count=3, loops=2)
    assert timed["ok"], timed
    assert len(timed["ns"]) == 2 and all(isinstance(v, int) and v > 0 for v in timed["ns"])
    assert len(timed["cpu_ns"]) == 2


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_items_without_usable_targets_are_skipped(library, jpeg_paths, tmp_path, shared_workers) -> None:
    (h0, w0), _, (h2, w2) = IMAGE_SIZES
    items = {jpeg_paths[0]: _entry(0, h0, w0), jpeg_paths[2]: {**_entry(2, h2, w2), "width": w2 + 1}}
    _, loaded = _load(library, jpeg_paths, _write(tmp_path, "partial.json", items), shared_workers)
    assert loaded["count"] == 1 and loaded["targets"]["items"] == 1
    reasons = {s["path"]: s["reason"] for s in loaded["skipped"]}
    assert reasons[jpeg_paths[1]] == "no targets for this item"
    assert f"{w2 + 1}x{h2}" in reasons[jpeg_paths[2]] and f"{w2}x{h2}" in reasons[jpeg_paths[2]]


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_one_kind_alone(library, jpeg_paths, targets_file, shared_workers) -> None:
    """A load of keypoints alone moves only them (no box parameters, no labels needed)."""
    client, loaded = _load(library, jpeg_paths, targets_file, shared_workers, kinds=["keypoints"])
    assert loaded["targets"] == {"kinds": ["keypoints"], "items": 3, "boxes": 0, "keypoints": 6}
    assert client.request("prepare", transform="VerticalFlip", params={}, device="cpu")["ok"]
    checked = client.request("check")
    assert checked["ok"] and checked["targets_out"] == {"keypoints": 3}, checked


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_batched_regime_with_targets_is_unsupported(library, jpeg_paths, targets_file, shared_workers) -> None:
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers)
    prepared = client.request("prepare", transform="HorizontalFlip", params={}, device="cpu", batch=2)
    assert not prepared["ok"] and prepared["kind"] == "unsupported", prepared
    assert "no batched regime" in prepared["error"]


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_malformed_targets_field_is_a_bad_request(library, jpeg_paths, targets_file, shared_workers) -> None:
    require_library(library)
    client = shared_workers.worker(library)
    for targets in (
        {"file": targets_file, "kinds": []},
        {"file": targets_file, "kinds": ["mask", "segments"]},
        {"file": targets_file, "kinds": ["mask", "mask"]},
        {"file": targets_file, "kinds": "mask"},
        {"kinds": ["mask"]},
        ["mask"],
    ):
        loaded = client.request("load", media="image", paths=jpeg_paths, channels=3, device="cpu", targets=targets)
        assert not loaded["ok"] and loaded["kind"] == "bad_request", (targets, loaded)


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_unusable_targets_file_is_bad_input(library, jpeg_paths, tmp_path, shared_workers) -> None:
    require_library(library)
    client = shared_workers.worker(library)
    not_json = tmp_path / "broken.json"
    not_json.write_text("{not json")
    no_version = tmp_path / "old.json"
    no_version.write_text(json.dumps({"items": {}}))
    for file in (str(not_json), str(no_version), str(tmp_path / "missing.json")):
        loaded = client.request(
            "load", media="image", paths=jpeg_paths, channels=3, device="cpu", targets={"file": file, "kinds": ["boxes"]}
        )
        assert not loaded["ok"] and loaded["kind"] == "bad_input" and file in loaded["error"], loaded
    empty = _write(tmp_path, "empty.json", {})
    loaded = client.request("load", media="image", paths=jpeg_paths, channels=3, device="cpu", targets={"file": empty, "kinds": ["mask"]})
    assert not loaded["ok"] and loaded["kind"] == "bad_input" and "no targets for this item" in loaded["error"], loaded


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_video_with_targets_is_unsupported(library, jpeg_paths, targets_file, shared_workers) -> None:
    require_library(library)
    client = shared_workers.worker(library)
    targets = {"file": targets_file, "kinds": KINDS}
    video = client.request("load", media="video", paths=jpeg_paths, clip_length=4, channels=3, device="cpu", targets=targets)
    assert not video["ok"] and video["kind"] == "unsupported" and video["error"] == "targets are measured on images only"


# ----- pipeline mode: (image, targets) samples through a real DataLoader ----------------------
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CENTER = {"name": "CenterCrop224", "params": {"height": 224, "width": 224}}


def _pipeline_ops(library: str, paths: list[str], file: str, preload: bool, kinds: list[str] = KINDS):
    require_library(library)
    require("torch")
    from augbench_worker import adapters, pipeline

    adapter = adapters.create(library)
    targets = {"file": file, "kinds": kinds}
    loaded = adapter.load({"media": "image", "paths": paths, "channels": 3, "pipeline": True, "preload": preload, "targets": targets})
    return pipeline.PipelineOps(adapter), loaded


def _pipeline_prepare(ops, transform: str, crop: dict | None = CENTER, split: bool = False) -> dict:
    request = {"transform": transform, "params": REGISTRY[transform]["params"]}
    request.update(crop=crop, mean=MEAN, std=STD, split=split, seed=0, preflight_items=1)
    return ops.prepare(request)


@pytest.mark.parametrize("preload", [False, True], ids=["decode_dataloader_augment", "memory_dataloader_augment"])
@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_pipeline_batches_carry_one_targets_dict_per_image(library, preload, jpeg_paths, targets_file) -> None:
    """CenterCrop224 then HorizontalFlip, in loader workers: the images stacked, each image's
    targets cropped and mirrored with it (the mask exactly, the boxes within a pixel)."""
    np = require("numpy")
    ops, loaded = _pipeline_ops(library, jpeg_paths, targets_file, preload)
    from augbench_worker import pipeline  # after the skips: it needs torch

    assert loaded["targets"] == {"kinds": KINDS, "items": 3, "boxes": 4, "keypoints": 6}
    prepared = _pipeline_prepare(ops, "HorizontalFlip")
    assert prepared["transform"] == "HorizontalFlip", prepared
    request = {"workers": 2, "batch_size": 3, "prefetch": 2, "warm_batches": 1}
    started = ops.start({**request, "order": [0, 1, 2], "seed": 0, "size": [224, 224]})
    assert started["batch"]["shape"] == [3, 3, 224, 224]
    counted = started["batch"]["targets"]  # what the crop kept: Albumentations drops what leaves it, the others keep it
    assert counted["kinds"] == KINDS and 2 <= counted["boxes"] <= 4 and 2 <= counted["keypoints"] <= 6, counted
    images, targets = pipeline.next_batch(ops.session)
    ops.handle("pipeline_stop", {})
    assert tuple(images.shape) == (3, 3, 224, 224) and len(targets) == 3
    for index, target in enumerate(targets):
        height, width = IMAGE_SIZES[index]
        top, left = (height - 224) // 2, (width - 224) // 2
        expected = _expected_mask(height, width)[top : top + 224, left : left + 224][:, ::-1]
        assert np.array_equal(target["mask"].numpy().astype(np.uint8), expected), f"image {index}: the mask is cropped and mirrored"
        if index == 1:
            assert len(target["boxes"]) == 0 and len(target["keypoints"]) == 0
            continue
        assert len(target["labels"]) == len(target["boxes"])
        x0, y0, x1, y1 = _boxes(height, width)[1]  # the box the crop cuts at its bottom edge
        moved = [224 - (x1 - left), y0 - top, 224 - (x0 - left), y1 - top]
        clipped = [*moved[:3], min(moved[3], 224)]  # Albumentations and torchvision clip it, Kornia keeps it
        found = [b for b in target["boxes"].tolist() if np.allclose(b, moved, atol=1.0) or np.allclose(b, clipped, atol=1.0)]
        assert found, (target["boxes"].tolist(), moved)


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
def test_pipeline_with_targets_refuses_the_gpu_split(library, jpeg_paths, targets_file) -> None:
    from augbench_worker.protocol import Unsupported

    ops, _ = _pipeline_ops(library, jpeg_paths, targets_file, preload=True, kinds=["boxes"])
    with pytest.raises(Unsupported, match="targets run in the loader workers: no GPU split"):
        _pipeline_prepare(ops, "HorizontalFlip", split=True)


def test_pipeline_library_refusal_of_a_target_is_unsupported(jpeg_paths, targets_file) -> None:
    """Kornia's RandomThinPlateSpline raises NotImplementedError on a mask (no table lists it):
    the preflight's first call finds it, and the row is ``unsupported`` naming the kind."""
    from augbench_worker.protocol import Unsupported

    ops, _ = _pipeline_ops("kornia", jpeg_paths, targets_file, preload=True, kinds=["mask"])
    with pytest.raises(Unsupported, match="ThinPlateSpline cannot move the mask with the image in kornia: NotImplementedError"):
        _pipeline_prepare(ops, "ThinPlateSpline")


def test_pipeline_file_of_another_size_than_its_targets_fails_naming_it(jpeg_paths, tmp_path) -> None:
    """A decode scope keeps paths: an entry's size is checked when the loader decodes the file."""
    from augbench_worker.protocol import WorkerError

    items = {path: _entry(i, h, w) for i, (path, (h, w)) in enumerate(zip(jpeg_paths, IMAGE_SIZES))}
    items[jpeg_paths[0]] = {**items[jpeg_paths[0]], "width": 321}
    file = _write(tmp_path, "wrong_size.json", items)
    ops, _ = _pipeline_ops("albumentationsx", jpeg_paths, file, preload=False, kinds=["boxes"])
    with pytest.raises(WorkerError, match="its targets are for a 321x256 image .* but it decodes to 320x256"):
        _pipeline_prepare(ops, "HorizontalFlip")


def test_pipeline_refuses_a_transform_that_cannot_move_a_target(jpeg_paths, targets_file) -> None:
    from augbench_worker.protocol import Unsupported

    ops, _ = _pipeline_ops("albumentationsx", jpeg_paths, targets_file, preload=True, kinds=["mask"])
    with pytest.raises(Unsupported, match="Perspective cannot move the mask with the image in albumentationsx"):
        _pipeline_prepare(ops, "Perspective")


def test_pipeline_target_contract_names_what_came_out() -> None:
    torch = require("torch")
    from augbench_worker import pipeline
    from augbench_worker.protocol import CONTRACT, WorkerError

    good = {"boxes": torch.zeros(0, 4), "labels": torch.zeros(0, dtype=torch.int64)}
    assert pipeline.check_targets([good, good], 2, ("boxes",)) == {"boxes": 0}
    bad_boxes = {"boxes": torch.zeros(2, 4), "labels": torch.zeros(1, dtype=torch.int64)}
    cases = [
        (good, "expected a list of 2 dicts"),
        ([good, bad_boxes], "image 1: boxes [2, 4] with 1 labels, expected N×4 and N labels"),
        ([good], "expected a list of 2 dicts"),
        ([good, {"boxes": good["boxes"]}], "the targets of image 1 are a dict with keys ['boxes']"),
        ([good, {**good, "labels": [1]}], "image 1: labels is a list of 1 × a int, not a tensor"),
    ]
    for targets, fragment in cases:
        with pytest.raises(WorkerError) as raised:
            pipeline.check_targets(targets, 2, ("boxes",))
        assert raised.value.kind == CONTRACT and fragment in raised.value.message, raised.value.message


@pytest.mark.parametrize("library", NO_TARGET_LIBRARIES)
def test_library_without_targets_refuses_them(library, jpeg_paths, targets_file, shared_workers) -> None:
    require_library(library)
    loaded = shared_workers.worker(library).request(
        "load", media="image", paths=jpeg_paths, channels=3, device="cpu", targets={"file": targets_file, "kinds": ["boxes"]}
    )
    assert not loaded["ok"] and loaded["kind"] == "unsupported", loaded
    assert loaded["error"] == f"{library} has no API that moves masks, boxes or keypoints with the image"


@pytest.mark.parametrize("library", TARGET_LIBRARIES)
@pytest.mark.parametrize("name", SPATIAL + PIXEL)
def test_paper_set_transform_with_all_kinds(library, name, jpeg_paths, targets_file, shared_workers, tmp_path) -> None:
    """Every spatial paper-set transform (and the pixel ones) prepares, checks and times with all
    three kinds, or answers ``unsupported`` with a reason: never another kind of failure."""
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers)
    prepared = client.request("prepare", transform=name, params=REGISTRY[name]["params"], device="cpu", seed=0)
    if not prepared["ok"]:
        assert prepared["kind"] == "unsupported" and len(prepared["error"]) > 10, prepared
        return
    checked = client.request("check")
    if not checked["ok"]:
        assert checked["kind"] == "unsupported" and len(checked["error"]) > 10, checked
        return
    out_hw = checked["output_shape"][:2] if checked["layout"] == "HWC" else checked["output_shape"][1:]
    assert checked["targets_out"]["mask_shape"] == out_hw
    assert set(checked["targets_out"]) == {"boxes", "keypoints", "mask_shape"}
    timed = client.request("time", start=0, count=3, loops=1)
    assert timed["ok"] and timed["ns"][0] > 0, timed
    if name in SPATIAL:  # never a silent image-only call: each kind moves on image 0 or image 2
        assert _moved(client, tmp_path) == {"boxes", "keypoints", "mask"}, name


def _moved(client, tmp_path: Path) -> set[str]:
    """The kinds whose emitted targets differ from the input on image 0 or image 2 (a random draw
    may leave one image as it was)."""
    np = require("numpy")
    moved = set()
    for index, out in enumerate(_emit(client, tmp_path / "moved")):
        if index == 1:
            continue
        height, width = IMAGE_SIZES[index]
        if len(out["boxes"]) != 2 or not np.allclose(out["boxes"], _boxes(height, width), atol=0.01):
            moved.add("boxes")
        if len(out["keypoints"]) != 3 or not np.allclose(out["keypoints"], _keypoints(height, width), atol=0.01):
            moved.add("keypoints")
        if out["mask"].shape != (height, width) or not np.array_equal(out["mask"], _expected_mask(height, width)):
            moved.add("mask")
    return moved


@pytest.mark.parametrize("library", ["kornia"])
def test_library_error_on_a_target_is_unsupported_at_check(library, jpeg_paths, targets_file, shared_workers) -> None:
    """Kornia's RandomThinPlateSpline raises NotImplementedError on a mask: found by the check's
    first call (no table lists it), answered ``unsupported`` naming the kind; its silent pass of
    boxes and keypoints is refused at prepare from the adapter's table."""
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers, kinds=["mask"])
    params = REGISTRY["ThinPlateSpline"]["params"]
    assert client.request("prepare", transform="ThinPlateSpline", params=params, device="cpu")["ok"]
    checked = client.request("check")
    assert not checked["ok"] and checked["kind"] == "unsupported", checked
    assert checked["error"].startswith("ThinPlateSpline cannot move the mask with the image in kornia: NotImplementedError")
    timed = client.request("time", start=0, count=1, loops=1)
    assert not timed["ok"] and timed["kind"] == "bad_request"
    client, _ = _load(library, jpeg_paths, targets_file, shared_workers, kinds=["boxes", "keypoints"])
    prepared = client.request("prepare", transform="ThinPlateSpline", params=params, device="cpu")
    assert not prepared["ok"] and prepared["kind"] == "unsupported", prepared
    assert prepared["error"].startswith("ThinPlateSpline cannot move the boxes and the keypoints with the image in kornia")
