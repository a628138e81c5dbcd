"""The parameter guard: a transform built with an argument the library ignores fails with a
``contract`` error quoting the library; other warnings are recorded with the row, never printed.
Library cases run in whichever environment has the library (skipped elsewhere)."""

from __future__ import annotations

import textwrap
import warnings

import pytest
from conftest import load_registry, load_set, require, WorkerClient
from test_adapters import require_library

from augbench_worker import guard
from augbench_worker.protocol import CONTRACT, WorkerError

pytestmark = pytest.mark.environment("library")

ALBUMENTATIONSX_OLD_NAME = "UserWarning: Argument(s) 'blur_limit' are not valid for transform GaussianBlur"


@pytest.mark.parametrize(
    "text",
    [
        ALBUMENTATIONSX_OLD_NAME,
        "UserWarning: blur_range: Non-zero kernel sizes must be odd. Range (4, 4) automatically adjusted to (5, 5).",
        "UserWarning: The parameter 'fill' is ignored when border_mode is reflect",
        "UserWarning: unknown argument 'sigmaa'",
        "FutureWarning: The default value of the antialias parameter will change from None to True",
    ],
)
def test_warnings_that_change_the_work_are_fatal(text: str) -> None:
    assert guard.ignores_a_parameter(text)
    with pytest.raises(WorkerError) as err:
        guard.verdict("GaussianBlur", [text])
    assert err.value.kind == CONTRACT and text in err.value.message


@pytest.mark.parametrize(
    "text",
    [
        "UserWarning: The image is already gray.",
        "UserWarning: The given NumPy array is not writable, and PyTorch does not support non-writable tensors.",
        "DeprecationWarning: module 'sre_constants' is deprecated",
    ],
)
def test_other_warnings_are_recorded(text: str) -> None:
    assert not guard.ignores_a_parameter(text)
    assert guard.verdict("Resize", [text]) == [text]


def test_building_records_benign_warnings_and_prints_nothing(capsys) -> None:
    with guard.building("Blur") as noted:
        warnings.warn("a harmless note", UserWarning, stacklevel=1)
        warnings.warn("a harmless note", UserWarning, stacklevel=1)
    assert noted == ["UserWarning: a harmless note"]
    assert capsys.readouterr() == ("", "")


def test_an_unknown_keyword_is_a_contract_error() -> None:
    def build(radius: float) -> float:
        return radius

    with pytest.raises(WorkerError) as err, guard.building("GaussianBlur"):
        build(radius=2, sigma=1)  # type: ignore[call-arg]
    assert err.value.kind == CONTRACT and "unexpected keyword argument 'sigma'" in err.value.message


def test_other_type_errors_stay_exceptions() -> None:
    with pytest.raises(TypeError), guard.building("Invert"):
        _ = 1 + "x"  # type: ignore[operator]


# ----- the real libraries ------------------------------------------------------------------


def _loaded(library: str):
    """An adapter of ``library`` in this process, with one small image loaded."""
    import numpy as np

    from augbench_worker import adapters

    adapter = adapters.create(library)
    image = np.zeros((32, 40, 3), dtype=np.uint8)
    adapter.items, adapter.paths = [image], ["in memory"]
    return adapter


def _albumentationsx():
    """AlbumentationsX's module (``albumentations``): a failure where the run promises
    AlbumentationsX, else a skip where it is missing or another distribution has the module."""
    require_library("albumentationsx")
    import albumentations

    return albumentations


def test_albumentationsx_old_argument_name_fails_prepare() -> None:
    A = _albumentationsx()
    adapter = _loaded("albumentationsx")
    from augbench_worker.adapters.albumentationsx import _call

    # The name AlbumentationsX 1.x used; 2.x warns and builds GaussianBlur with its defaults.
    adapter.builders = {**adapter.builders, "GaussianBlur": lambda p: _call(A.GaussianBlur(blur_limit=(3, 7), p=1))}
    with pytest.raises(WorkerError) as err:
        adapter.prepare({"transform": "GaussianBlur", "params": {}})
    assert err.value.kind == CONTRACT
    assert ALBUMENTATIONSX_OLD_NAME in err.value.message
    assert adapter.prepared is None, "a refused transform must not stay prepared"


def test_albumentationsx_benign_warning_is_recorded_in_the_reply() -> None:
    A = _albumentationsx()
    adapter = _loaded("albumentationsx")
    from augbench_worker.adapters.albumentationsx import _call

    def noisy(p: dict):
        warnings.warn("built in a hurry", UserWarning, stacklevel=1)
        return _call(A.HorizontalFlip(p=1))

    adapter.builders = {**adapter.builders, "HorizontalFlip": noisy}
    reply = adapter.prepare({"transform": "HorizontalFlip", "params": {}})
    assert reply["warnings"] == ["UserWarning: built in a hurry"]
    assert adapter.prepared is not None


