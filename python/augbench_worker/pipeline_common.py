"""What every pipeline loader shares, whatever runs it (PyTorch's DataLoader in ``pipeline``, DALI's
own pipeline in ``dali_pipeline``): the prepare and start requests read and checked, the output
contract on the first batch, and the steady-state window of per-batch arrival times (pipeline.md).
Stdlib only: the loaders bring their own tensor type and hand this module plain shapes and numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from .protocol import CONTRACT, BadRequest, WorkerError
from .protocol import int_field as _int_field

# The recipe's output channels, identical in every library (checked on the first batch).
CHANNELS = 3
# A normalized batch has per-channel means near 0 and negative values (ImageNet statistics map
# pixel 0 to about -2); un-normalized [0, 1] data never goes below 0, 0-255 data has means ≈ 110.
# The native loader checks the same band (`MEAN_BAND`, augbench-native loader/batch.rs, whose test
# reads this line and fails when the two differ).
MEAN_BAND = 1.5


@dataclass
class Prepare:
    """A ``pipeline_prepare`` request, checked."""

    name: str
    transform: str | None  # None: the ceiling row (the recipe with T removed)
    params: dict
    crop: dict | None  # the recipe's crop stage; None when T is itself the crop
    mean: list[float]
    std: list[float]
    split: bool
    seed: int
    preflight_items: int


@dataclass
class Start:
    """A ``pipeline_start`` request, checked against the number of loaded items."""

    workers: int
    batch_size: int
    prefetch: int
    warm: int
    order: list[int]
    seed: int
    size: list[int] | None
    frames: int | None


def prepare_request(request: dict) -> Prepare:
    name = request.get("transform")
    if not isinstance(name, str) or not name:
        raise BadRequest('"transform" must be a non-empty string')
    mean, std = request.get("mean"), request.get("std")
    if not (_floats(mean) and _floats(std)):
        raise BadRequest('"mean" and "std" must be lists of 3 numbers')
    params = request.get("params", {})
    if not isinstance(params, dict):
        raise BadRequest('"params" must be an object')
    return Prepare(
        name=name,
        transform=None if request.get("ceiling") is True else name,
        params=params,
        crop=request.get("crop"),
        mean=mean,
        std=std,
        split=bool(request.get("split", False)),
        seed=_int_field(request, "seed", 0),
        preflight_items=_int_field(request, "preflight_items", 1),
    )


def start_request(request: dict, count: int) -> Start:
    order = request.get("order")
    if not isinstance(order, list) or not order or not all(isinstance(i, int) and 0 <= i < count for i in order):
        raise BadRequest(f'"order" must be a non-empty list of item indices below {count}')
    size = request.get("size")
    if size is not None and not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) for v in size)):
        raise BadRequest('"size" must be [height, width] or null')
    frames = request.get("frames")
    if frames is not None and (isinstance(frames, bool) or not isinstance(frames, int) or frames < 1):
        raise BadRequest(f'"frames" must be an integer >= 1 (clips) or null (images), got {frames!r}')
    return Start(
        workers=_int_field(request, "workers", 0),
        batch_size=_int_field(request, "batch_size", 1),
        prefetch=_int_field(request, "prefetch", 1),
        warm=_int_field(request, "warm_batches", 0),
        order=order,
        seed=_int_field(request, "seed", 0),
        size=size,
        frames=frames,
    )


def check_output(
    what: str,
    shape: list[int] | None,
    dtype: str,
    stats: Callable[[], tuple[list[float], float]],
    start: Start,
    kind: str = "tensor",
) -> dict[str, Any]:
    """The output contract: one float32 ``kind`` B×3×H×W (clips: B×T×3×H×W, T = ``frames``) with
    normalized statistics, H×W the transform's output size for a 224×224 crop (``size``; None:
    any, the same for every item). ``what`` describes the batch for the error; ``shape`` is None
    when it is no single array at all; ``stats`` gives the per-channel means and the minimum."""
    lead = [start.batch_size] if start.frames is None else [start.batch_size, start.frames]
    spatial = "x".join(map(str, start.size)) if start.size else "H, W"
    expected = f"[{', '.join(map(str, lead))}, 3, {spatial}]"
    if shape is None:
        raise WorkerError(CONTRACT, f"the batch is {what}, expected one float32 {kind} {expected}")
    axis = len(lead)  # the channel axis
    layout = "normalized CHW" if start.frames is None else "normalized TCHW clips"
    size = start.size
    if dtype != "float32" or len(shape) != axis + 3 or shape[: axis + 1] != [*lead, CHANNELS] or (size and shape[axis + 1 :] != size):
        raise WorkerError(CONTRACT, f"the batch is {what}, expected float32 {expected} ({layout})")
    means, low = stats()
    if any(abs(m) > MEAN_BAND for m in means) or low >= 0:
        raise WorkerError(
            CONTRACT,
            f"the batch is not normalized: channel means {rounded(means)}, minimum {low:.3f} "
            f"(a normalized batch has means within ±{MEAN_BAND} and negative values)",
        )
    return {"shape": shape, "dtype": dtype, "channel_mean": rounded(means)}


def rounded(values: list[float]) -> list[float]:
    return [round(v, 3) for v in values]


@dataclass
class Window:
    """A ``pipeline_run`` request, checked."""

    min_batches: int
    rewarm: int
    min_time: float


def window_request(request: dict) -> Window:
    min_batches = _int_field(request, "min_batches", 1)
    rewarm = request.get("rewarm_batches", 0)
    if isinstance(rewarm, bool) or not isinstance(rewarm, int) or rewarm < 0:
        raise BadRequest(f'"rewarm_batches" must be an integer >= 0, got {rewarm!r}')
    min_time = request.get("min_time", 0.0)
    if not isinstance(min_time, (int, float)) or min_time < 0:
        raise BadRequest(f'"min_time" must be a number >= 0, got {min_time!r}')
    return Window(min_batches, rewarm, float(min_time))


def arrivals(next_batch: Callable[[], Any], window: Window) -> list[int]:
    """A steady-state window: at least ``min_batches`` batches and ``min_time`` seconds, the clock
    started right after the previous batch arrived, so no prefetched batch comes free. Returns
    each batch's arrival (ns after the start). A loader that sat idle first delivers
    ``rewarm`` batches untimed (its queue filled while it waited)."""
    for _ in range(window.rewarm):
        next_batch()
    clock = time.perf_counter_ns
    times: list[int] = []
    started = clock()
    limit = started + int(window.min_time * 1e9)
    while len(times) < window.min_batches or times[-1] < limit:
        next_batch()
        times.append(clock())
    return [t - started for t in times]


def _floats(value: Any) -> bool:
    return isinstance(value, list) and len(value) == CHANNELS and all(isinstance(v, (int, float)) for v in value)
