"""Production cells inside each library environment that has torch: one catalog recipe measured
whole into a normalized float16 batch, a stage the library cannot build named in the refusal,
the shared per-sample ToTensor and batch tail, and malformed requests refused."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import has_library, require

pytestmark = pytest.mark.environment("library")

torch = require("torch")

from augbench_worker import adapters, decoders, pipeline, production  # noqa: E402 - needs torch, skipped above
from augbench_worker.protocol import BadRequest, Unsupported  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CATALOG_LIBRARIES = [name for name in ("albumentationsx", "torchvision", "kornia", "pillow") if has_library(name)]
CROP = {"op": "RandomCrop224", "params": {"height": 224, "width": 224}, "crop": True}


def request(stages: list[dict], items: int, **extra) -> dict:
    base = {"recipe": "r", "stages": stages, "stages_in_workers": len(stages), "dtype": "float16", "mean": MEAN, "std": STD, "size": [224, 224],
            "order": list(range(items)), "seed": 137, "batch_size": 2, "workers": 1, "prefetch": 2,
            "warmup_batches": 1, "measured_batches": 3}
    return {**base, **extra}


def loaded(library: str, paths: list[str]):
    adapter = adapters.create(library)
    adapter.load({"media": "image", "paths": paths, "channels": 3, "pipeline": True, "preload": False})
    return adapter


@pytest.mark.parametrize("library", CATALOG_LIBRARIES)
def test_a_recipe_becomes_a_normalized_float16_batch(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    stages = [CROP, {"op": "HorizontalFlip", "params": {}}]
    out = production.measure(adapter, request(stages, len(jpeg_paths)))
    assert out["batch"]["shape"] == [2, 3, 224, 224] and out["batch"]["dtype"] == "float16"
    assert len(out["ns"]) == 3 and out["ns"][0] > 0
    # The first batch and the 3 measured ones held to the contract's form, two to its values.
    assert out["batch"]["checked"] == {"form": 4, "values": ["first", "last"]}
    # The loader ran in its worker process, which reported its threads.
    assert [r["worker"] for r in out["worker_threads"]] == [0], out["worker_threads"]


# The reference's decoder for each library (specs/recipes/rgb.yaml, `decoders:`).
REFERENCE_DECODERS = {"albumentationsx": "simplejpeg", "kornia": "torchvision.io", "torchvision": "torchvision.io", "pillow": "pillow"}


@pytest.mark.parametrize("library", CATALOG_LIBRARIES)
def test_the_reference_decoder_reads_the_files_and_is_recorded(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    name = REFERENCE_DECODERS[library]
    stages = [CROP, {"op": "HorizontalFlip", "params": {}}]
    out = production.measure(adapter, request(stages, len(jpeg_paths), decoder=name))
    assert out["batch"]["shape"] == [2, 3, 224, 224], out["batch"]
    own = name == adapter.own_decoder
    assert out["decoder"] == (adapter.decoder if own else decoders.FORMS[name][1]), out["decoder"]
    if not own:  # the same pixels as the library's own decoder, in the same form
        ours, theirs = adapter.pipeline_read(jpeg_paths[0]), decoders.READERS[name](jpeg_paths[0])
        assert type(ours) is type(theirs) and tuple(ours.shape) == tuple(theirs.shape)
        assert np.abs(np.asarray(ours, dtype=np.int16) - np.asarray(theirs, dtype=np.int16)).mean() < 2.0


@pytest.mark.parametrize("library", CATALOG_LIBRARIES)
def test_a_decoder_the_library_cannot_read_is_a_bad_request(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    wrong = "torchvision.io" if adapter.decoded_form != "chw-uint8" else "simplejpeg"
    with pytest.raises(BadRequest, match=f"{wrong} gives"):
        production.measure(adapter, request([CROP], len(jpeg_paths), decoder=wrong))
    with pytest.raises(BadRequest, match='"decoder" must be one of'):
        production.measure(adapter, request([CROP], len(jpeg_paths), decoder="nvjpeg"))
    if library != "pillow":
        with pytest.raises(BadRequest, match="only Pillow's recipes read"):
            production.measure(adapter, request([CROP], len(jpeg_paths), decoder="pillow"))


def test_the_coordinator_asks_for_the_decoders_the_worker_has() -> None:
    """crates/augbench-core's ``WORKER_DECODERS`` (what `decoders: reference` may ask for) is this
    module's list: a decoder added on one side only fails here."""
    from pathlib import Path
    import re

    source = (Path(__file__).parents[2] / "crates/augbench-core/src/production/mod.rs").read_text()
    listed = re.search(r"WORKER_DECODERS: \[&str; \d+\] = \[([^\]]*)\]", source)
    assert listed, "WORKER_DECODERS not found"
    assert sorted(re.findall(r'"([^"]+)"', listed.group(1))) == sorted([*decoders.FORMS, "pillow"])


