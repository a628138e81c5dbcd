"""DALI's pipeline backend, in the dali environment, with the real DALI on this machine's CPU: the
protocol (hello, refusals of micro, video and cuda without CUDA), every transform of the pipeline
set built from DALI operators or refused with a reason, the contract, the shared sample order,
seeding, the normalize arithmetic, the thread report, the memory scope, a file DALI cannot
decode named, and the parameter guard on an argument DALI does not define.
"""

from __future__ import annotations

import pytest

from conftest import WorkerClient, load_registry, load_set, require

pytestmark = pytest.mark.environment("dali")

dali = require("nvidia.dali")
np = require("numpy")

from augbench_worker import guard  # noqa: E402 - after the skip-or-fail import of DALI
from augbench_worker import pipeline_common as common  # noqa: E402
from augbench_worker.adapters import dali as dali_adapter  # noqa: E402
from augbench_worker import dali_pipeline  # noqa: E402
from augbench_worker.protocol import CONTRACT, UNSUPPORTED, WorkerError  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CROP = {"name": "RandomCrop224", "params": {"height": 224, "width": 224}}
REGISTRY = load_registry()
CROPS = {"RandomCrop224", "RandomResizedCrop", "CenterCrop224"}


def _prepare(name: str, ceiling: bool = False) -> dict:
    spec = REGISTRY[name]
    return {
        "transform": name,
        "params": spec.get("params", {}),
        "crop": None if name in CROPS else CROP,
        "mean": MEAN,
        "std": STD,
        "seed": 0,
        "preflight_items": 1,
        "ceiling": ceiling,
    }


def _start(count: int, size: list[int] | None, **extra) -> dict:
    return {"workers": 2, "batch_size": 2, "prefetch": 2, "warm_batches": 3, "order": list(range(count)), "seed": 0, "size": size, **extra}


def _size(name: str) -> list[int] | None:
    spec = REGISTRY[name]
    return spec["size"] if spec["rule"] == "fixed" else [224, 224] if spec["rule"] == "same" else None


@pytest.fixture
def worker(worker_factory):
    client = worker_factory("--library", "dali")
    hello = client.request("hello")
    assert hello["ok"], hello
    return client


@pytest.fixture
def ops(jpeg_paths):
    adapter = dali_adapter.DaliAdapter()
    adapter.load({"paths": jpeg_paths, "pipeline": True, "preload": False})
    return dali_pipeline.DaliPipelineOps(adapter)


def test_hello_reports_dali_its_cpu_decoder_and_devices(worker) -> None:
    hello = worker.request("hello")
    assert hello["library"] == "dali"
    assert hello["versions"]["dali"] == dali.__version__
    assert "nvimgcodec" in hello["versions"]
    assert hello["decoder"].startswith("DALI fn.decoders.image, device cpu (nvImageCodec ")
    assert "libjpeg-turbo" in hello["decoder"]
    assert hello["device_decoders"]["cuda"] == dali_adapter.MIXED_DECODER
    assert "cpu" in hello["devices"]


def test_micro_is_refused_with_the_reason(worker, jpeg_paths) -> None:
    reply = worker.request("load", paths=jpeg_paths)
    assert reply["ok"] is False and reply["kind"] == UNSUPPORTED
    assert "only as a pipeline backend" in reply["error"]


def test_video_is_refused_with_the_reason(worker, jpeg_paths) -> None:
    reply = worker.request("load", paths=jpeg_paths, media="video", pipeline=True)
    assert reply["ok"] is False and reply["kind"] == UNSUPPORTED
    assert "no video rows" in reply["error"]


def test_cuda_without_a_cuda_device_is_refused(worker, jpeg_paths) -> None:
    if dali_adapter.cuda_devices() > 0:
        pytest.skip("this machine has a CUDA device (scripts/gpu_check.sh runs the cuda rows)")
    reply = worker.request("load", paths=jpeg_paths, pipeline=True, preload=False, device="cuda")
    assert reply["ok"] is False and reply["kind"] == UNSUPPORTED
    assert "mixed" in reply["error"] and "no CUDA device" in reply["error"]


def test_the_ceiling_and_a_row_run_through_the_protocol(worker, jpeg_paths) -> None:
    assert worker.request("load", paths=jpeg_paths, pipeline=True, preload=False)["count"] == len(jpeg_paths)
    for name, ceiling in (("DecodeOnly", True), ("HorizontalFlip", False)):
        request = _prepare("HorizontalFlip", ceiling) | {"transform": name}
        prepared = worker.request("pipeline_prepare", **request)
        assert prepared["ok"], prepared
        assert prepared["split"] is False and prepared["transform_device"] == "cpu"
        started = worker.request("pipeline_start", **_start(len(jpeg_paths), [224, 224]))
        assert started["ok"], started
        assert started["batch"]["shape"] == [2, 3, 224, 224] and started["batch"]["dtype"] == "float32"
        assert started["time_to_first_batch"] > 0
        (threads,) = started["worker_threads"]
        assert threads["dali.num_threads"] == "2" and threads["dali.decode_device"] == "cpu"
        assert threads["dali.device_id"] == "None" and threads["dali.prefetch_queue_depth"] == "2"
        window = worker.request("pipeline_run", min_batches=4, min_time=0.0)
        assert window["ok"] and len(window["ns"]) >= 4 and window["ns"] == sorted(window["ns"])
        assert window["items"] == 2 * len(window["ns"])
    assert worker.request("pipeline_stop")["stopped"] is True


