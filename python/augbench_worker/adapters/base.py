"""Library-independent part of every adapter: media bookkeeping, transform lookup, the output
check and the timed loop (stdlib + numpy only).

A library module subclasses ``Adapter`` and supplies the hooks marked "library hook": decoding in
its native layout, forcing lazy outputs (and saying whether an output needed it), describing
shapes, and a ``BUILDERS`` table mapping each canonical transform name (specs/transforms.yaml) to
a function ``params -> callable(image)``.

Targets (``load`` with ``targets``, docs/protocol.md): the worker parses the targets file into
NumPy arrays per item here; a library that moves masks, boxes and keypoints with the image fills
the target hooks (``check_targets``, ``target_sample``, ``build_targets``, ``target_image``,
``force_targets``, ``target_arrays``): each item becomes the library's own sample at load, and
the timed call is the library's own joint call on it. The image-only path is untouched by them.
"""

from __future__ import annotations

import json
import os
import random
import time
import traceback
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from .. import guard
from ..protocol import BAD_INPUT, CONTRACT, EXCEPTION, BadRequest, Unsupported, WorkerError
from ..protocol import int_field as _int_field

# AUGBENCH_FRESH_BUFFERS=1: every `time` request first copies the loaded items into new
# allocations (the noise study's fresh-buffers condition, docs/methodology.md).
FRESH_BUFFERS_ENV = "AUGBENCH_FRESH_BUFFERS"

def _nothing() -> None:
    """Stands in for a count marker when the loop is not counted."""


# The SIMD features reported in ``hello`` (numpy's names), where numpy's own CPU detection (the
# CPUID that Valgrind emulates) tells which paths a dispatching library can take.
SIMD_FEATURES = {"SSE42": "sse4_2", "AVX2": "avx2", "AVX512F": "avx512f", "ASIMD": "neon"}


