"""Pipeline mode inside each library environment that has torch (the loader is PyTorch's
DataLoader): the output contract on real batches, loader workers that draw different
augmentations, the GPU split code path run on the CPU, and bad input (a corrupt JPEG, a loader
worker killed mid-run, a recipe whose batch is not one tensor)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from conftest import has_library, importable, LIBRARY_MODULES, require

pytestmark = pytest.mark.environment("library")

torch = require("torch")

from augbench_worker import adapters, pipeline  # noqa: E402 - needs torch, skipped above
from augbench_worker.protocol import CONTRACT, EXCEPTION, WorkerError  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CROP = {"name": "RandomCrop224", "params": {"height": 224, "width": 224}}
LIBRARIES = [name for name in LIBRARY_MODULES if has_library(name)]
EXPECTED = [lib for lib in os.environ.get("AUGBENCH_EXPECT_LIBS", "").split(",") if lib]


def ops_for(library: str, paths: list[str], preload: bool = False):
    adapter = adapters.create(library)
    adapter.load({"media": "image", "paths": paths, "channels": 3, "pipeline": True, "preload": preload})
    return pipeline.PipelineOps(adapter)


def prepare(ops, transform: str = "HorizontalFlip", params: dict | None = None, split: bool = False) -> dict:
    request = {"transform": transform, "params": params or {}, "crop": CROP, "mean": MEAN, "std": STD}
    return ops.prepare({**request, "split": split, "seed": 0, "preflight_items": 1})


def start(ops, items: int, workers: int = 2, batch_size: int = 2, warm: int = 2) -> dict:
    order = list(range(items))
    request = {"workers": workers, "batch_size": batch_size, "prefetch": 2, "warm_batches": warm}
    return ops.start({**request, "order": order, "seed": 0, "size": [224, 224]})


def test_every_expected_library_is_importable() -> None:
    missing = [lib for lib in EXPECTED if lib not in LIBRARIES]
    assert not missing, f"expected {missing} in this environment"


@pytest.mark.parametrize("library", LIBRARIES)
def test_batches_meet_the_contract_and_come_from_loader_workers(library, jpeg_paths) -> None:
    ops = ops_for(library, jpeg_paths)
    prepared = prepare(ops)
    assert prepared["decoder"] == ops.adapter.decoder and prepared["decoder"]
    started = start(ops, len(jpeg_paths))
    assert started["batch"]["shape"] == [2, 3, 224, 224] and started["batch"]["dtype"] == "float32"
    assert [r["worker"] for r in started["worker_threads"]] == [0, 1], started["worker_threads"]
    window = ops.handle("pipeline_run", {"min_batches": 5, "min_time": 0.0, "rewarm_batches": 1})
    assert len(window["ns"]) == 5 and window["items"] == 10
    assert window["ns"] == sorted(window["ns"]) and window["gpu_memory"] is None
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", LIBRARIES)
def test_loader_workers_start_by_fork_whatever_the_default(library, jpeg_paths) -> None:
    # Recipes are closures: only fork can hand them to loader workers. The platform default must
    # not matter (Python 3.14 makes it forkserver on Linux), so it is spawn during this test: a
    # loader that followed the default would fail to pickle the recipe.
    import multiprocessing

    before = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("spawn", force=True)
    try:
        ops = ops_for(library, jpeg_paths)
        prepare(ops)
        start(ops, len(jpeg_paths))
        context = ops.session.loader.multiprocessing_context
        assert context is not None and context.get_start_method() == pipeline.LOADER_START_METHOD == "fork"
        window = ops.handle("pipeline_run", {"min_batches": 2, "min_time": 0.0, "rewarm_batches": 0})
        assert len(window["ns"]) == 2
        ops.handle("pipeline_stop", {})
    finally:
        multiprocessing.set_start_method(before, force=True)


@pytest.mark.parametrize("library", LIBRARIES)
def test_two_loader_workers_draw_different_augmentations(library, jpeg_paths) -> None:
    first, second = second_draws(library, jpeg_paths)
    assert not torch.equal(first, second), "both loader workers produced the same augmentation"


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_detector_sees_workers_that_share_one_rng_state(library, jpeg_paths, monkeypatch) -> None:
    # The classic bug, forced: every worker reseeded to the same state. The check above must fail.
    import random

    import numpy as np

    def same_state(adapter, reports):
        def init(worker_id: int) -> None:
            random.seed(0), np.random.seed(0), torch.manual_seed(0), adapter.reseed_recipe(0)
            reports.put({"worker": worker_id})  # as the real init does: the start waits for it

        return init

    monkeypatch.setattr(pipeline, "worker_init", same_state)
    first, second = second_draws(library, jpeg_paths)
    assert torch.equal(first, second)


def second_draws(library: str, jpeg_paths: list[str]):
    """Worker 0's and worker 1's second augmentation of one image. Batch i comes from worker
    i % 2 and the loader's start takes batch 0, so batches 2 and 3 are the second draws; copies
    of one RNG state would crop the same window."""
    ops = ops_for(library, [jpeg_paths[0]] * 8)
    prepare(ops)
    start(ops, 8, workers=2, batch_size=1, warm=0)
    batches = [pipeline.next_batch(ops.session) for _ in range(3)]
    pipeline.stop(ops.session)
    return batches[1], batches[2]


@pytest.mark.parametrize("library", [lib for lib in LIBRARIES if lib in ("torchvision", "kornia")])
def test_the_gpu_split_runs_on_the_cpu(library, jpeg_paths) -> None:
    ops = ops_for(library, jpeg_paths)
    assert prepare(ops, "Rotate", {"angle_range": [-45, 45], "interpolation": "nearest", "mode": "constant", "fill": 0}, split=True)["split"]
    assert ops.recipe is not None and ops.recipe.batch is not None, "the main-process stage exists"
    started = start(ops, len(jpeg_paths))
    assert started["batch"]["shape"] == [2, 3, 224, 224]
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", [lib for lib in LIBRARIES if lib in ("albumentationsx", "pillow")])
def test_cpu_libraries_have_no_gpu_split(library, jpeg_paths) -> None:
    with pytest.raises(WorkerError, match="no GPU split"):
        prepare(ops_for(library, jpeg_paths), split=True)


def test_the_memory_scope_preloads_and_workers_zero_loads_in_the_main_process(jpeg_paths) -> None:
    library = LIBRARIES[0]
    ops = ops_for(library, jpeg_paths, preload=True)
    assert ops.adapter.preloaded and not isinstance(ops.adapter.items[0], str)
    prepare(ops)
    started = start(ops, len(jpeg_paths), workers=0)
    assert started["worker_threads"][0]["worker"] == "main process"
    assert started["loader"]["workers"] == 0
    ops.handle("pipeline_stop", {})


def test_a_corrupt_jpeg_names_the_file(tmp_path, jpeg_paths) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg at all")
    ops = ops_for(LIBRARIES[0], [*jpeg_paths, str(broken)])
    prepare(ops)  # the preflight reads the first item only
    with pytest.raises(WorkerError) as caught:
        start(ops, len(jpeg_paths) + 1, batch_size=4)
    assert caught.value.kind == EXCEPTION
    assert "broken.jpg" in caught.value.message, caught.value.message
    assert ops.session is None


def test_a_killed_loader_worker_fails_the_window_clearly(jpeg_paths, worker_factory) -> None:
    # A real worker process: torch reports a dead loader worker from its SIGCHLD handler, at any
    # moment; the protocol loop turns it into an error response and the worker serves on.
    library = "kornia" if "kornia" in LIBRARIES else LIBRARIES[0]  # kornia imports in half torchvision's time
    client = worker_factory("--library", library, env={"AUGBENCH_THREAD_POLICY": "pipeline-default"})
    assert client.request("load", media="image", paths=jpeg_paths, channels=3, pipeline=True, preload=False)["ok"]
    recipe = {"transform": "HorizontalFlip", "params": {}, "crop": CROP, "mean": MEAN, "std": STD, "split": False}
    assert client.request("pipeline_prepare", **recipe, seed=0, preflight_items=1)["ok"]
    loader = {"workers": 2, "batch_size": 2, "prefetch": 2, "warm_batches": 2, "seed": 0, "size": [224, 224]}
    assert client.request("pipeline_start", **loader, order=list(range(len(jpeg_paths))))["ok"]
    children = loader_workers(client.proc.pid)
    assert len(children) == 2, children
    os.kill(children[0], signal.SIGKILL)
    time.sleep(0.2)  # torch's SIGCHLD handler may report the death before the next request
    failed = client.request("pipeline_run", min_batches=200, min_time=0.0)
    assert not failed["ok"] and "killed by signal" in failed["error"], failed
    assert client.request("pipeline_prepare", **recipe, seed=0, preflight_items=1)["ok"], "the worker serves on"
    assert client.request("pipeline_start", **loader, order=list(range(len(jpeg_paths))))["ok"]


def loader_workers(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found.extend(int(p) for p in handle.read().split())
    return found


@pytest.mark.parametrize(
    ("batch", "fragment"),
    [
        (torch.zeros(2, 224, 224, 3, dtype=torch.uint8), "a tensor [2, 224, 224, 3] uint8"),
        ([torch.zeros(3, 224, 224)] * 2, "a list of 2 × a tensor [3, 224, 224] float32"),
        ({"image": torch.zeros(2, 3, 224, 224)}, "a dict with keys ['image']"),
        (torch.rand(2, 3, 224, 224), "not normalized"),
        (torch.zeros(2, 3, 200, 224) - 0.5, "a tensor [2, 3, 200, 224] float32"),
    ],
)
def test_the_contract_names_what_came_out(batch, fragment) -> None:
    with pytest.raises(WorkerError) as caught:
        pipeline.check_batch(batch, 2, [224, 224])
    assert caught.value.kind == CONTRACT
    assert fragment in caught.value.message, caught.value.message


def test_a_normalized_batch_passes_and_size_none_accepts_any_size() -> None:
    batch = (torch.rand(2, 3, 244, 244) - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    assert pipeline.check_batch(batch, 2, None)["shape"] == [2, 3, 244, 244]


def test_a_recipe_whose_batch_is_not_one_tensor_fails_before_timing(monkeypatch, jpeg_paths) -> None:
    ops = ops_for(LIBRARIES[0], jpeg_paths)
    prepare(ops)
    monkeypatch.setattr(ops.recipe, "sample", lambda item: {"image": torch.zeros(3, 224, 224)})
    with pytest.raises(WorkerError) as caught:
        start(ops, len(jpeg_paths), workers=0)
    assert caught.value.kind == CONTRACT and "a dict with keys ['image']" in caught.value.message


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("transform", ["CenterCrop224", "RandomResizedCrop"])
def test_a_crop_transform_row_is_the_crop_stage(library, transform, jpeg_paths) -> None:
    from conftest import load_registry

    params = load_registry()[transform]["params"]
    split = library in ("torchvision", "kornia")
    ops = ops_for(library, jpeg_paths)
    request = {"transform": transform, "params": params, "crop": None, "mean": MEAN, "std": STD}
    try:
        prepared = ops.prepare({**request, "split": split, "seed": 0, "preflight_items": 1})
    except WorkerError as err:
        # Libraries without that crop of their own refuse the row (their adapters say why).
        refused = {("pillow", "RandomResizedCrop"), ("opencv", "RandomResizedCrop"), ("opencv", "CenterCrop224")}
        assert (library, transform) in refused and err.kind == "unsupported", err.message
        return
    assert prepared["transform_device"] == "cpu", "a crop row runs in the loader workers"
    assert start(ops, len(jpeg_paths))["batch"]["shape"] == [2, 3, 224, 224]
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_ceiling_row_is_the_recipe_without_a_transform(library, jpeg_paths) -> None:
    ops = ops_for(library, jpeg_paths)
    request = {"transform": "DecodeOnly", "ceiling": True, "params": {}, "crop": CROP, "mean": MEAN, "std": STD}
    assert ops.prepare({**request, "split": False, "seed": 0, "preflight_items": 1})["decoder"]
    assert start(ops, len(jpeg_paths))["batch"]["shape"] == [2, 3, 224, 224]
    ops.handle("pipeline_stop", {})


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_ceiling_slot_keeps_its_loader_up_while_the_rows_change(library, jpeg_paths) -> None:
    # The coordinator times the decode ceiling beside every row: one worker, two loaders (slots),
    # the ceiling's kept up while the row's slot prepares and starts the next transform.
    from augbench_worker import worker
    from augbench_worker.protocol import BadRequest

    w = worker.Worker(library, None, "pipeline-default", {})
    w.handle({"op": "load", "media": "image", "paths": jpeg_paths, "channels": 3, "pipeline": True, "preload": False})
    recipe = {"crop": CROP, "mean": MEAN, "std": STD, "split": False, "seed": 0, "preflight_items": 1}
    items = list(range(len(jpeg_paths)))
    loader = {"workers": 1, "batch_size": 2, "prefetch": 2, "warm_batches": 1, "order": items, "seed": 0, "size": [224, 224]}
    window = {"op": "pipeline_run", "min_batches": 2, "min_time": 0.0, "rewarm_batches": 1}
    w.handle({"op": "pipeline_prepare", "slot": "ceiling", "transform": "DecodeOnly", "params": {}, "ceiling": True, **recipe})
    w.handle({"op": "pipeline_start", "slot": "ceiling", **loader})
    ceiling = w.pipeline_ops["ceiling"].session
    for transform in ("HorizontalFlip", "VerticalFlip"):
        w.handle({"op": "pipeline_prepare", "transform": transform, "params": {}, **recipe})
        w.handle({"op": "pipeline_start", **loader})
        for slot in ("row", "ceiling", "row"):
            assert len(w.handle({**window, "slot": slot})["ns"]) == 2
        assert w.pipeline_ops["ceiling"].session is ceiling, "the row's slot ended the ceiling's loader"
        assert w.pipeline_ops["row"].recipe.name == transform
    with pytest.raises(BadRequest, match="unknown loader slot 'other'"):
        w.handle({**window, "slot": "other"})
    for slot in ("row", "ceiling"):
        w.handle({"op": "pipeline_stop", "slot": slot})
    assert w.pipeline_ops["ceiling"].session is None
