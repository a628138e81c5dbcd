"""Every adapter × transform of the rgb and 9ch sets through the real protocol: load → prepare →
check → time. A transform the adapter's own tables claim (``@builds``, not in ``reasons``, nor
``rgb_only`` for 9 channels, nor ``device_reasons`` on the CPU) must prepare and meet the spec's
output rule (shape and dtype); only the rest may answer ``unsupported``, with a reason, so a
transform an adapter claims and then refuses is a failure. A library not importable here is skipped.
"""

from __future__ import annotations


import pytest
from conftest import require_library, LIBRARY_MODULES, load_registry, load_set, require, SharedWorkers, WorkerClient

pytestmark = pytest.mark.environment("library")

REGISTRY = load_registry()
SCENARIOS = {"rgb": 3, "9ch": 9}
CASES = [
    pytest.param(library, scenario, name, id=f"{library}-{scenario}-{name}")
    for library in LIBRARY_MODULES
    for scenario in SCENARIOS
    for name in load_set(scenario)
    if not (library == "pillow" and scenario == "9ch")
]
# (library, transform) → text of the library's own error on some of the synthetic sizes.
def loaded_worker(library: str, scenario: str, paths: list[str], pool: SharedWorkers) -> WorkerClient:
    """The library's long-lived worker holding the scenario's items, as the coordinator runs them."""
    require_library(library)
    client, loaded = pool.loaded(library, media="image", paths=paths, channels=SCENARIOS[scenario], device="cpu")
    assert loaded["count"] == len(paths), loaded
    return client


def declared_unsupported(library: str, scenario: str, name: str) -> str | None:
    """Why the adapter's own tables say ``library`` does not build ``name`` for the scenario on the
    CPU (``Adapter.build`` answers ``unsupported`` from the same tables), or ``None`` where they
    claim it: no ``@builds`` entry, a known reason, RGB only on 9 channels, a device exclusion."""
    from augbench_worker import adapters

    adapter = type(adapters.create(library))
    if name in adapter.reasons:
        return "in its reasons"
    if name not in adapter.builders:
        return "no @builds entry"
    if SCENARIOS[scenario] != 3 and name in adapter.rgb_only:
        return "RGB only"
    if (name, "cpu") in adapter.device_reasons:
        return "excluded on the CPU"
    return None


def channels_and_spatial(shape: list[int], layout: str) -> tuple[int, list[int]]:
    if layout == "CHW":
        return shape[0], shape[1:]
    return shape[-1], shape[:-1]  # HWC, and PIL reported after np.asarray


def assert_contract(name: str, checked: dict) -> None:
    spec = REGISTRY[name]
    layout = checked["layout"]
    in_channels, in_spatial = channels_and_spatial(checked["input_shape"], layout)
    out_channels, out_spatial = channels_and_spatial(checked["output_shape"], layout)
    if spec["rule"] == "same":
        assert checked["output_shape"] == checked["input_shape"], checked
    elif spec["rule"] == "fixed":
        assert out_spatial == spec["size"] and out_channels == in_channels, checked
    else:  # depends on the input: same rank and channel count, non-empty
        assert len(checked["output_shape"]) == len(checked["input_shape"]), checked
        assert out_channels == in_channels and min(out_spatial) > 0, checked
    expected_dtype = checked["input_dtype"] if spec["dtype"] == "same" else spec["dtype"]
    assert checked["output_dtype"] == expected_dtype, checked


@pytest.mark.parametrize(("library", "scenario", "name"), CASES)
def test_transform_contract(
    library: str, scenario: str, name: str, jpeg_paths: list[str], shared_workers: SharedWorkers
) -> None:
    client = loaded_worker(library, scenario, jpeg_paths, shared_workers)
    prepared = client.request("prepare", transform=name, params=REGISTRY[name]["params"], device="cpu")
    declared = declared_unsupported(library, scenario, name)
    if declared is not None:
        assert not prepared["ok"] and prepared["kind"] == "unsupported", (declared, prepared)
        assert len(prepared["error"]) > 10, "an unsupported transform must say why"
        return
    assert prepared["ok"], f"{library} builds {name} (its @builds table claims it) but answered {prepared}"
    assert prepared["regime"] == "per_image"
    checked = client.request("check")
    assert checked["ok"], checked
    assert_contract(name, checked)
    timed = client.request("time", start=1, count=len(jpeg_paths), loops=2)
    # Every size is timed, Kornia's RandomJigsaw included (its grid need not divide the image).
    assert timed["ok"], timed
    assert len(timed["ns"]) == 2 and all(isinstance(v, int) and v > 0 for v in timed["ns"])
    assert len(timed["cpu_ns"]) == 2 and all(isinstance(v, int) and v >= 0 for v in timed["cpu_ns"])


def test_pillow_refuses_multichannel(jpeg_paths: list[str], worker_factory) -> None:
    require("PIL")
    client = worker_factory("--library", "pillow")
    loaded = client.request("load", media="image", paths=jpeg_paths, channels=9, device="cpu")
    assert not loaded["ok"] and loaded["kind"] == "unsupported"
    assert "9 channels" in loaded["error"]


@pytest.mark.parametrize("library", list(LIBRARY_MODULES))
def test_hello_reports_versions_and_single_thread(library: str, shared_workers: SharedWorkers) -> None:
    require_library(library)
    hello = shared_workers.worker(library).request("hello")
    assert hello["ok"] and hello["library"] == library and hello["protocol"] == 1
    assert library in hello["versions"] and "numpy" in hello["versions"]
    assert hello["threads"]["AUGBENCH_THREAD_POLICY"] == "single"
    assert hello["threads"]["OMP_NUM_THREADS"] == "1"
    assert "cpu" in hello["devices"]


def test_suite_covers_every_set_entry() -> None:
    """The sets only name transforms that the registry defines."""
    for scenario in SCENARIOS:
        missing = [name for name in load_set(scenario) if name not in REGISTRY]
        assert not missing, (scenario, missing)
