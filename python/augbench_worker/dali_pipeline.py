"""Pipeline mode with DALI's own pipeline as the loader (pipeline.md): the same protocol ops as the
DataLoader's (``pipeline``), the same recipe, contract and timing contract, built from DALI
operators. ``fn.readers.file`` reads the files in the shared seeded order (repeated without end),
or ``fn.external_source`` feeds the preloaded items in that order (memory scope); DALI's decoder,
the recipe graph, batching, and DALI's prefetch queue follow. ``workers`` is DALI's
``num_threads``. Imports DALI and NumPy only (no torch).
"""

from __future__ import annotations

import gc
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline

from . import guard
from . import pipeline_common as common
from .dali_errors import dali_error
from .protocol import EXCEPTION, BadRequest, Unsupported, WorkerError

# The reader's name in every pipeline (DALI names an operator so its epoch size can be asked).
READER = "files"


@dataclass
class Built:
    """A prepared transform: its name, the recipe graph function, the DALI device of decode."""

    name: str
    graph: Any
    decode_device: str  # "cpu" or "mixed"


@dataclass
class Session:
    built: Built
    pipe: Pipeline
    batch_size: int
    device: str
    threads: dict[str, str]
    files: list[str]  # the reader's files in order (decode scopes); empty for preloaded items
    prefetch: int
    delivered: int = 0  # batches handed over so far
    fresh_decoder: Any = None  # () -> a one-file decoder of the adapter's own (to name a bad file)


def _ordered(items: list[Any], order: list[int]) -> list[Any]:
    return [items[i] for i in order]


def build_pipeline(adapter: Any, built: Built, order: list[int], batch_size: int, threads: int, prefetch: int, seed: int) -> Pipeline:
    """DALI's pipeline for the recipe: read (files in ``order`` without end, or the preloaded
    items in that order), decode, the recipe graph; one output, the normalized batch. Defined
    here (the graph is traced now: an operator that refuses an argument raises here)."""
    device_id = 0 if adapter.device == "cuda" else None
    pipe = Pipeline(batch_size=batch_size, num_threads=threads, device_id=device_id, seed=seed, prefetch_queue_depth=prefetch)
    with pipe:
        if adapter.preloaded:
            images = fn.external_source(source=_cycle(_ordered(adapter.items, order), batch_size), batch=True, layout="HWC", dtype=types.UINT8)
            if adapter.device == "cuda":
                images = images.gpu()
        else:
            encoded, _ = fn.readers.file(files=_ordered(adapter.items, order), random_shuffle=False, name=READER)
            images = fn.decoders.image(encoded, device=built.decode_device, output_type=types.RGB)
        pipe.set_outputs(built.graph(images))
    return pipe


def _files(adapter: Any, order: list[int]) -> list[str]:
    return [] if adapter.preloaded else _ordered(adapter.items, order)


def _cycle(items: list[np.ndarray], batch_size: int) -> Any:
    """Batches of the preloaded items in the given order, repeated without end (memory scope)."""
    count = len(items)

    def source(iteration: int) -> list[np.ndarray]:  # DALI passes a batch source the iteration
        first = iteration * batch_size
        return [items[(first + k) % count] for k in range(batch_size)]

    return source


def deliver(session: Session) -> Any:
    """One batch as the training step receives it: DALI's next output; on the CPU as one NumPy
    array (a copy out of DALI's buffer, as a framework's iterator makes one), on the GPU left in
    DALI's device buffer (its run returns once the batch is complete)."""
    try:
        (out,) = session.pipe.run()
    except Exception as exc:  # noqa: BLE001 - a DALI operator failed on an item
        where = _unreadable(session)
        raise WorkerError(
            EXCEPTION, f"{session.built.name}: {where}{type(exc).__name__}: {dali_error(exc)}", traceback.format_exc()
        ) from None
    session.delivered += 1
    return out.as_array() if session.device == "cpu" else out


def _unreadable(session: Session) -> str:
    """``could not decode <file>: `` for the first file of the failing batch, or of the batches
    DALI had prefetched after it, that DALI's own decoder refuses alone (DALI's error names no
    file); empty when none does (the failure was not the file's)."""
    if not session.files:
        return ""
    count, first = len(session.files), session.delivered * session.batch_size
    candidates = [session.files[(first + k) % count] for k in range((session.prefetch + 1) * session.batch_size)]
    if session.fresh_decoder is None:
        return ""
    probe = session.fresh_decoder()
    for path in dict.fromkeys(candidates):
        try:
            probe(path)
        except ValueError:
            return f"could not decode {path}: "
    return ""


def _fresh_decoder(adapter: Any) -> Any:
    """A factory of one-file decoders of a new adapter of the same kind (DALI invalidates a
    pipeline whose operator failed, so the failing one is not reused)."""
    return lambda: type(adapter)().decode


def describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"a numpy array {list(value.shape)} {value.dtype.name}"
    return f"a {type(value).__module__}.{type(value).__name__}"


def check_first(batch: Any, settings: common.Start) -> dict[str, Any]:
    """The output contract on the first batch (brought to the host for the check on the GPU)."""
    host = batch if isinstance(batch, np.ndarray) else np.asarray(batch.as_cpu().as_array())
    axis = 1 if settings.frames is None else 2

    def stats() -> tuple[list[float], float]:
        flat = np.moveaxis(host, axis, 0).reshape(common.CHANNELS, -1)
        return [float(v) for v in flat.mean(axis=1)], float(flat.min())

    return common.check_output(describe(host), list(host.shape), host.dtype.name, stats, settings, kind="array")