@pytest.mark.parametrize("library", CATALOG_LIBRARIES)
def test_a_stage_the_library_cannot_build_is_named(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    with pytest.raises(Unsupported, match=r"stage 2 \(NoSuchOp\)"):
        production.measure(adapter, request([CROP, {"op": "NoSuchOp", "params": {}}], len(jpeg_paths)))


@pytest.mark.parametrize("library", CATALOG_LIBRARIES)
def test_builds_answers_each_recipe_as_its_cell_would_with_nothing_loaded(library) -> None:
    adapter = adapters.create(library)
    flip = {"recipe": "flip", "stages": [CROP, {"op": "HorizontalFlip", "params": {}}], "stages_in_workers": 2}
    other = {"recipe": "other", "stages": [CROP, {"op": "NoSuchOp", "params": {}}], "stages_in_workers": 2}
    answer = production.builds(adapter, {"recipes": [flip, other]})["recipes"]
    assert answer[0] == {"recipe": "flip", "refused": None}
    assert answer[1]["recipe"] == "other" and answer[1]["refused"].startswith("stage 2 (NoSuchOp)"), answer
    with pytest.raises(BadRequest, match='"recipes" must be a list'):
        production.builds(adapter, {"recipes": ["flip"]})
    # A stage whose parameters break its build: the cell would fail, so it is not measured.
    broken = {"recipe": "broken", "stages": [CROP, {"op": "Resize", "params": {}}], "stages_in_workers": 2}
    assert production.builds(adapter, {"recipes": [broken]})["recipes"][0]["refused"]


def test_the_shared_tail_scales_normalizes_and_casts() -> None:
    hwc = np.full((224, 224, 3), 255, dtype=np.uint8)
    chw = production.chw_tensor(hwc)
    assert chw.shape == (3, 224, 224) and chw.dtype == torch.uint8
    batch = production.batch_tail(MEAN, STD, torch.float16)(torch.stack([chw, chw]))
    assert batch.dtype == torch.float16
    expected = (1.0 - MEAN[0]) / STD[0]
    assert abs(float(batch[0, 0, 0, 0]) - expected) < 1e-2
    floats = production.batch_tail(MEAN, STD, torch.float32)(torch.ones(1, 3, 2, 2))  # Kornia's [0, 1]
    assert abs(float(floats[0, 0, 0, 0]) - expected) < 1e-5


@pytest.mark.parametrize(("field", "value", "says"), [
    ("dtype", "bfloat16", '"dtype"'),
    ("order", [0, 99], '"order"'),
    ("stages", [], '"stages"'),
    ("size", [224], '"size"'),
    ("stages_in_workers", 0, '"stages_in_workers"'),
    ("stages_in_workers", 2, "at most the 1 stages"),
])
def test_malformed_requests_are_refused(field, value, says) -> None:
    with pytest.raises(BadRequest, match=says):
        production.cell_request({**request([CROP], 4), field: value}, 4)


# Stages that follow the crop in catalog recipes, with the catalog's parameters: on the GPU they
# run on the collated batch. The split itself is device-neutral, so it is tested here on the CPU.
BATCH_STAGES = [
    {"op": "Rotate", "params": {"angle_range": [-45, 45], "interpolation": "nearest", "mode": "constant", "fill": 0}},
    {"op": "Affine", "params": {"angle": 25.0, "shift": [20, 20], "scale": 2.0, "shear": [10.0, 15.0],
                                "interpolation": "bilinear", "mode": "constant", "fill": 0, "reference_size": 512}},
    {"op": "ColorJitter", "params": {"brightness": 0.5, "contrast": 1.5, "saturation": 1.5, "hue": 0.5}},
    {"op": "ChannelShuffle", "params": {}},
]
SPLIT_LIBRARIES = [name for name in ("torchvision", "kornia") if has_library(name)]


@pytest.mark.parametrize("library", SPLIT_LIBRARIES)
@pytest.mark.parametrize("stage", BATCH_STAGES, ids=lambda s: s["op"])
def test_stages_after_the_workers_run_on_the_collated_batch(library, stage, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    out = production.measure(adapter, request([CROP, stage], len(jpeg_paths), stages_in_workers=1))
    assert out["stages_in_workers"] == 1 and out["device"] == "cpu" and "gpu_memory" not in out
    assert out["batch"]["shape"] == [2, 3, 224, 224] and out["batch"]["dtype"] == "float16"
    assert out["loader"]["pin_memory"] is False  # pinned only for a copy to the GPU


@pytest.mark.parametrize("library", SPLIT_LIBRARIES)
def test_on_the_batch_every_image_draws_its_own_parameters(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    adapter.seed(137)
    on_batch = adapter.build_batch_chain([BATCH_STAGES[0]], 1)
    image = torch.randint(0, 256, (3, 224, 224), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)
    out = on_batch(torch.stack([image] * 4))
    assert out.shape[:2] == (4, 3)
    assert any(not torch.equal(out[0], out[i]) for i in range(1, 4)), "one rotation for the whole batch"


@pytest.mark.parametrize("library", [name for name in ("albumentationsx", "pillow") if has_library(name)])
def test_a_library_without_a_batch_stage_refuses_a_split(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    with pytest.raises(BadRequest, match="runs every stage in its loader workers"):
        production.measure(adapter, request([CROP, {"op": "HorizontalFlip", "params": {}}], len(jpeg_paths),
                                            stages_in_workers=1))


@pytest.mark.parametrize("library", SPLIT_LIBRARIES)
def test_a_stage_on_the_batch_the_library_cannot_build_is_named_by_its_place(library, jpeg_paths) -> None:
    adapter = loaded(library, jpeg_paths)
    with pytest.raises(Unsupported, match=r"stage 2 \(NoSuchOp\)"):
        production.measure(adapter, request([CROP, {"op": "NoSuchOp", "params": {}}], len(jpeg_paths),
                                            stages_in_workers=1))


def test_every_measured_batch_is_held_to_the_contract_form() -> None:
    req = production.cell_request(request([CROP], 4), 4)
    good = torch.zeros(2, 3, 224, 224, dtype=torch.float16)
    batches = iter([good, good[:, :, :200], good])  # the loader's output, a wrong one second
    session = pipeline.Session(pipeline.Recipe("r", lambda x: x, None, "none", False), None, batches, 2, "cpu", None, 0)
    with pytest.raises(production.WorkerError, match=r"measured batch 2 is .*200.*expected float16 \[2, 3, 224, 224\]"):
        production._timed(session, req)


def test_the_contract_names_a_batch_off_its_device_or_not_normalized() -> None:
    req = production.cell_request(request([CROP], 4), 4)
    good = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(3)).to(torch.float16) * 0.1
    assert production.check_batch(good, req)["device"] == "cpu"
    with pytest.raises(production.WorkerError, match="on meta, expected cpu"):
        production.check_batch(good.to("meta"), req)
    with pytest.raises(production.WorkerError, match="not normalized"):
        production.check_batch(good.abs() + 1.0, req)