@pytest.mark.parametrize("name", load_set("rgb_pipeline"))
def test_every_pipeline_set_transform_is_built_by_dali_or_refused_with_a_reason(name: str, ops) -> None:
    try:
        ops.prepare(_prepare(name))
    except WorkerError as err:
        assert err.kind == UNSUPPORTED, f"{name}: {err.kind}: {err.message}"
        assert err.message and "dali" in err.message.lower(), err.message
        return
    started = ops.start(_start(len(ops.adapter.items), _size(name)))
    shape = started["batch"]["shape"]
    assert shape[:2] == [2, 3], shape
    ops.stop()


def test_dali_supports_the_transforms_it_has_operators_for(ops) -> None:
    supported = []
    for name in load_set("rgb_pipeline"):
        try:
            ops.prepare(_prepare(name))
            supported.append(name)
        except WorkerError:
            pass
    expected = set(dali_adapter.BUILDERS) - {"MedianBlur"}  # GPU only: refused on the CPU
    assert set(supported) == expected & set(load_set("rgb_pipeline"))


def test_workers_zero_and_the_gpu_split_are_refused(ops) -> None:
    ops.prepare(_prepare("HorizontalFlip"))
    with pytest.raises(WorkerError, match="num_threads >= 1") as err:
        ops.start(_start(3, [224, 224], workers=0))
    assert err.value.kind == UNSUPPORTED
    with pytest.raises(WorkerError, match="no GPU split"):
        ops.prepare(_prepare("HorizontalFlip") | {"split": True})


def _batches(adapter, name: str, order: list[int], count: int, seed: int = 0) -> list:
    ops = dali_pipeline.DaliPipelineOps(adapter)
    ops.prepare(_prepare(name))
    built = ops.built
    pipe = dali_pipeline.build_pipeline(adapter, built, order, 1, 1, 1, seed)
    pipe.build()
    session = dali_pipeline.Session(built, pipe, 1, "cpu", {}, [], 1)
    return [dali_pipeline.deliver(session)[0] for _ in range(count)]


@pytest.mark.parametrize("preload", [False, True])
def test_the_reader_follows_the_shared_order_without_end(jpeg_paths, preload: bool) -> None:
    adapter = dali_adapter.DaliAdapter()
    adapter.load({"paths": jpeg_paths, "pipeline": True, "preload": preload})
    plain = _batches(adapter, "CenterCrop224", [0, 1, 2], 3)
    turned = _batches(adapter, "CenterCrop224", [2, 0, 1], 5)  # past the end: 2, 0, 1, 2, 0
    for got, index in zip(turned, [2, 0, 1, 2, 0]):
        np.testing.assert_array_equal(got, plain[index])


def test_normalize_is_the_imagenet_arithmetic_in_chw(jpeg_paths) -> None:
    adapter = dali_adapter.DaliAdapter()
    adapter.load({"paths": jpeg_paths, "pipeline": True, "preload": False})
    (got,) = _batches(adapter, "CenterCrop224", [0], 1)
    image = adapter.decode(jpeg_paths[0]).astype(np.float32)
    top, left = round((image.shape[0] - 224) / 2), round((image.shape[1] - 224) / 2)
    crop = image[top : top + 224, left : left + 224]
    want = ((crop - np.array(MEAN) * 255) / (np.array(STD) * 255)).transpose(2, 0, 1)
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_draws_differ_per_sample_and_repeat_with_the_seed(jpeg_paths) -> None:
    adapter = dali_adapter.DaliAdapter()
    adapter.load({"paths": jpeg_paths, "pipeline": True, "preload": False})
    first = _batches(adapter, "RandomCrop224", [0, 0, 0, 0], 4, seed=7)
    again = _batches(adapter, "RandomCrop224", [0, 0, 0, 0], 4, seed=7)
    other = _batches(adapter, "RandomCrop224", [0, 0, 0, 0], 4, seed=8)
    assert any(not np.array_equal(first[0], crop) for crop in first[1:]), "one crop window for every sample"
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(first, other)), "the seed changes nothing"


