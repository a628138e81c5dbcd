"""Pipeline mode: one transform inside a real PyTorch ``DataLoader`` (docs/pipeline.md).

Owns the DataLoader side of the protocol: the recipe dataset (decode or preloaded item → the
adapter's native recipe; with targets, each item with its targets and a collate that keeps
per-image target lists), the endless seeded sampler shared by every library, per-worker seeding
and thread reports, and the optional main-process stage (GPU split); the requests, the output
contract and the steady-state window are ``pipeline_common``'s. Imported only by pipeline ops.
"""

from __future__ import annotations

import multiprocessing
import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from . import guard, threads
from . import pipeline_common as common
from .protocol import CONTRACT, EXCEPTION, BadRequest, Unsupported, WorkerError

# Loader workers start by fork, said explicitly (Python 3.14 makes forkserver the Linux default):
# recipes are closures (lambdas) over the adapter's objects, which fork inherits and the spawn or
# forkserver start methods would have to pickle, and cannot. docs/pipeline.md.
LOADER_START_METHOD = "fork"
THREAD_REPORT_WAIT_SEC = 5.0


class TargetSizeError(ValueError):
    """A file the loader decoded is not the size its targets entry says."""


class RecipeDataset(Dataset):
    """Item ``i``: read (decode a file or take a preloaded item), then the library's recipe."""

    def __init__(self, items: list[Any], read: Callable[[Any], Any] | None, recipe: Callable[[Any], Any]) -> None:
        self.items, self.read, self.recipe = items, read, recipe

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> Any:
        item = self.items[index]
        if self.read is not None:
            try:
                item = self.read(item)
            except TargetSizeError as exc:
                raise RuntimeError(f"{item[0]}: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - named with the file, raised in the loader
                path = item[0] if isinstance(item, tuple) else item  # (path, targets, size) with targets
                raise RuntimeError(f"could not decode {path}: {type(exc).__name__}: {exc}") from None
        return self.recipe(item)


class CyclingSampler(Sampler[int]):
    """The coordinator's seeded order, repeated without end: one loader iterator serves every
    run of a transform, so no epoch boundary drains the workers inside a timed window."""

    def __init__(self, order: list[int]) -> None:
        self.order = order

    def __iter__(self) -> Iterator[int]:
        while True:
            yield from self.order

    def __len__(self) -> int:
        return len(self.order)


@dataclass
class Recipe:
    name: str
    sample: Callable[[Any], Any]  # runs in the loader workers
    batch: Callable[[Any], Any] | None  # runs in the main process (GPU split), or None
    decoder: str
    split: bool
    targets: tuple[str, ...] = ()  # the target kinds each sample carries (empty: image only)


# The keys of a sample's targets, per kind (every adapter's target recipe returns these).
TARGET_KEYS = {"mask": ("mask",), "boxes": ("boxes", "labels"), "keypoints": ("keypoints",)}


def collate_targets(samples: list[tuple[Any, dict[str, Any]]]) -> tuple[torch.Tensor, list[dict[str, Any]]]:
    """A detection or segmentation batch as training code takes it: the images stacked into one
    tensor, the targets one dict per image (box and keypoint counts differ between images)."""
    return torch.stack([image for image, _ in samples]), [targets for _, targets in samples]


def _target_shapes(target: dict[str, Any], image_hw: list[int] | None) -> str | None:
    """What is wrong with one image's target shapes (None: nothing): the mask H×W as the image's,
    boxes N×4 with N labels, keypoints K×2."""
    boxes, labels, points, mask = (target.get(k) for k in ("boxes", "labels", "keypoints", "mask"))
    if mask is not None and image_hw is not None and list(mask.shape[-2:]) != image_hw:
        return f"the mask is {list(mask.shape)}, the image {image_hw}"
    if boxes is not None and (boxes.dim() != 2 or boxes.shape[1] != 4 or len(labels) != len(boxes)):
        return f"boxes {list(boxes.shape)} with {len(labels)} labels, expected N×4 and N labels"
    if points is not None and (points.dim() != 2 or points.shape[1] != 2):
        return f"keypoints {list(points.shape)}, expected K×2"
    return None


def check_targets(targets: Any, batch_size: int, kinds: tuple[str, ...], image_hw: list[int] | None = None) -> dict[str, int]:
    """The targets half of a batch: one dict of tensors per image with exactly the keys of its
    kinds and consistent shapes (``_target_shapes``; a failed contract names what came out);
    returns the boxes and keypoints it holds."""
    keys = sorted(key for kind in kinds for key in TARGET_KEYS[kind])
    if not isinstance(targets, list) or len(targets) != batch_size:
        raise WorkerError(CONTRACT, f"the batch's targets are {describe(targets)}, expected a list of {batch_size} dicts")
    for index, target in enumerate(targets):
        if not isinstance(target, dict) or sorted(target) != keys:
            raise WorkerError(CONTRACT, f"the targets of image {index} are {describe(target)}, expected a dict with keys {keys}")
        for key in keys:
            if not isinstance(target[key], torch.Tensor):
                raise WorkerError(CONTRACT, f"the targets of image {index}: {key} is {describe(target[key])}, not a tensor")
        problem = _target_shapes(target, image_hw)
        if problem:
            raise WorkerError(CONTRACT, f"the targets of image {index}: {problem}")
    counted = {"boxes": "boxes", "keypoints": "keypoints"}
    return {name: sum(len(t[key]) for t in targets) for name, key in counted.items() if key in keys}


@dataclass
class Session:
    recipe: Recipe
    loader: DataLoader
    iterator: Any
    batch_size: int
    device: str
    reports: Any
    workers: int
    thread_reports: list[dict[str, Any]] = field(default_factory=list)


def check_batch(
    batch: Any, batch_size: int, size: list[int] | None, frames: int | None = None, targets: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The output contract (``common.check_output``) on the batch a DataLoader delivered; with
    targets, on its images, and its targets per image (``check_targets``)."""
    if targets:
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            what = describe(batch)
            raise WorkerError(CONTRACT, f"the batch is {what}, expected (images, one targets dict per image)")
        contract = check_batch(batch[0], batch_size, size, frames)
        image_hw = contract["shape"][-2:]
        return {**contract, "targets": {"kinds": list(targets), **check_targets(batch[1], batch_size, targets, image_hw)}}
    settings = common.Start(0, batch_size, 1, 0, [0], 0, size, frames)
    if not isinstance(batch, torch.Tensor):
        return common.check_output(describe(batch), None, "", lambda: ([], 0.0), settings)
    axis = 1 if frames is None else 2  # the channel axis

    def stats() -> tuple[list[float], float]:
        flat = batch.detach().to("cpu").movedim(axis, 0).reshape(common.CHANNELS, -1)
        return flat.mean(dim=1).tolist(), float(flat.min())

    dtype = str(batch.dtype).removeprefix("torch.")
    return common.check_output(describe(batch), list(batch.shape), dtype, stats, settings)


def describe(value: Any) -> str:
    kind = f"{type(value).__module__}.{type(value).__name__}".removeprefix("builtins.")
    if isinstance(value, (list, tuple)):
        inner = describe(value[0]) if value else "nothing"
        return f"a {kind} of {len(value)} × {inner}"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))}"
    if isinstance(value, np.ndarray):
        return f"a numpy array {list(value.shape)} {value.dtype.name}"
    if isinstance(value, torch.Tensor):
        return f"a tensor {list(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    return f"a {kind}"


def worker_init(adapter: Any, reports: Any) -> Callable[[int], None]:
    """Seeds every RNG a recipe may draw from with the worker's own torch seed (torch gives each
    worker ``base_seed + id``; NumPy and the library's RNG would otherwise be copies of the
    parent's, the classic identical-augmentations bug), then reports the worker's threads."""

    def init(worker_id: int) -> None:
        seed = torch.initial_seed() % 2**32
        random.seed(seed)
        np.random.seed(seed)
        adapter.reseed_recipe(seed)
        report = {"worker": worker_id, "torch.num_threads": str(torch.get_num_threads())}
        report.update(adapter.recipe_threads())
        reports.put(report)

    return init


def start(adapter: Any, recipe: Recipe, request: dict, items: list[Any], read: Any) -> tuple[Session, dict]:
    settings = common.start_request(request, len(items))
    workers, batch_size, prefetch, warm = settings.workers, settings.batch_size, settings.prefetch, settings.warm
    order, seed, size, frames = settings.order, settings.seed, settings.size, settings.frames
    device = adapter.device
    context = multiprocessing.get_context(LOADER_START_METHOD)
    reports = context.SimpleQueue()
    generator = torch.Generator().manual_seed(seed)
    threads.guard_opencv_fork()  # the loader forks its workers from this process
    loader = DataLoader(
        RecipeDataset(items, read, recipe.sample),
        batch_size=batch_size,
        sampler=CyclingSampler(order),
        num_workers=workers,
        prefetch_factor=prefetch if workers > 0 else None,
        persistent_workers=workers > 0,
        pin_memory=device == "cuda",
        drop_last=True,
        generator=generator,
        worker_init_fn=worker_init(adapter, reports) if workers > 0 else None,
        multiprocessing_context=context if workers > 0 else None,
        **({"collate_fn": collate_targets} if recipe.targets else {}),
    )
    started = time.perf_counter()
    iterator = iter(loader)
    session = Session(recipe, loader, iterator, batch_size, device, reports, workers)
    try:
        first = next_batch(session)
        ttfb = time.perf_counter() - started
        contract = check_batch(first, batch_size, size, frames, recipe.targets)
        for _ in range(warm):
            next_batch(session)
    except BaseException:
        stop(session)  # no loader workers outlive a failed start
        raise
    session.thread_reports = collect_reports(session)
    return session, {
        "time_to_first_batch": ttfb,
        "warm_batches": warm,
        "batch": contract,
        "worker_threads": session.thread_reports or [main_threads(adapter)],
        "loader": {"workers": workers, "prefetch_factor": prefetch if workers > 0 else 0, "pin_memory": device == "cuda",
                   "persistent_workers": workers > 0, "drop_last": True},
    }


def main_threads(adapter: Any) -> dict[str, Any]:
    report = {"worker": "main process", "torch.num_threads": str(torch.get_num_threads())}
    report.update(adapter.recipe_threads())
    return report


def collect_reports(session: Session) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + THREAD_REPORT_WAIT_SEC
    while len(found) < session.workers and time.monotonic() < deadline:
        if session.reports.empty():
            time.sleep(0.01)
            continue
        found.append(session.reports.get())
    return sorted(found, key=lambda r: r["worker"])


def next_batch(session: Session) -> Any:
    """One batch as the training step receives it: from the loader, then the main-process stage
    (GPU split), synchronized so its work is done."""
    try:
        batch = next(session.iterator)
        if session.recipe.batch is not None:
            batch = session.recipe.batch(batch)
        if session.device == "cuda":
            torch.cuda.synchronize()
    except WorkerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a worker's exception or death, reported with its story
        what = _dead_workers(session) or f"{type(exc).__name__}: {_first_line(exc)}"
        raise WorkerError(EXCEPTION, f"{session.recipe.name}: {what}", traceback.format_exc()) from None
    return batch


def _dead_workers(session: Session) -> str:
    """Which loader workers died and how (a dead worker surfaces as a reset pipe, a timeout or
    torch's own message, depending on when the main process notices)."""
    dead = []
    for process in getattr(session.iterator, "_workers", []):
        code = process.exitcode
        if code is None:
            continue
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        hint = " (out of memory?)" if code == -9 else " (segmentation fault)" if code == -11 else ""
        dead.append(f"pid {process.pid}, {how}{hint}")
    return f"a loader worker died: {'; '.join(dead)}" if dead else ""


def run(session: Session, request: dict) -> dict:
    """A steady-state window (``common.arrivals``); on CUDA with the torch allocator's peaks."""
    window = common.window_request(request)
    cuda = session.device == "cuda"
    for _ in range(window.rewarm):  # a loader that sat idle: drain its refilled queue, untimed
        next_batch(session)
    window.rewarm = 0
    before = torch.cuda.memory_allocated() if cuda else 0
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    ns = common.arrivals(lambda: next_batch(session), window)
    response: dict[str, Any] = {"ns": ns, "items": len(ns) * session.batch_size, "gpu_memory": None}
    if cuda:
        response["gpu_memory"] = {
            "allocated_before_bytes": before,
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        }
    return response


def stop(session: Session | None) -> None:
    if session is None:
        return
    shutdown = getattr(session.iterator, "_shutdown_workers", None)
    if shutdown is not None:
        shutdown()
    session.iterator = None


def _pair_reader(adapter: Any) -> Callable[[tuple[str, dict, list[int]]], tuple[Any, dict]]:
    """Decodes the file of a (path, targets, size) item into (image, targets); an image of
    another size than its targets entry says is refused (its targets would be on another canvas)."""

    def read(item: tuple[str, dict, list[int]]) -> tuple[Any, dict]:
        path, entry, expected = item
        image = adapter.pipeline_read(path)
        hw = adapter.image_hw(image)
        if hw != expected:
            raise TargetSizeError(
                f"its targets are for a {expected[1]}x{expected[0]} image (width x height) but it decodes to {hw[1]}x{hw[0]}"
            )
        return image, entry

    return read


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # A worker's exception arrives wrapped ("Caught X in DataLoader worker process 0. Original
    # Traceback ..."): keep the wrapper's first line and the original error's last line.
    if len(lines) > 1 and "Original Traceback" in text:
        return f"{lines[0]} {lines[-1]}"
    return lines[0] if lines else type(exc).__name__


def pil_normalized(image: Any, mean: list[float], std: list[float]) -> torch.Tensor:
    """Pillow's recipe tail: the image's bytes as a uint8 CHW tensor (what torchvision's
    ``PILToTensor`` does), scaled to [0, 1] and normalized."""
    chw = torch.from_numpy(np.array(image, dtype=np.uint8, copy=True)).permute(2, 0, 1)
    scaled = chw.to(torch.float32).div_(255.0)
    m = torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1)
    s = torch.tensor(std, dtype=torch.float32).view(-1, 1, 1)
    return scaled.sub_(m).div_(s).contiguous()


def preflight(recipe: Recipe, items: list[Any], read: Any, count: int, device: str) -> float:
    """Seconds per item of read + recipe (+ the main-process stage) in this process, over the first
    ``count`` items: the slow-transform gate, before any loader is built. A main-process stage
    runs once untimed first (CUDA's first launch is start-up, not speed) and is synchronized."""
    dataset = RecipeDataset(items, read, recipe.sample)  # names a file that does not decode
    chosen = range(min(max(1, count), len(items)))
    if recipe.batch is not None:
        recipe.batch(torch.utils.data.default_collate([dataset[0]]))
        _sync(device)
    started = time.perf_counter()
    outputs = [dataset[index] for index in chosen]
    if recipe.batch is not None:
        recipe.batch(torch.utils.data.default_collate(outputs))
    _sync(device)
    return (time.perf_counter() - started) / len(chosen)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


class PipelineOps:
    """The pipeline ops of one worker process: ``pipeline_prepare`` (recipe + preflight),
    ``pipeline_start`` (loader, first batch, contract, warm), ``pipeline_run`` (one window) and
    ``pipeline_stop``. One loader lives at a time; preparing the next transform ends it."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.recipe: Recipe | None = None
        self.session: Session | None = None

    def handle(self, op: str, request: dict) -> dict:
        if op == "pipeline_prepare":
            return self.prepare(request)
        if op == "pipeline_stop":
            stop(self.session)
            self.session = None
            return {"stopped": True}
        if op == "pipeline_start":
            return self.start(request)
        return run(self._require_session(), request)

    def prepare(self, request: dict) -> dict:
        stop(self.session)
        self.session, self.recipe = None, None
        adapter = self.adapter
        if not adapter.items:
            raise BadRequest("pipeline_prepare before load: no media are loaded")
        req = common.prepare_request(request)
        name, split = req.name, req.split
        adapter.seed(req.seed)
        kinds = adapter.target_kinds
        with guard.building(name) as noted:
            if kinds:
                sample, batch = self._target_recipe(req), None
            else:
                sample, batch = adapter.build_recipe(req.crop, req.transform, req.params, req.mean, req.std, split)
        self.recipe = Recipe(name, sample, batch, adapter.decoder, split, kinds)
        items, read = self._source()
        try:
            seconds = preflight(self.recipe, items, read, req.preflight_items, adapter.device)
        except WorkerError:
            raise
        except Exception as exc:  # noqa: BLE001 - the recipe raised before any loader existed
            refusal = adapter.target_refusal(exc) if kinds else None
            if refusal:  # the library's own "cannot move this target", as at a micro row's check
                raise adapter.cannot_move(name, kinds, refusal) from None
            raise WorkerError(EXCEPTION, f"{name}: {type(exc).__name__}: {exc}", traceback.format_exc()) from None
        # Where T ran: on the device only in the split's main-process stage; a crop transform (the
        # row is the crop) runs in the loader workers, on the CPU.
        where = adapter.device if split and req.crop else "cpu"
        return {
            "transform": name,
            "decoder": adapter.decoder,
            "split": split,
            "transform_device": where,
            "preflight_sec_per_item": seconds,
            **({"warnings": noted} if noted else {}),
        }

    def start(self, request: dict) -> dict:
        if self.recipe is None:
            raise BadRequest("pipeline_start before a successful pipeline_prepare")
        stop(self.session)
        items, read = self._source()
        self.session = None
        session, response = start(self.adapter, self.recipe, request, items, read)
        self.session = session
        return response

    def _target_recipe(self, req: Any) -> Callable[[Any], Any]:
        """The recipe with targets, on (image, entry) items; refuses what cannot move them."""
        adapter, kinds = self.adapter, self.adapter.target_kinds
        if req.split:
            raise Unsupported("targets run in the loader workers: no GPU split")
        for stage in (req.crop["name"] if req.crop else None, req.transform):
            if stage is not None:
                adapter.refuse_targets(stage)
        recipe = adapter.build_target_recipe(req.crop, req.transform, req.params, req.mean, req.std, kinds)
        # A fresh copy of the item's arrays each time, as a dataset reads its annotations: a
        # library that moves a target in place (Kornia pads keypoints so) must not move the stored one.
        return lambda pair: recipe(pair[0], {key: array.copy() for key, array in pair[1].items()})

    def _source(self) -> tuple[list[Any], Any]:
        adapter = self.adapter
        read = None if adapter.preloaded else adapter.pipeline_read
        if not adapter.target_kinds:
            return adapter.items, read
        if read is None:
            return list(zip(adapter.items, adapter.entries)), None
        return list(zip(adapter.items, adapter.entries, adapter.entry_sizes)), _pair_reader(adapter)

    def _require_session(self) -> Session:
        if self.session is None:
            raise BadRequest("pipeline_run before a successful pipeline_start")
        return self.session