def _albumentations():
    """Albumentations 2.0.8's module: a failure where the run promises it, else a skip where it
    is missing or another distribution (AlbumentationsX) has the module."""
    require_library("albumentations")
    import albumentations

    return albumentations


def test_albumentations_renamed_argument_fails_prepare() -> None:
    A = _albumentations()
    adapter = _loaded("albumentations")
    from augbench_worker.adapters.albumentations import _call

    # AlbumentationsX's name; 2.0.8 warns and builds GaussianBlur with its defaults.
    adapter.builders = {**adapter.builders, "GaussianBlur": lambda p: _call(A.GaussianBlur(blur_range=(3, 3), p=1))}
    with pytest.raises(WorkerError) as err:
        adapter.prepare({"transform": "GaussianBlur", "params": {}})
    assert err.value.kind == CONTRACT and "'blur_range'" in err.value.message
    assert adapter.prepared is None


SET_TRANSFORMS = sorted({name for scenario in ("rgb", "9ch", "video") for name in load_set(scenario)})


@pytest.mark.parametrize("name", SET_TRANSFORMS)
def test_albumentations_takes_every_canonical_argument(name: str) -> None:
    """The proof the issue asks for: 2.0.8 names differ from AlbumentationsX's, so every transform
    of every set is built with its canonical parameters under the guard; the only allowed refusal
    is ``unsupported`` with its reason, never a dropped or renamed argument."""
    _albumentations()
    adapter = _loaded("albumentations")
    try:
        reply = adapter.prepare({"transform": name, "params": load_registry()[name]["params"]})
    except WorkerError as err:
        assert err.kind == "unsupported" and len(err.message) > 10, err.message
        return
    assert not reply.get("warnings"), reply
    adapter.prepared.run(adapter.items[0])


def test_pillow_unknown_keyword_is_a_contract_error() -> None:
    require("PIL")
    from PIL import ImageFilter

    with pytest.raises(WorkerError) as err, guard.building("GaussianBlur"):
        ImageFilter.GaussianBlur(radius=2, sigma=1)
    assert err.value.kind == CONTRACT and "sigma" in err.value.message


def test_torchvision_unknown_keyword_is_a_contract_error() -> None:
    require("torchvision")
    from torchvision.transforms import v2

    with pytest.raises(WorkerError) as err, guard.building("GaussianBlur"):
        v2.GaussianBlur(kernel_size=3, blur_limit=(3, 7))
    assert err.value.kind == CONTRACT and "blur_limit" in err.value.message


def test_kornia_unknown_keyword_is_a_contract_error() -> None:
    require("kornia")
    import kornia.augmentation as K

    with pytest.raises(WorkerError) as err, guard.building("GaussianBlur"):
        K.RandomGaussianBlur((3, 3), (1.0, 1.0), p=1, blur_limit=(3, 7))
    assert err.value.kind == CONTRACT and "blur_limit" in err.value.message


def _spec(tmp_path, body: str) -> str:
    path = tmp_path / "spec.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_spec_file_with_an_old_argument_name_is_refused_through_the_protocol(tmp_path, jpeg_paths) -> None:
    _albumentationsx()
    spec = _spec(
        tmp_path,
        """\
        import albumentations as A
        LIBRARY = "albumentationsx"
        def __call__(transform, image):
            return transform(image=image)["image"]
        TRANSFORMS = [
            {"name": "Blur", "transform": A.GaussianBlur(blur_limit=(3, 7), p=1)},
        ]
        """,
    )
    client = WorkerClient("--spec", spec)
    try:
        reply = client.request("load", media="image", paths=jpeg_paths, channels=3, device="cpu")
        assert not reply["ok"] and reply["kind"] == "contract", reply
        assert f"spec file {spec} line 6" in reply["error"] and "'blur_limit'" in reply["error"], reply
        assert "blur_limit" not in client.log(), "the warning must not be printed"
    finally:
        client.close()


def test_spec_file_warning_is_recorded_in_the_prepare_reply(tmp_path, jpeg_paths) -> None:
    _albumentationsx()
    spec = _spec(
        tmp_path,
        """\
        import warnings
        import albumentations as A
        LIBRARY = "albumentationsx"
        def __call__(transform, image):
            return transform(image=image)["image"]
        warnings.warn("this spec is an example", UserWarning)
        TRANSFORMS = [{"name": "Flip", "transform": A.HorizontalFlip(p=1)}]
        """,
    )
    client = WorkerClient("--spec", spec)
    try:
        assert client.request("load", media="image", paths=jpeg_paths, channels=3, device="cpu")["ok"]
        reply = client.request("prepare", transform="Flip", params={}, device="cpu")
        assert reply["ok"] and reply["warnings"] == ["UserWarning: this spec is an example"], reply
    finally:
        client.close()
