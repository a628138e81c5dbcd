"""Production cells (docs/pipeline.md, "Production cells"): one catalog recipe, whole, from a file
on disk to a normalized B×3×H×W batch in the run's dtype, for one seed. Owns the ``production_cell``
request, the split (the loader workers run the first ``stages_in_workers`` stages, the rest run
on the collated batch on the load's device), the shared tail (per-sample CHW tensor in the
workers; scale, normalize and cast on the batch) and the measured pass. The coordinator samples
the memory of this process and its loader workers around the request; on CUDA the torch
allocator's peaks are read here. Imported only when a production cell is asked for (torch).
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader

from . import pipeline, threads
from .pipeline_common import MEAN_BAND, rounded
from .protocol import CONTRACT, EXCEPTION, BadRequest, Unsupported, WorkerError
from .protocol import int_field as _int_field

DTYPES = {"float16": torch.float16, "float32": torch.float32}


@dataclass
class CellRequest:
    recipe: str
    stages: list[dict]
    stages_in_workers: int
    dtype: str
    mean: list[float]
    std: list[float]
    size: list[int]
    order: list[int]
    seed: int
    batch_size: int
    workers: int
    prefetch: int
    warmup_batches: int
    measured_batches: int


def cell_request(request: dict, count: int) -> CellRequest:
    """A ``production_cell`` request, checked against the number of loaded items."""
    recipe, stages = request.get("recipe"), request.get("stages")
    if not isinstance(recipe, str) or not recipe:
        raise BadRequest('"recipe" must be a non-empty string')
    if not isinstance(stages, list) or not stages or not all(_stage_ok(s) for s in stages):
        raise BadRequest('"stages" must be a non-empty list of {"op": str, "params": object, "crop": bool}')
    dtype = request.get("dtype")
    if dtype not in DTYPES:
        raise BadRequest(f'"dtype" must be one of {sorted(DTYPES)}, got {dtype!r}')
    in_workers = _int_field(request, "stages_in_workers", 1)
    if in_workers > len(stages):
        raise BadRequest(f'"stages_in_workers" must be at most the {len(stages)} stages, got {in_workers}')
    order = request.get("order")
    if not isinstance(order, list) or not order or not all(isinstance(i, int) and 0 <= i < count for i in order):
        raise BadRequest(f'"order" must be a non-empty list of item indices below {count}')
    return CellRequest(
        recipe=recipe,
        stages=stages,
        stages_in_workers=in_workers,
        dtype=dtype,
        mean=_three(request, "mean"),
        std=_three(request, "std"),
        size=_size(request),
        order=order,
        seed=_int_field(request, "seed", 0),
        batch_size=_int_field(request, "batch_size", 1),
        workers=_int_field(request, "workers", 0),
        prefetch=_int_field(request, "prefetch", 1),
        warmup_batches=_int_field(request, "warmup_batches", 0),
        measured_batches=_int_field(request, "measured_batches", 1),
    )


def _stage_ok(stage: Any) -> bool:
    return isinstance(stage, dict) and isinstance(stage.get("op"), str) and isinstance(stage.get("params"), dict)


def _three(request: dict, key: str) -> list[float]:
    value = request.get(key)
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, (int, float)) for v in value)):
        raise BadRequest(f'"{key}" must be a list of 3 numbers')
    return [float(v) for v in value]


def _size(request: dict) -> list[int]:
    size = request.get("size")
    if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
        raise BadRequest('"size" must be [height, width]')
    return size


def chw_tensor(sample: Any) -> torch.Tensor:
    """A recipe's per-sample output (numpy HWC, a PIL image or a CHW tensor; uint8, or float32 in
    [0, 1] where the library works in float) as one contiguous CHW tensor: the per-sample ToTensor
    every implementation shares."""
    if isinstance(sample, torch.Tensor):
        tensor = sample
    else:
        # One writable copy of a PIL image (``np.asarray`` would give a read-only one to copy again).
        array = sample if isinstance(sample, np.ndarray) else np.array(sample)
        if array.ndim != 3:
            raise WorkerError(CONTRACT, f"the recipe made {pipeline.describe(sample)}, expected an H×W×3 image")
        array = array if array.flags.writeable else array.copy()
        tensor = torch.from_numpy(np.ascontiguousarray(array)).permute(2, 0, 1)
    if tensor.dtype not in (torch.uint8, torch.float32):
        raise WorkerError(CONTRACT, f"the recipe made {pipeline.describe(sample)}, expected uint8 or float32 pixels")
    return tensor.contiguous()


def batch_tail(mean: list[float], std: list[float], dtype: torch.dtype,
               device: str = "cpu") -> Callable[[torch.Tensor], torch.Tensor]:
    """Normalize on the collated batch (main process, on ``device``): uint8 scaled to [0, 1]
    (float32 is already there), the mean subtracted, divided by the std, cast to the output dtype."""
    m = torch.tensor(mean, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    s = torch.tensor(std, dtype=torch.float32, device=device).view(1, -1, 1, 1)

    def tail(batch: torch.Tensor) -> torch.Tensor:
        scaled = batch.to(torch.float32).div_(255.0) if batch.dtype == torch.uint8 else batch.to(torch.float32)
        return scaled.sub_(m).div_(s).to(dtype)

    return tail


def check_form(batch: Any, req: CellRequest, device: str = "cpu", which: str = "the batch") -> None:
    """The output contract's form: B×3×H×W in the asked dtype, on ``device``. Attribute reads only
    (microseconds against a batch's milliseconds), so every measured batch gets it inside the window."""
    expected = [req.batch_size, 3, *req.size]
    if not isinstance(batch, torch.Tensor) or list(batch.shape) != expected or batch.dtype != DTYPES[req.dtype]:
        raise WorkerError(CONTRACT, f"{which} is {pipeline.describe(batch)}, expected {req.dtype} {expected}")
    if batch.device.type != device:
        raise WorkerError(CONTRACT, f"{which} is on {batch.device}, expected {device}")


def check_batch(batch: Any, req: CellRequest, device: str = "cpu", which: str = "the batch") -> dict[str, Any]:
    """The whole output contract: the form (``check_form``) and the values normalized. The values
    take a pass over the batch, so they are checked outside the window (first and last batch)."""
    check_form(batch, req, device, which)
    # Reduced in float32 without a float32 copy of the batch (on the GPU it would count in the
    # cell's memory).
    means, low = torch.mean(batch, dim=(0, 2, 3), dtype=torch.float32).tolist(), float(batch.amin())
    if any(abs(v) > MEAN_BAND for v in means) or low >= 0:
        raise WorkerError(CONTRACT, f"{which} is not normalized: channel means {rounded(means)}")
    return {"shape": list(batch.shape), "dtype": req.dtype, "device": str(batch.device), "channel_mean": rounded(means)}


def checked(req: CellRequest, check: Callable[[], Any]) -> Any:
    """``check``'s result; a failure that is not the contract's own is reported with the recipe."""
    try:
        return check()
    except WorkerError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported with the recipe
        raise WorkerError(EXCEPTION, f"{req.recipe}: checking the batch: {exc}") from None


def measure(adapter: Any, request: dict) -> dict:
    """One cell: build the recipe (the workers' stages for the CPU, the rest for the batch on the
    load's device) and its loader, take the warm-up batches untimed and time the measured ones,
    each from the previous batch's arrival."""
    items = adapter.items
    if not items:
        raise BadRequest("production_cell before load: no media are loaded")
    req = cell_request(request, len(items))
    read, decoder = _reader(adapter, request.get("decoder"))
    device, split = adapter.device, req.stages_in_workers
    adapter.seed(req.seed)
    if device == "cuda":  # the peaks cover the cell from before its loader is built
        torch.cuda.reset_peak_memory_stats()
    head = _built_on_cpu(adapter, req.stages[:split])
    rest = adapter.build_batch_chain(req.stages[split:], split) if split < len(req.stages) else None
    tail = batch_tail(req.mean, req.std, DTYPES[req.dtype], device)
    try:
        timing = _measured_pass(adapter, req, items, read, lambda x: chw_tensor(head(x)),
                                batch_stage(device, rest, tail))
    finally:
        release(device)
    return {**timing, "stages_in_workers": split, "decoder": decoder, "device": device}


def _reader(adapter: Any, name: Any) -> tuple[Any, str]:
    """The cell's file reader and its decoder's record: the library's own, or the one the
    request names (``decoders``, imported only then)."""
    if name is None:
        return (None if adapter.preloaded else adapter.pipeline_read), adapter.decoder
    if not isinstance(name, str):
        raise BadRequest(f'"decoder" must be a decoder\'s name, got {name!r}')
    from . import decoders

    return decoders.reader(adapter, name)


def builds(adapter: Any, request: dict) -> dict:
    """``production_builds``: which of the request's recipes this library builds, each built as
    its cell would build it (the loader workers' stages, then the batch's), nothing loaded or
    timed: the coverage the coordinator's plan and ``list recipes`` show, asked of what runs.
    Answers each recipe with ``refused``: ``None``, or the reason its cell would answer
    ``unsupported`` with."""
    recipes, device = request.get("recipes"), request.get("device", "cpu")
    if not isinstance(recipes, list) or not all(isinstance(r, dict) for r in recipes):
        raise BadRequest('"recipes" must be a list of {"recipe": str, "stages": [...], "stages_in_workers": int}')
    if device not in ("cpu", "cuda"):
        raise BadRequest(f'"device" must be "cpu" or "cuda", got {device!r}')
    return {"recipes": [{"recipe": r.get("recipe"), "refused": _refusal(adapter, r, device)} for r in recipes]}


def _refusal(adapter: Any, recipe: dict, device: str) -> str | None:
    """Why the recipe's cell would not measure: ``unsupported``'s reason, or the error building
    it raises (its cell would end in that error); ``None`` where every stage builds."""
    stages = recipe.get("stages")
    if not isinstance(stages, list) or not stages or not all(_stage_ok(s) for s in stages):
        raise BadRequest('each recipe\'s "stages" must be a non-empty list of {"op": str, "params": object, "crop": bool}')
    split = _int_field(recipe, "stages_in_workers", 1)
    loaded_on, adapter.device = adapter.device, device
    try:
        _built_on_cpu(adapter, stages[:split])
        if split < len(stages):
            adapter.build_batch_chain(stages[split:], split)
    except Unsupported as exc:
        return exc.message
    except Exception as exc:  # noqa: BLE001 - the cell would fail with it: reported per recipe
        return f"building it fails: {type(exc).__name__}: {exc}"
    finally:
        adapter.device = loaded_on
    return None


def _built_on_cpu(adapter: Any, stages: list[dict]) -> Callable[[Any], Any]:
    """The loader workers' stages, built for the CPU whatever the load's device: they run in the
    loader's worker processes, which never touch the GPU."""
    device, adapter.device = adapter.device, "cpu"
    try:
        return adapter.build_chain(stages)
    finally:
        adapter.device = device


def batch_stage(device: str, rest: Callable[[Any], Any] | None,
                tail: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """What the main process does with each collated batch: onto ``device`` (from pinned memory,
    without blocking, on CUDA), the stages after the workers' (``rest``), then the tail."""

    def stage(batch: torch.Tensor) -> torch.Tensor:
        batch = batch.to(device, non_blocking=True)
        return tail(rest(batch) if rest is not None else batch)

    return stage


def _gpu_peaks() -> dict[str, int]:
    return {"peak_allocated_bytes": int(torch.cuda.max_memory_allocated()),
            "peak_reserved_bytes": int(torch.cuda.max_memory_reserved())}


def release(device: str = "cpu") -> None:
    """Hands the finished (or failed) cell's memory back (the loader's objects, then glibc's free
    lists, and on CUDA the allocator's cached device blocks and its cached pinned host buffers), so
    the next cell's peaks start from the worker's own baseline, not from this cell's leftovers."""
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
        host = getattr(torch._C, "_host_emptyCache", None)  # pinned host memory (torch >= 2.1)
        if host is not None:
            host()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim


def _measured_pass(adapter: Any, req: CellRequest, items: list[Any], read: Any, sample: Callable[[Any], Any],
                   on_batch: Callable[[torch.Tensor], torch.Tensor]) -> dict:
    context = multiprocessing.get_context(pipeline.LOADER_START_METHOD)
    reports = context.SimpleQueue()
    device = adapter.device
    pinned = device == "cuda"  # the copy to the GPU reads page-locked memory
    threads.guard_opencv_fork()  # the loader forks its workers from this process
    loader = DataLoader(
        pipeline.RecipeDataset(items, read, sample),
        batch_size=req.batch_size,
        sampler=pipeline.CyclingSampler(req.order),
        num_workers=req.workers,
        prefetch_factor=req.prefetch if req.workers > 0 else None,
        persistent_workers=req.workers > 0,
        pin_memory=pinned,
        drop_last=True,
        generator=torch.Generator().manual_seed(req.seed),
        worker_init_fn=pipeline.worker_init(adapter, reports) if req.workers > 0 else None,
        multiprocessing_context=context if req.workers > 0 else None,
    )
    started = time.perf_counter()
    iterator = iter(loader)
    split = req.stages_in_workers < len(req.stages)
    session = pipeline.Session(pipeline.Recipe(req.recipe, sample, on_batch, adapter.decoder, split),
                               loader, iterator, req.batch_size, device, reports, req.workers)
    try:
        first = pipeline.next_batch(session)  # worker start and the first warm-up batch
        ttfb = time.perf_counter() - started
        checked(req, lambda: check_batch(first, req, device, "the first batch"))
        del first  # not held while the next ones are made
        for _ in range(max(0, req.warmup_batches - 1)):
            pipeline.next_batch(session)
        ns, contract, gpu = _timed(session, req)
        worker_threads = pipeline.collect_reports(session) or [pipeline.main_threads(adapter)]
    finally:
        pipeline.stop(session)
    contract["checked"] = {"form": len(ns) + 1, "values": ["first", "last"]}
    return {"ns": ns, "items": len(ns) * req.batch_size, "time_to_first_batch": ttfb, "batch": contract,
            **({"gpu_memory": gpu} if gpu else {}),
            "warmup_batches": max(1, req.warmup_batches), "worker_threads": worker_threads,
            "loader": {"workers": req.workers, "prefetch_factor": req.prefetch if req.workers > 0 else 0,
                       "persistent_workers": req.workers > 0, "pin_memory": pinned, "drop_last": True}}


def _timed(session: pipeline.Session, req: CellRequest) -> tuple[list[int], dict, dict | None]:
    """The measured batches' arrival times (ns after the clock started, right after the last
    warm-up batch arrived; on CUDA each batch's work synchronized before its time is read), the
    GPU peaks at the last arrival (on CUDA) and the contract: every batch's form after its time is
    read, the last one's values after the clock stops and the peaks are read. At most one
    delivered batch is held while the next is made (as a training loop holds its current one); no
    list of batches adds to the peaks."""
    clock, times, batch = time.perf_counter_ns, [], None
    start = clock()
    for i in range(req.measured_batches):
        batch = pipeline.next_batch(session)
        times.append(clock() - start)
        check_form(batch, req, session.device, f"measured batch {i + 1}")
    gpu = _gpu_peaks() if session.device == "cuda" else None
    contract = checked(req, lambda: check_batch(batch, req, session.device, "the last batch"))
    return times, contract, gpu