def thread_report(pipe: Pipeline, decode_device: str) -> dict[str, str]:
    """What DALI's pipeline actually had: its thread pool, queue depth, executor, decode device."""
    return {
        "worker": "dali pipeline",
        "dali.num_threads": str(pipe.num_threads),
        "dali.prefetch_queue_depth": str(pipe.prefetch_queue_depth),
        "dali.exec_dynamic": str(pipe.exec_dynamic),
        "dali.exec_pipelined": str(pipe.exec_pipelined),
        "dali.exec_async": str(pipe.exec_async),
        "dali.device_id": str(pipe.device_id),
        "dali.decode_device": decode_device,
    }


def preflight(adapter: Any, built: Built, count: int) -> float:
    """Seconds per item of read + decode + recipe on the first ``count`` items, one thread, in
    one batch: run once untimed (DALI allocates its buffers on the first run), then timed."""
    chosen = list(range(min(max(1, count), len(adapter.items))))
    pipe = build_pipeline(adapter, built, chosen, len(chosen), 1, 1, 0)
    session = Session(built, pipe, len(chosen), adapter.device, {}, _files(adapter, chosen), 1, fresh_decoder=_fresh_decoder(adapter))
    try:
        pipe.build()
        deliver(session)
        started = time.perf_counter()
        deliver(session)
        return (time.perf_counter() - started) / len(chosen)
    finally:
        del session, pipe
        gc.collect()


class DaliPipelineOps:
    """The pipeline ops of a DALI worker: ``pipeline_prepare`` (graph + preflight),
    ``pipeline_start`` (DALI's pipeline built, first batch, contract, warm), ``pipeline_run``
    (one window) and ``pipeline_stop``. One pipeline lives at a time."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.built: Built | None = None
        self.session: Session | None = None

    def handle(self, op: str, request: dict) -> dict:
        if op == "pipeline_prepare":
            return self.prepare(request)
        if op == "pipeline_stop":
            self.stop()
            return {"stopped": True}
        if op == "pipeline_start":
            return self.start(request)
        if self.session is None:
            raise BadRequest("pipeline_run before a successful pipeline_start")
        return self.run(request)

    def prepare(self, request: dict) -> dict:
        self.stop()
        self.built = None
        adapter = self.adapter
        if not adapter.items:
            raise BadRequest("pipeline_prepare before load: no media are loaded")
        req = common.prepare_request(request)
        if req.split:
            raise Unsupported("DALI runs its whole pipeline on the device (mixed decode): it has no GPU split")
        decode_device = "mixed" if adapter.device == "cuda" else "cpu"
        with guard.building(req.name) as noted:
            graph, _ = adapter.build_recipe(req.crop, req.transform, req.params, req.mean, req.std, False)
            built = Built(req.name, graph, decode_device)
            try:
                seconds = preflight(adapter, built, req.preflight_items)
            except (WorkerError, Unsupported, TypeError, KeyError):
                raise  # the guard's to judge (an argument DALI refused), or already a row's story
            except Exception as exc:  # noqa: BLE001 - the recipe raised before any loader existed
                raise WorkerError(EXCEPTION, f"{req.name}: {type(exc).__name__}: {dali_error(exc)}", traceback.format_exc()) from None
        self.built = built
        return {
            "transform": req.name,
            "decoder": adapter.decoder,
            "split": False,
            "transform_device": adapter.device,
            "preflight_sec_per_item": seconds,
            **({"warnings": noted} if noted else {}),
        }

    def start(self, request: dict) -> dict:
        if self.built is None:
            raise BadRequest("pipeline_start before a successful pipeline_prepare")
        self.stop()
        adapter, built = self.adapter, self.built
        settings = common.start_request(request, len(adapter.items))
        if settings.workers < 1:
            raise Unsupported("DALI's pipeline always runs its own thread pool (num_threads >= 1): workers 0 (loading in the main process) has no DALI row; use workers >= 1")
        started = time.perf_counter()
        pipe = build_pipeline(adapter, built, settings.order, settings.batch_size, settings.workers, settings.prefetch, settings.seed)
        threads = thread_report(pipe, built.decode_device)
        files = _files(adapter, settings.order)
        session = Session(built, pipe, settings.batch_size, adapter.device, threads, files, settings.prefetch, fresh_decoder=_fresh_decoder(adapter))
        try:
            pipe.build()
            first = deliver(session)
            ttfb = time.perf_counter() - started
            contract = check_first(first, settings)
            for _ in range(settings.warm):
                deliver(session)
        except BaseException:
            del session, pipe
            gc.collect()
            raise
        self.session = session
        return {
            "time_to_first_batch": ttfb,
            "warm_batches": settings.warm,
            "batch": contract,
            "worker_threads": [session.threads],
            "loader": {
                "dali_num_threads": settings.workers,
                "prefetch_queue_depth": settings.prefetch,
                "reader": "fn.external_source (preloaded items)" if adapter.preloaded else "fn.readers.file",
            },
        }

    def run(self, request: dict) -> dict:
        session = self.session
        assert session is not None
        ns = common.arrivals(lambda: deliver(session), common.window_request(request))
        return {"ns": ns, "items": len(ns) * session.batch_size, "gpu_memory": None}

    def stop(self) -> None:
        if self.session is not None:
            self.session = None
            gc.collect()  # DALI's threads and buffers go with the pipeline object