def cpu_features() -> list[str]:
    """The SIMD features numpy's CPU detection sees in this process (``hello.cpu_features``)."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    found = getattr(getattr(core, "_multiarray_umath", None), "__cpu_features__", {}) or {}
    return sorted(name for key, name in SIMD_FEATURES.items() if found.get(key))


Apply = Callable[[Any], Any]
Builder = Callable[[dict], Apply]
DEFAULT_SEED = 0
# The check's output-form measurement (untimed): the transform on up to this many items (batches,
# clips), and no new item once this many seconds went by (a slow transform stops after one).
FORM_ITEMS = 5
FORM_MAX_SECONDS = 1.0


def registry() -> tuple[dict[str, Builder], Callable[[str], Callable[[Builder], Builder]]]:
    """A fresh builder table plus the decorator that fills it: ``@builds("HorizontalFlip")``."""
    table: dict[str, Builder] = {}

    def builds(name: str) -> Callable[[Builder], Builder]:
        def register(fn: Builder) -> Builder:
            table[name] = fn
            return fn

        return register

    return table, builds


# The target kinds a ``load`` may ask for, in the order replies list them.
TARGET_KINDS = ("mask", "boxes", "keypoints")
TARGETS_VERSION = 1


@dataclass
class Prepared:
    name: str
    apply: Apply  # the library call alone (checked for the native output type)
    run: Apply  # apply + forcing lazy work: what the timed loop calls
    batch: int  # 1 = per-image regime; > 1 = batched regime (Kornia)
    force: Apply | None = None  # what ``run`` forces with (None: ``Adapter.force``)
    targets: tuple[str, ...] = ()  # the target kinds moved with the image (empty: image only)


class Adapter:
    """One library's view of the protocol; subclasses fill the library hooks."""

    library = ""
    layout = ""  # HWC, CHW or PIL
    video_layout = ""  # THWC or TCHW: the library's native clip layout ("" = no clips here)
    native_type = ""  # shown in contract errors
    builders: dict[str, Builder] = {}
    reasons: dict[str, str] = {}  # transforms known to be missing, with why
    rgb_only: dict[str, str] = {}  # transforms that need exactly 3 channels, with why
    device_reasons: dict[tuple[str, str], str] = {}  # (transform, device) exclusions
    # (transform, target kind) → why the library cannot move that target with the image
    target_reasons: dict[tuple[str, str], str] = {}
    target_kinds: tuple[str, ...] = ()  # the kinds loaded with the items (set per load)
    decoder = ""  # pipeline mode: the decoder the library reads files with, for the record
    # Production cells: the library's own decoder by the name a cell asks for decoders with
    # (decoders.py), and the form it gives (``hwc-uint8``, ``chw-uint8``, ``pil``), which a decoder
    # asked for by name must give too.
    own_decoder = ""
    decoded_form = ""
    # Pipeline mode: the decoder by device where it differs from ``decoder`` on that device
    # (DALI: ``mixed`` decode on cuda); the coordinator records the one of the job's device.
    device_decoders: dict[str, str] = {}

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.paths: list[str] = []
        self.channels = 3
        self.device = "cpu"
        self.prepared: Prepared | None = None
        self.custom: Any = None  # a spec_file.SpecFile when --spec is given
        self.current_seed = DEFAULT_SEED
        self.preloaded = True  # pipeline decode scopes hold paths and decode inside the loader
        self.pipeline = False  # media loaded for pipeline mode (read with the pipeline decoder)
        self.video = False  # items are clips (``video_layout``), one transform call per clip
        # Targets loaded with the items: the kinds, each item's parsed arrays (NumPy) and its
        # sample in the library's own types (``target_sample``); empty for image-only loads.
        self.target_kinds: tuple[str, ...] = ()
        self.entries: list[dict[str, np.ndarray]] = []
        self.entry_sizes: list[list[int]] = []
        self.samples: list[Any] = []
        self.target_params: dict = {}  # the prepared transform's params (a refusal's probe rebuilds it)

    # ----- library hooks -------------------------------------------------------------
    def versions(self) -> dict[str, str]:
        raise NotImplementedError

    def pin_threads(self, single: bool) -> dict[str, str]:
        return {}

    def available_devices(self) -> list[str]:
        return ["cpu"]

    def decode(self, path: str) -> Any:
        raise NotImplementedError

    def stack_clip(self, frames: list[Any]) -> Any:
        """Frames (each as ``decode`` returns it) as one clip in ``video_layout``."""
        raise NotImplementedError

    def video_apply(self, apply: Apply) -> Apply:
        """The transform applied to a whole clip with one parameter draw (default: as is)."""
        return apply

    def decode_clip(self, folder: str, decode: Callable[[str], Any] | None = None) -> Any:
        """A clip folder's frames, in sorted file-name order (the coordinator wrote them so), each
        read with ``decode`` (default: the micro decoder)."""
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
        frames = [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]
        if not frames:
            raise ValueError("the clip folder holds no frames")
        return self.stack_clip([self._frame(path, decode or self.decode) for path in frames])

    @staticmethod
    def _frame(path: str, decode: Callable[[str], Any]) -> Any:
        try:
            return decode(path)
        except Exception as exc:  # noqa: BLE001 - named with the frame, the clip is skipped
            raise ValueError(f"frame {path}: {type(exc).__name__}: {exc}") from None

    def replicate(self, item: Any, times: int) -> Any:
        """Stack the RGB item ``times`` times along the channel axis (multichannel scenarios)."""
        raise NotImplementedError

    def to_device(self, item: Any) -> Any:
        return item

    def force(self, out: Any) -> Any:
        raise NotImplementedError

    def is_native(self, out: Any) -> bool:
        raise NotImplementedError

    def is_contiguous(self, out: Any) -> bool | None:
        """Whether a native output is already complete in memory: no view with strides, nothing
        lazy left for ``force`` to do (None: the library cannot tell)."""
        return None

    def shape_dtype(self, value: Any) -> tuple[list[int], str]:
        raise NotImplementedError

    def to_hwc_uint8(self, out: Any) -> Any:
        """An output as a numpy HWC uint8 array (the equivalence check compares these)."""
        return np.ascontiguousarray(out, dtype=np.uint8)

    def sync(self) -> None:
        """Wait for queued device work (no-op on CPU)."""

    def seed(self, seed: int) -> None:
        random.seed(seed)
        np.random.seed(seed)

    def check_device(self, device: str) -> None:
        if device != "cpu":
            raise Unsupported(f"{self.library} runs on the CPU only (device {device!r} requested)")

    def check_channels(self, channels: int) -> None:
        """Refuse channel counts the library cannot hold (Pillow: RGB only)."""

    def prepare_batch(self, batch: int) -> None:
        raise Unsupported(f"{self.library} has no batched regime (batch={batch}); only kornia does")

    def batch_inputs(self, start: int, count: int) -> list[Any]:
        raise NotImplementedError

    # ----- pipeline hooks (docs/pipeline.md; called by ``pipeline.PipelineOps``) -------------
    def pipeline_ops(self) -> Any:
        """The loader side of pipeline mode: PyTorch's DataLoader (imports torch, on first use)."""
        from ..pipeline import PipelineOps  # noqa: PLC0415 - pipeline mode only

        return PipelineOps(self)

    def pipeline_decode(self, path: str) -> Any:
        """Pipeline mode reads a file with the library's usual decoder (default: as micro does)."""
        return self.decode(path)

    def pipeline_read(self, path: str) -> Any:
        """One pipeline item: an image file, or a clip folder whose frames are read with the
        pipeline decoder and stacked in ``video_layout`` (the loader's decode scopes call this)."""
        return self.decode_clip(path, self.pipeline_decode) if self.video else self.pipeline_decode(path)

    def build_recipe(
        self, crop: dict | None, name: str, params: dict, mean: list[float], std: list[float], split: bool
    ) -> tuple[Apply, Apply | None]:
        """The recipe ``crop → T → Normalize → CHW float32`` built with the library's own API:
        (per-sample function for the loader workers, main-process batch stage or None). With
        clips (``self.video``) an item is a clip in ``video_layout`` and the recipe makes a
        T×3×H×W float32 tensor: one crop window and one parameter draw for the whole clip.
        ``crop`` is None when T is itself the crop; ``name`` is None for the ceiling row (no T).
        ``split``: workers crop, the rest runs on the batch in the main process (GPU split)."""
        raise Unsupported(f"{self.library} has no pipeline recipe")

    def reseed_recipe(self, seed: int) -> None:
        """Reseed RNGs the library keeps itself, in a fresh loader worker."""

    def recipe_threads(self) -> dict[str, str]:
        """Thread settings a loader worker actually has (reported per worker)."""
        return {}

    def recipe_crop(self, name: str, params: dict) -> Apply:
        """The recipe's crop stage, built as the transform ``name`` unless the library says otherwise."""
        return self.build(name, params)

    def build_chain(self, stages: list[dict]) -> Apply:
        """A production recipe's stages in order (``production``): each built as the transform of
        its op (a stage marked ``crop`` as the recipe's crop), applied one after another to the
        decoded image; the result is the library's own uint8 image. A stage the library cannot
        build makes the whole recipe unsupported, naming the stage."""
        built = [self.chain_stage(i, stage) for i, stage in enumerate(stages)]

        def chain(image: Any) -> Any:
            for apply in built:
                image = apply(image)
            return image

        return chain

    def build_batch_chain(self, stages: list[dict], first: int) -> Apply:
        """The stages after the loader workers' (``first`` of them), run on the collated batch on
        the load's device (production cells on the GPU). A library that runs only in the loader
        workers has none."""
        raise BadRequest(f"{self.library} runs every stage in its loader workers: \"stages_in_workers\" must be "
                         f"{first + len(stages)}")

    def chain_stage(self, index: int, stage: dict) -> Apply:
        op, params = stage["op"], stage["params"]
        try:
            return self.recipe_crop(op, params) if stage.get("crop") else self.build(op, params)
        except Unsupported as exc:
            raise Unsupported(f"stage {index + 1} ({op}): {exc.message}") from None

    # ----- target hooks (``load`` with ``targets``; docs/protocol.md, "Targets") ---------------
    def no_targets(self) -> Unsupported:
        return Unsupported(f"{self.library} has no API that moves masks, boxes or keypoints with the image")

    def check_targets(self, kinds: tuple[str, ...]) -> None:
        """Refuse targets the library cannot move with the image (default: every kind)."""
        raise self.no_targets()

    def target_sample(self, image: Any, entry: dict[str, np.ndarray], kinds: tuple[str, ...]) -> Any:
        """One item as the library's own sample: the native image plus ``entry``'s arrays (boxes
        N×4 xyxy float32 with labels N int64, keypoints K×2 float32, mask H×W uint8) converted
        to the library's types. Micro rows call it at load, outside every timed window; pipeline
        rows inside the loader's recipe (``build_target_recipe``), as a dataset's ``__getitem__``."""
        raise self.no_targets()

    def build_targets(self, name: str, params: dict, kinds: tuple[str, ...]) -> Apply:
        """``sample -> out``: the transform ``name`` in the library's own joint call on a sample."""
        raise self.no_targets()

    def build_target_recipe(
        self, crop: dict | None, name: str | None, params: dict, mean: list[float], std: list[float], kinds: tuple[str, ...]
    ) -> Callable[[Any, dict[str, np.ndarray]], tuple[Any, dict[str, Any]]]:
        """The pipeline recipe with targets (docs/targets.md, "Pipeline mode"): ``(image, entry)
        -> (CHW float32 normalized tensor, targets)``, the crop, T and the normalization in the
        library's own joint call, ``entry``'s arrays converted to the library's sample first and
        the outputs to tensors last (``mask`` H×W, ``boxes`` N×4 xyxy with ``labels`` N,
        ``keypoints`` K×2), as a training dataset's ``__getitem__`` writes it."""
        raise self.no_targets()

    def target_image(self, out: Any) -> Any:
        """The image part of a joint output, in the native type (checked, shaped, emitted)."""
        raise NotImplementedError

    def force_targets(self, out: Any) -> Any:
        """A joint output with the image and every target forced (what the timed ``run`` does)."""
        raise NotImplementedError

    def target_arrays(self, out: Any) -> dict[str, np.ndarray]:
        """A joint output's targets as NumPy arrays, for the loaded kinds: ``mask`` (H×W uint8),
        ``boxes`` (N×4 xyxy pixels), ``labels`` (N), ``keypoints`` (K×2 xy pixels)."""
        raise NotImplementedError

    def targets_out(self, out: Any) -> dict[str, Any]:
        """Counts of a joint output: ``boxes``, ``keypoints``, ``mask_shape`` [h, w] (loaded kinds)."""
        return _target_counts(self.target_arrays(out), self.target_kinds)

    def refuse_targets(self, name: str) -> None:
        """Raise ``Unsupported`` when the adapter knows ``name`` cannot move a loaded kind
        (``target_reasons``), naming those kinds only."""
        refused = [(k, self.target_reasons[(name, k)]) for k in self.target_kinds if (name, k) in self.target_reasons]
        if refused:
            raise self.cannot_move(name, [kind for kind, _ in refused], "; ".join(reason for _, reason in refused))

    def cannot_move(self, name: str, kinds: Sequence[str], reason: str) -> Unsupported:
        """The refusal of a transform that cannot move ``kinds`` with the image, and why."""
        return Unsupported(f"{name} cannot move the {' and the '.join(kinds)} with the image in {self.library}: {reason}")

    def target_refusal(self, exc: BaseException) -> str | None:
        """The library's own "cannot do this target" error, as a reason (None: another failure,
        reported as it is). Default: ``NotImplementedError``."""
        if isinstance(exc, NotImplementedError):
            return f"NotImplementedError: {exc}" if str(exc) else "NotImplementedError"
        return None

    def refresh_sample(self, image: Any, entry: dict[str, np.ndarray]) -> Any:
        """A sample rebuilt on a fresh copy of its image (fresh buffers)."""
        return self.target_sample(image, {k: v.copy() for k, v in entry.items()}, self.target_kinds)

    def image_hw(self, value: Any) -> list[int]:
        """Height and width of a native image (HWC, CHW or 1×CHW)."""
        shape, _ = self.shape_dtype(value)
        return [int(n) for n in (shape[:2] if self.layout in ("HWC", "PIL") else shape[-2:])]

    # ----- protocol operations ------------------------------------------------------
    def load(self, request: dict) -> dict:
        targets = self._targets_request(request)
        video = self._check_media(request.get("media", "image"), request)
        paths = request.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or not paths:
            raise BadRequest('"paths" must be a non-empty list of strings')
        channels = _int_field(request, "channels", 3, default=3)
        if channels % 3:
            raise BadRequest(f'"channels" must be a multiple of 3, got {channels}')
        device = request.get("device", "cpu")
        self.check_device(device)
        self.check_channels(channels)
        pipeline = request.get("pipeline", False) is True
        if pipeline and channels != 3:
            raise Unsupported(f"the pipeline recipe is RGB; {channels} channels requested")
        table = _read_targets(targets["file"]) if targets else {}
        self.prepared, self.items, self.paths = None, [], []
        self.target_kinds, self.entries, self.samples = (), [], []
        self.video, self.layout = video, (self.video_layout if video else type(self).layout)
        self.channels, self.device = channels, device
        self.pipeline = pipeline
        self.preloaded = not pipeline or request.get("preload", True) is not False
        started = time.perf_counter()
        read = self.decode_clip if self.video else self.decode
        skipped = self._decode_all(paths, self.pipeline_read if pipeline else read)
        self.sync()
        decode_seconds = time.perf_counter() - started
        if not self.items:
            raise WorkerError(
                BAD_INPUT,
                f"{self.library} could not decode any of the {len(paths)} files "
                f"(first: {skipped[0]['path']}: {skipped[0]['reason']})",
                "\n".join(f"{s['path']}: {s['reason']}" for s in skipped),
            )
        reply_targets = self._attach_targets(targets["kinds"], table, skipped) if targets else None
        shape, dtype = self.shape_dtype(self.items[0]) if self.preloaded else ([], "path")
        reply = {
            "count": len(self.items),
            "decode_seconds": decode_seconds,
            "shape": shape,
            "dtype": dtype,
            "layout": self.layout,
            "skipped": skipped,
        }
        if reply_targets is not None:
            reply["targets"] = reply_targets
        return reply

    def _targets_request(self, request: dict) -> dict | None:
        """The ``targets`` field of a ``load`` (None without one), validated; refuses what this
        worker cannot measure with targets."""
        targets = request.get("targets")
        if targets is None:
            return None
        if not isinstance(targets, dict) or not isinstance(targets.get("file"), str) or not targets["file"]:
            raise BadRequest('"targets" must be an object {"file": <path of a targets JSON>, "kinds": [...]}')
        kinds = targets.get("kinds")
        if (
            not isinstance(kinds, list)
            or not kinds
            or any(kind not in TARGET_KINDS for kind in kinds)
            or len(set(kinds)) != len(kinds)
        ):
            raise BadRequest(
                f'"targets.kinds" must be a non-empty list of distinct kinds from {list(TARGET_KINDS)}, got {kinds!r}'
            )
        ordered = tuple(kind for kind in TARGET_KINDS if kind in kinds)
        self.check_targets(ordered)
        if request.get("media", "image") == "video":
            raise Unsupported("targets are measured on images only")
        return {"file": targets["file"], "kinds": ordered}

    def _attach_targets(self, kinds: tuple[str, ...], table: dict, skipped: list[dict[str, str]]) -> dict:
        """Pairs each decoded item with its targets, converted to the library's sample (items
        without usable targets are dropped and listed in ``skipped``)."""
        items, paths, entries, samples, sizes, dropped = [], [], [], [], [], []
        for item, path in zip(self.items, self.paths):
            try:
                # A file the loader decodes later is checked against its entry's size there.
                hw = self.image_hw(item) if self.preloaded else _entry_hw(table.get(path))
                entry = _parse_entry(table.get(path), kinds, hw)
                # Pipeline samples are built in the loader's recipe, from (image, entry).
                sample = None if self.pipeline else self.target_sample(item, entry, kinds)
            except ValueError as exc:
                dropped.append({"path": path, "reason": str(exc)})
                continue
            items.append(item)
            paths.append(path)
            entries.append(entry)
            samples.append(sample)
            sizes.append(hw)
        skipped.extend(dropped)
        if not items:
            raise WorkerError(
                BAD_INPUT,
                f"none of the {len(self.items)} decoded items has usable targets "
                f"(first: {dropped[0]['path']}: {dropped[0]['reason']})",
                "\n".join(f"{s['path']}: {s['reason']}" for s in dropped),
            )
        self.items, self.paths, self.entries, self.samples = items, paths, entries, samples
        self.entry_sizes = sizes  # [height, width] per item, as its targets entry says
        self.target_kinds = kinds
        self.sync()
        return {
            "kinds": list(kinds),
            "items": len(items),
            "boxes": sum(len(e["boxes"]) for e in entries) if "boxes" in kinds else 0,
            "keypoints": sum(len(e["keypoints"]) for e in entries) if "keypoints" in kinds else 0,
        }

    def _check_media(self, media: Any, request: dict) -> bool:
        """Whether the items are video clips; refuses what this worker cannot measure."""
        if media == "image":
            return False
        if media != "video":
            raise BadRequest(f'"media" must be "image" or "video", got {media!r}')
        if not self.video_layout:
            raise Unsupported(f"{self.library} has no video clip layout in augbench")
        if request.get("channels", 3) != 3:
            raise Unsupported("video clips are RGB")
        return True

    def _decode_all(self, paths: list[str], decode: Callable[[str], Any]) -> list[dict[str, str]]:
        if not self.preloaded:  # a decode scope: the loader decodes; a missing item is skipped now
            exists, what = (os.path.isdir, "no such clip folder") if self.video else (os.path.isfile, "no such file")
            self.items = [p for p in paths if exists(p)]
            self.paths = list(self.items)
            return [{"path": p, "reason": what} for p in paths if not exists(p)]
        skipped = []
        for path in paths:
            try:
                item = decode(path)
            except Exception as exc:  # noqa: BLE001 - an unreadable file is skipped, not fatal
                skipped.append({"path": path, "reason": f"{type(exc).__name__}: {exc}"})
                continue
            if self.channels > 3:
                item = self.replicate(item, self.channels // 3)
            # Pipeline items stay on the CPU: forked loader workers read them (the GPU split copies
            # each batch to the device).
            self.items.append(item if self.pipeline else self.to_device(item))
            self.paths.append(path)
        return skipped

    def prepare(self, request: dict) -> dict:
        name = request.get("transform")
        if not isinstance(name, str) or not name:
            raise BadRequest('"transform" must be a non-empty string')
        params = request.get("params", {})
        if not isinstance(params, dict):
            raise BadRequest('"params" must be an object')
        if not self.items:
            raise BadRequest("prepare before load: no media are loaded")
        device = request.get("device", self.device)
        if device != self.device:
            raise BadRequest(f"prepare asks for device {device!r} but the media were loaded on {self.device!r}")
        batch = _int_field(request, "batch", 1, default=1)
        self.prepared = None
        self.current_seed = _int_field(request, "seed", 0, default=DEFAULT_SEED)
        if self.target_kinds:
            return self._prepare_targets(name, params, batch)
        self.seed(self.current_seed)
        with guard.building(name) as noted:
            apply = self.build(name, params)
        if self.video:
            if batch > 1:
                raise Unsupported("clips have no batched regime: each clip is one call")
            apply = self.video_apply(apply)
        if batch > 1:
            self.prepare_batch(batch)
        force = self.force

        def run(image: Any) -> Any:
            return force(apply(image))

        self.prepared = Prepared(name, apply, run, batch)
        regime = "batch" if batch > 1 else "per_image"
        reply: dict[str, Any] = {"transform": name, "regime": regime, "batch": batch}
        noted = [*self.custom.warnings, *noted] if self.custom is not None else noted
        if noted:
            reply["warnings"] = noted
        return reply

    def _prepare_targets(self, name: str, params: dict, batch: int) -> dict:
        """``prepare`` with targets loaded: the library's joint call, built once, per image."""
        if batch > 1:
            raise Unsupported("targets are measured per image: no batched regime")
        if self.custom is not None:
            raise Unsupported("a spec file's transforms take images only: no targets")
        self.refuse_targets(name)
        self.seed(self.current_seed)
        self.target_params = params
        with guard.building(name) as noted:
            apply = self.build_targets(name, params, self.target_kinds)
        force = self.force_targets

        def run(sample: Any) -> Any:
            return force(apply(sample))

        self.prepared = Prepared(name, apply, run, 1, force, self.target_kinds)
        reply: dict[str, Any] = {"transform": name, "regime": "per_image", "batch": 1}
        reply["targets"] = list(self.target_kinds)
        if noted:
            reply["warnings"] = noted
        return reply

    def emit(self, request: dict) -> dict:
        """The prepared transform applied once to every loaded item (seeded), each output written
        as raw HWC uint8 bytes to ``<dir>/<index>.u8``: what the equivalence check compares."""
        folder = request.get("dir")
        if not isinstance(folder, str) or not os.path.isdir(folder):
            raise BadRequest('"dir" must name an existing folder')
        if self.prepared is None:
            raise BadRequest("emit before prepare: no transform is prepared")
        self.seed(_int_field(request, "seed", 0, default=self.current_seed))
        if self.prepared.targets:
            return {"outputs": [self._emit_targets(folder, i, s) for i, s in enumerate(self.samples)]}
        outputs = []
        for index, item in enumerate(self.items):
            pixels = self.to_hwc_uint8(self.prepared.run(item))
            if pixels.ndim == 2:
                pixels = pixels[:, :, None]
            path = os.path.join(folder, f"{index}.u8")
            with open(path, "wb") as handle:
                handle.write(np.ascontiguousarray(pixels).tobytes())
            outputs.append({"file": path, "shape": [int(n) for n in pixels.shape]})
        return {"outputs": outputs}

    def _emit_targets(self, folder: str, index: int, sample: Any) -> dict:
        """One joint output: ``<index>.u8`` (the image, as without targets), ``<index>.targets.json``
        (boxes, labels, keypoints of the loaded kinds) and, with masks, ``<index>.mask.u8``."""
        assert self.prepared is not None
        out = self.prepared.run(sample)
        pixels = self.to_hwc_uint8(self.target_image(out))
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        path = os.path.join(folder, f"{index}.u8")
        with open(path, "wb") as handle:
            handle.write(np.ascontiguousarray(pixels).tobytes())
        arrays = self.target_arrays(out)
        listed: dict[str, Any] = {}
        if "boxes" in arrays:
            listed["boxes"] = np.asarray(arrays["boxes"], dtype=np.float64).reshape(-1, 4).tolist()
            listed["labels"] = [int(n) for n in np.asarray(arrays["labels"]).reshape(-1)]
        if "keypoints" in arrays:
            listed["keypoints"] = np.asarray(arrays["keypoints"], dtype=np.float64).reshape(-1, 2).tolist()
        targets_path = os.path.join(folder, f"{index}.targets.json")
        with open(targets_path, "w", encoding="utf-8") as handle:
            json.dump(listed, handle)
        entry: dict[str, Any] = {"file": path, "shape": [int(n) for n in pixels.shape], "targets_file": targets_path}
        if "mask" in arrays:
            mask_path = os.path.join(folder, f"{index}.mask.u8")
            with open(mask_path, "wb") as handle:
                handle.write(np.ascontiguousarray(arrays["mask"], dtype=np.uint8).tobytes())
            entry["mask_file"] = mask_path
            entry["mask_shape"] = [int(n) for n in arrays["mask"].shape]
        return entry

    def build(self, name: str, params: dict) -> Apply:
        """The apply callable for ``name``, or ``Unsupported`` with the reason."""
        if self.custom is not None:
            return self.custom.apply_for(name)
        if name in self.reasons:
            raise Unsupported(self.reasons[name])
        builder = self.builders.get(name)
        if builder is None:
            raise Unsupported(f"{self.library} has no direct equivalent of {name}")
        if self.channels != 3 and name in self.rgb_only:
            raise Unsupported(f"{name} needs 3-channel input in {self.library}: {self.rgb_only[name]}")
        if (name, self.device) in self.device_reasons:
            raise Unsupported(self.device_reasons[(name, self.device)])
        try:
            return builder(params)
        except KeyError as exc:
            raise BadRequest(f"params for {name} lack the field {exc.args[0]!r}") from None

    def check(self, request: dict) -> dict:
        prepared = self._require_prepared("check")
        if prepared.targets:
            return self._check_targets(prepared)
        sample = self.batch_inputs(0, prepared.batch)[0] if prepared.batch > 1 else self.items[0]
        clock = time.perf_counter_ns
        self.sync()
        started = clock()
        raw = prepared.apply(sample)
        self.sync()
        applied = clock()
        if not self.is_native(raw):
            raise WorkerError(
                CONTRACT,
                f"{prepared.name} returned {type(raw).__module__}.{type(raw).__name__}, expected {self.native_type}",
            )
        forcing = clock()
        out = self.force(raw)
        self.sync()
        cold = (applied - started, clock() - forcing)
        return {**self._shapes(sample, out, prepared.batch), **self._output_form(prepared, raw, cold)}

    def _check_targets(self, prepared: Prepared) -> dict:
        """``check`` with targets: the joint call once on item 0; a library error that says it
        cannot do a target answers ``unsupported``, naming the kinds that fail alone."""
        sample = self.samples[0]
        clock = time.perf_counter_ns
        self.sync()
        started = clock()
        try:
            raw = prepared.apply(sample)
            self.sync()
        except Exception as exc:
            reason = self.target_refusal(exc)
            if reason is None:
                raise
            self.prepared = None  # the next request must prepare again
            failing = self._failing_kinds(prepared.name)
            raise self.cannot_move(prepared.name, failing or prepared.targets, reason) from None
        applied = clock()
        image = self.target_image(raw)
        if not self.is_native(image):
            raise WorkerError(
                CONTRACT,
                f"{prepared.name} returned an image of {type(image).__module__}.{type(image).__name__}, "
                f"expected {self.native_type}",
            )
        forcing = clock()
        out = self.force_targets(raw)
        self.sync()
        cold = (applied - started, clock() - forcing)
        self._check_target_arrays(prepared.name, out)
        targets_out = self.targets_out(out)
        shapes = self._shapes(self.items[0], self.target_image(out), 1)
        return {**shapes, "targets_out": targets_out, **self._output_form(prepared, raw, cold)}

    def _failing_kinds(self, name: str) -> list[str]:
        """The loaded kinds on which the library fails alone (untimed; after a refusal)."""
        failing = []
        for kind in self.target_kinds:
            try:
                apply = self.build_targets(name, self.target_params, (kind,))
                apply(self.target_sample(self.items[0], self.entries[0], (kind,)))
            except Exception:  # noqa: BLE001 - this kind fails alone: named in the refusal
                failing.append(kind)
        return failing

    def _check_target_arrays(self, name: str, out: Any) -> None:
        """A contract error when a target of the output is missing or has the wrong shape."""
        arrays = self.target_arrays(out)
        hw = self.image_hw(self.target_image(out))
        for kind in self.target_kinds:
            if kind not in arrays:
                raise WorkerError(CONTRACT, f"{name} returned no {kind}")
        if "mask" in arrays and list(arrays["mask"].shape) != hw:
            raise WorkerError(
                CONTRACT,
                f"{name} returned a mask of shape {list(arrays['mask'].shape)} for an image of {hw[0]}x{hw[1]} (HxW)",
            )
        if "boxes" in arrays:
            boxes, labels = np.asarray(arrays["boxes"]), np.asarray(arrays["labels"])
            if boxes.ndim != 2 or boxes.shape[1] != 4:
                raise WorkerError(CONTRACT, f"{name} returned boxes of shape {list(boxes.shape)}, expected N x 4")
            if labels.shape != (boxes.shape[0],):
                raise WorkerError(CONTRACT, f"{name} returned {list(labels.shape)} labels for {boxes.shape[0]} boxes")
        if "keypoints" in arrays:
            points = np.asarray(arrays["keypoints"])
            if points.ndim != 2 or points.shape[1] != 2:
                raise WorkerError(CONTRACT, f"{name} returned keypoints of shape {list(points.shape)}, expected K x 2")

    def _output_form(self, prepared: Prepared, first: Any, cold: tuple[int, int]) -> dict:
        """Whether the library's own outputs were contiguous, and the share of apply + force
        spent forcing them: measured here, outside every timed run, on the first few items
        (``cold``: the check's own first call, used alone when it already took long)."""
        contiguous = self.is_contiguous(self.target_image(first) if prepared.targets else first)
        apply_ns, force_ns = cold
        if sum(cold) < FORM_MAX_SECONDS * 1e9:
            looped = self._form_loop(prepared, contiguous)
            if looped[1] + looped[2] > 0:  # else the first other item raised: keep the check's call
                contiguous, apply_ns, force_ns = looped
        form: dict[str, Any] = {}
        if contiguous is not None:
            form["output_contiguous"] = contiguous
        if apply_ns + force_ns > 0:
            form["force_share"] = force_ns / (apply_ns + force_ns)
        return form

    def _form_loop(self, prepared: Prepared, contiguous: bool | None) -> tuple[bool | None, int, int]:
        """Apply and force timed apart on up to ``FORM_ITEMS`` items, within ``FORM_MAX_SECONDS``.
        An item the transform raises on ends the loop: the timed runs report it, with the item."""
        apply_ns = force_ns = 0
        clock, sync = time.perf_counter_ns, self.sync
        force = prepared.force or self.force
        deadline = clock() + int(FORM_MAX_SECONDS * 1e9)
        for sample in self._form_samples(prepared):
            try:
                sync()
                started = clock()
                raw = prepared.apply(sample)
                sync()
                applied = clock()
                force(raw)
                sync()
            except Exception:  # noqa: BLE001 - not this measurement's to report
                break
            apply_ns, force_ns = apply_ns + applied - started, force_ns + clock() - applied
            seen = self.is_contiguous(self.target_image(raw) if prepared.targets else raw)
            contiguous = None if seen is None or contiguous is None else contiguous and seen
            if clock() > deadline:
                break
        return contiguous, apply_ns, force_ns

    def _form_samples(self, prepared: Prepared) -> list[Any]:
        """The inputs of the output-form measurement: the first items (or batches), in order."""
        if prepared.batch > 1:
            return [self.batch_inputs(i * prepared.batch, prepared.batch)[0] for i in range(FORM_ITEMS)]
        if prepared.targets:
            return self.samples[:FORM_ITEMS]
        return self.items[:FORM_ITEMS]

    def _shapes(self, sample: Any, out: Any, batch: int) -> dict:
        in_shape, in_dtype = self.shape_dtype(sample)
        out_shape, out_dtype = self.shape_dtype(out)
        if batch > 1:  # report one item's shape so the contract compares like with like
            if out_shape[:1] != in_shape[:1]:
                raise WorkerError(CONTRACT, f"batched output {out_shape} lost the batch axis of {in_shape}")
            in_shape, out_shape = in_shape[1:], out_shape[1:]
        response = {
            "input_shape": in_shape,
            "output_shape": out_shape,
            "input_dtype": in_dtype,
            "output_dtype": out_dtype,
            "layout": self.layout,
        }
        if batch > 1:
            response["batch"] = batch
        return response

    def time(self, request: dict) -> dict:
        prepared = self._require_prepared("time")
        start = _int_field(request, "start", 0, default=0)
        count = _int_field(request, "count", 1)
        loops = _int_field(request, "loops", 1, default=1)
        # Kept alive through the loops, so the fresh copies land on pages of their own.
        previous = self._refresh_items() if os.environ.get(FRESH_BUFFERS_ENV) == "1" else None
        if prepared.batch > 1:
            inputs = self.batch_inputs(start, count)
        elif self.target_kinds:  # a prepared transform after a targets load is a joint call
            inputs = [self.samples[(start + i) % len(self.samples)] for i in range(count)]
        else:
            inputs = [self.items[(start + i) % len(self.items)] for i in range(count)]
        markers = bool(request.get("markers", False))
        ns, cpu_ns = self._timed_loops(prepared, inputs, loops, markers)
        del previous
        return {"ns": ns, "cpu_ns": cpu_ns}

    def _refresh_items(self) -> list[Any]:
        """Replaces every loaded item with a fresh copy; returns the old list (fresh buffers)."""
        previous = self.items
        self.items = [item.clone() if hasattr(item, "clone") else item.copy() for item in previous]
        if self.target_kinds:  # the samples hold the images: rebuild them on the fresh copies
            previous = [*previous, *self.samples]
            self.samples = [self.refresh_sample(item, entry) for item, entry in zip(self.items, self.entries)]
        return previous

    def _timed_loops(
        self, prepared: Prepared, inputs: list[Any], loops: int, markers: bool = False
    ) -> tuple[list[int], list[int]]:
        """Wall and thread-CPU nanoseconds of each loop (the CPU clock leaves out waiting for a core)."""
        run, sync, clock, cpu_clock = prepared.run, self.sync, time.perf_counter_ns, time.thread_time_ns
        # Instruction counts: getpgrp() right before and getppid() right after each loop, which
        # callgrind's --zero-before/--dump-before cut into one dump per loop (docs/protocol.md).
        before, after = (os.getpgrp, os.getppid) if markers else (_nothing, _nothing)
        values: list[int] = []
        cpu_values: list[int] = []
        current = None
        try:
            for _ in range(loops):
                before()
                cpu_started = cpu_clock()
                started = clock()
                for current in inputs:
                    run(current)
                sync()
                values.append(clock() - started)
                cpu_values.append(cpu_clock() - cpu_started)
                after()
        except Exception as exc:  # noqa: BLE001 - reported with the item that raised
            raise WorkerError(
                EXCEPTION,
                f"{prepared.name} raised on {self._describe(current)}: {type(exc).__name__}: {exc}",
                traceback.format_exc(),
            ) from None
        return values, cpu_values

    def _describe(self, current: Any) -> str:
        for index, item in enumerate(self.items):
            if item is current or (self.target_kinds and self.samples[index] is current):
                return f"item {index} ({self.paths[index]})"
        return "a batch of items" if self.prepared and self.prepared.batch > 1 else "an item"

    def _require_prepared(self, op: str) -> Prepared:
        if self.prepared is None:
            raise BadRequest(f"{op} before a successful prepare")
        return self.prepared


# ----- targets file (docs/protocol.md, "Targets") ----------------------------------------------
def _read_targets(path: str) -> dict[str, Any]:
    """The ``items`` table of a targets file; an unusable file is the user's input to fix."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as exc:
        raise WorkerError(BAD_INPUT, f"targets file {path}: {type(exc).__name__}: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != TARGETS_VERSION:
        raise WorkerError(BAD_INPUT, f"targets file {path}: expected an object with \"version\": {TARGETS_VERSION}")
    items = document.get("items")
    if not isinstance(items, dict):
        raise WorkerError(BAD_INPUT, f'targets file {path}: "items" must be an object keyed by image path')
    return items


def _numbers(value: Any, columns: int, what: str) -> np.ndarray:
    """A list of ``columns``-number rows as an N×columns float32 array (finite)."""
    if value is None:
        return np.zeros((0, columns), dtype=np.float32)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a list of [{columns} numbers]") from None
    if array.size == 0:
        return np.zeros((0, columns), dtype=np.float32)
    if array.ndim != 2 or array.shape[1] != columns or not np.isfinite(array).all():
        raise ValueError(f"{what} must be a list of [{columns} finite numbers]")
    return array.astype(np.float32)


def _entry_hw(entry: Any) -> list[int]:
    """The height and width a targets entry says its image has ([0, 0] when it says none: the
    entry is then refused by ``_parse_entry``)."""
    if not isinstance(entry, dict):
        return [0, 0]
    height, width = entry.get("height"), entry.get("width")
    return [height, width] if isinstance(height, int) and isinstance(width, int) else [0, 0]


def _parse_entry(entry: Any, kinds: tuple[str, ...], hw: list[int]) -> dict[str, np.ndarray]:
    """One item's targets as NumPy arrays (only the loaded kinds); ``ValueError`` names why the
    item cannot be used (the item is then skipped with that reason)."""
    if entry is None:
        raise ValueError("no targets for this item")
    if not isinstance(entry, dict):
        raise ValueError("its targets entry is not an object")
    height, width = hw
    size = (entry.get("width"), entry.get("height"))
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in size):
        raise ValueError("its targets entry has no positive integer width and height")
    if size != (width, height):
        raise ValueError(
            f"targets are for a {size[0]}x{size[1]} image (width x height) but the decoded image is {width}x{height}"
        )
    parsed: dict[str, np.ndarray] = {}
    if "boxes" in kinds:
        boxes = _numbers(entry.get("boxes"), 4, "boxes")
        labels = entry.get("labels", [] if len(boxes) == 0 else None)
        if not isinstance(labels, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in labels):
            raise ValueError("labels must be a list of ints, one per box")
        if len(labels) != len(boxes):
            raise ValueError(f"{len(labels)} labels for {len(boxes)} boxes")
        x0, y0, x1, y1 = boxes.T
        if not ((0 <= x0) & (x0 < x1) & (x1 <= width) & (0 <= y0) & (y0 < y1) & (y1 <= height)).all():
            raise ValueError(f"a box is empty or leaves the {width}x{height} image (xyxy pixels expected)")
        parsed["boxes"], parsed["labels"] = boxes, np.asarray(labels, dtype=np.int64)
    if "keypoints" in kinds:
        points = _numbers(entry.get("keypoints"), 2, "keypoints")
        x, y = points.T
        if not ((0 <= x) & (x < width) & (0 <= y) & (y < height)).all():
            raise ValueError(f"a keypoint lies outside the {width}x{height} image")
        parsed["keypoints"] = points
    if "mask" in kinds:
        parsed["mask"] = _decode_mask(entry.get("mask"), height, width)
    return parsed


def _decode_mask(mask: Any, height: int, width: int) -> np.ndarray:
    """The row-major run-length mask ``{"values", "runs"}`` as an H×W uint8 array."""
    if not isinstance(mask, dict):
        raise ValueError("no mask in this item's targets")
    values, runs = mask.get("values"), mask.get("runs")
    if not isinstance(values, list) or not isinstance(runs, list) or len(values) != len(runs):
        raise ValueError('the mask must be {"values": [...], "runs": [...]} of equal length')
    values_array = np.asarray(values)
    runs_array = np.asarray(runs)
    if values_array.size and (values_array.dtype.kind not in "iu" or values_array.min() < 0 or values_array.max() > 255):
        raise ValueError("mask values must be ints 0..255")
    if runs_array.size and (runs_array.dtype.kind not in "iu" or runs_array.min() < 0):
        raise ValueError("mask runs must be non-negative ints")
    total = int(runs_array.sum()) if runs_array.size else 0
    if total != height * width:
        raise ValueError(f"the mask runs cover {total} pixels, the image has {height}x{width} = {height * width}")
    return np.repeat(values_array.astype(np.uint8), runs_array.astype(np.int64)).reshape(height, width)


def _target_counts(arrays: dict[str, np.ndarray], kinds: tuple[str, ...]) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    if "boxes" in kinds:
        counts["boxes"] = int(len(arrays["boxes"]))
    if "keypoints" in kinds:
        counts["keypoints"] = int(len(arrays["keypoints"]))
    if "mask" in kinds:
        counts["mask_shape"] = [int(n) for n in arrays["mask"].shape]
    return counts
