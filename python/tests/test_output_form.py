"""The check's output form (measured once, outside timing): whether the library's own output was
already contiguous, and the share of apply + force spent forcing it. A library returning a view
(AlbumentationsX flips and crops, torchvision crops) says so and shows a forcing share; one that
returns a complete array says that too. Batched and clip regimes report the same fields.
"""

from __future__ import annotations

import pytest
from conftest import SharedWorkers, WorkerClient, load_registry
from test_adapters import require_library
from test_video import FRAMES, clip_dirs  # noqa: F401 - clip_dirs is a fixture

pytestmark = pytest.mark.environment("library")

REGISTRY = load_registry()


def checked(client: WorkerClient, name: str, **prepare: object) -> dict:
    prepared = client.request("prepare", transform=name, params=REGISTRY[name]["params"], device="cpu", **prepare)
    assert prepared["ok"], prepared
    response = client.request("check")
    assert response["ok"], response
    return response


def image_worker(library: str, paths: list[str], pool: SharedWorkers) -> WorkerClient:
    require_library(library)
    return pool.loaded(library, media="image", paths=paths, channels=3, device="cpu")[0]


def assert_form(response: dict, contiguous: bool) -> None:
    assert response["output_contiguous"] is contiguous, response
    assert 0.0 <= response["force_share"] <= 1.0, response
    if not contiguous:  # a view: forcing it is a copy, which takes measurable time
        assert response["force_share"] > 0.0, response


# (library, transform, whether the library's own output is contiguous in the locked versions)
CASES = [
    ("albumentationsx", "HorizontalFlip", False),  # a numpy view with a negative stride
    ("albumentationsx", "CenterCrop224", False),  # a slice of the input
    ("albumentationsx", "GaussianBlur", True),  # OpenCV writes a new array
    ("torchvision", "CenterCrop224", False),  # a slice of the input tensor
    ("pillow", "HorizontalFlip", True),  # a loaded image; force is the conversion to numpy
]


@pytest.mark.parametrize(("library", "name", "contiguous"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_check_reports_output_form(library: str, name: str, contiguous: bool, jpeg_paths, shared_workers: SharedWorkers) -> None:
    assert_form(checked(image_worker(library, jpeg_paths, shared_workers), name), contiguous)


def test_a_view_spends_most_of_its_time_being_forced(jpeg_paths, shared_workers: SharedWorkers) -> None:
    """AlbumentationsX HorizontalFlip only flips strides; the copy is nearly all of the work."""
    response = checked(image_worker("albumentationsx", jpeg_paths, shared_workers), "HorizontalFlip")
    assert response["force_share"] > 0.5, response


def test_the_batched_regime_reports_output_form(jpeg_paths, shared_workers: SharedWorkers) -> None:
    response = checked(image_worker("kornia", jpeg_paths, shared_workers), "HorizontalFlip", batch=2)
    assert response["batch"] == 2, response
    assert isinstance(response["output_contiguous"], bool), response
    assert 0.0 <= response["force_share"] <= 1.0, response


def test_clips_report_output_form(clip_dirs: list[str], shared_workers: SharedWorkers) -> None:  # noqa: F811 - the fixture
    require_library("albumentationsx")
    client, _ = shared_workers.loaded(
        "albumentationsx", media="video", paths=clip_dirs, channels=3, clip_length=FRAMES, device="cpu"
    )
    assert_form(checked(client, "HorizontalFlip"), False)


def test_kornia_jigsaw_takes_any_size_and_leaves_the_remainder_in_place():
    """Kornia refuses sizes the grid does not divide (375x500 with 4x4); the adapter cuts the
    pieces from the largest divisible top-left region and keeps the input's shape."""
    from conftest import has_library

    if not has_library("kornia"):
        pytest.skip("Kornia's adapter is tested in its own environment")
    torch = pytest.importorskip("torch")
    from augbench_worker.adapters import kornia as adapter

    jigsaw = adapter._jigsaw({"grid": [4, 4]})
    torch.manual_seed(0)
    image = torch.rand(3, 375, 500)
    out = jigsaw(image)
    assert out.shape == image.shape
    assert torch.equal(out[:, 372:, :], image[:, 372:, :]), "the last 3 rows stay in place"
    assert not torch.equal(out[:, :372, :], image[:, :372, :]), "the divisible region is shuffled"
    batch = jigsaw(torch.rand(2, 3, 375, 500))
    assert batch.shape == (2, 3, 375, 500)