def test_an_unnormalized_batch_breaks_the_contract() -> None:
    settings = common.Start(0, 2, 1, 0, [0], 0, [224, 224], None)
    raw = np.full((2, 3, 224, 224), 110.0, dtype=np.float32)
    with pytest.raises(WorkerError, match="not normalized") as err:
        dali_pipeline.check_first(raw, settings)
    assert err.value.kind == CONTRACT
    with pytest.raises(WorkerError, match=r"a numpy array \[2, 224, 224, 3\] uint8"):
        dali_pipeline.check_first(np.zeros((2, 224, 224, 3), dtype=np.uint8), settings)


def test_the_memory_scope_preloads_with_dalis_decoder(jpeg_paths, worker) -> None:
    loaded = worker.request("load", paths=jpeg_paths, pipeline=True, preload=True)
    assert loaded["ok"] and loaded["dtype"] == "uint8" and loaded["shape"][2] == 3
    assert worker.request("pipeline_prepare", **_prepare("HorizontalFlip"))["ok"]
    started = worker.request("pipeline_start", **_start(len(jpeg_paths), [224, 224]))
    assert started["ok"] and started["loader"]["reader"].startswith("fn.external_source")


def test_a_file_dali_cannot_decode_is_named(jpeg_paths, tmp_path, worker) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    paths = [*jpeg_paths, str(broken)]
    assert worker.request("load", paths=paths, pipeline=True, preload=False)["count"] == len(paths)
    assert worker.request("pipeline_prepare", **_prepare("HorizontalFlip"))["ok"]
    started = worker.request("pipeline_start", **_start(len(paths), [224, 224]))
    assert started["ok"] is False and started["kind"] == "exception"
    assert f"could not decode {broken}" in started["error"]
    skipped = worker.request("load", paths=paths, pipeline=True, preload=True)["skipped"]
    assert [s["path"] for s in skipped] == [str(broken)] and "DALI could not decode" in skipped[0]["reason"]


def test_an_argument_dali_does_not_define_fails_the_guard(ops, monkeypatch) -> None:
    fn = dali_adapter.fn
    monkeypatch.setitem(dali_adapter.BUILDERS, "HorizontalFlip", lambda p: lambda x: fn.flip(x, horizontl=1))
    with pytest.raises(WorkerError, match='refused a parameter: KeyError: Argument "horizontl" is not defined') as err:
        ops.prepare(_prepare("HorizontalFlip"))
    assert err.value.kind == CONTRACT


def test_the_guard_leaves_other_key_errors_alone() -> None:
    with pytest.raises(KeyError):
        with guard.building("X"):
            raise KeyError("height")


def test_a_worker_client_for_dali_shuts_down_cleanly(jpeg_paths) -> None:
    client = WorkerClient("--library", "dali")
    assert client.request("load", paths=jpeg_paths, pipeline=True, preload=False)["ok"]
    assert client.close() == 0


def _operator(name: str, params: dict, image):
    """One DALI operator of the adapter applied to one HWC uint8 image (no recipe around it)."""
    build = dali_adapter.BUILDERS[name](params)
    pipe = dali_adapter.Pipeline(batch_size=1, num_threads=1, device_id=None, seed=0)
    with pipe:
        images = dali_adapter.fn.external_source(source=lambda: [image], batch=True, layout="HWC", dtype=dali_adapter.types.UINT8)
        pipe.set_outputs(build(images))
    pipe.build()
    (out,) = pipe.run()
    return np.array(out[0])


# The equivalence check's odd size (docs/equivalence.md): centre and rounding conventions show.
ODD = (251, 333)


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("HorizontalFlip", {}, lambda a: a[:, ::-1]),
        ("VerticalFlip", {}, lambda a: a[::-1]),
        ("Transpose", {}, lambda a: a.transpose(1, 0, 2)),
        *[("RandomRotate90", {"times": [k, k]}, lambda a, k=k: np.rot90(a, k)) for k in range(4)],
        # DALI puts a centre crop's start half a pixel up, rounded up: 13.5 → 14 rows, 54.5 → 55
        # columns on 251×333, where the others floor it (docs/equivalence.md).
        ("CenterCrop224", {"height": 224, "width": 224}, lambda a: a[14:238, 55:279]),
    ],
)
def test_deterministic_operators_match_the_exact_result(name: str, params: dict, expected) -> None:
    image = np.random.default_rng(0).integers(0, 256, (*ODD, 3), dtype=np.uint8)
    np.testing.assert_array_equal(_operator(name, params, image), expected(image))


def test_grayscale_is_rec601_luma_within_rounding() -> None:
    image = np.random.default_rng(1).integers(0, 256, (*ODD, 3), dtype=np.uint8)
    out = _operator("Grayscale", {"num_output_channels": 3}, image).astype(np.float64)
    luma = image @ np.array([0.299, 0.587, 0.114])
    assert np.abs(out - luma[..., None]).max() <= 1.0
