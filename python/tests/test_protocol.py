"""Protocol behaviour of a real worker process: the guarded stdout, malformed and out-of-order
requests, failure kinds, custom spec files (valid, broken, raising), thread policy, devices and
Kornia's batched regime. Library-specific cases skip when the library is not importable.
"""

from __future__ import annotations

import textwrap

import pytest

from conftest import first_importable_library, has_library, importable, LIBRARY_MODULES, require, require_library, SharedWorkers

pytestmark = pytest.mark.environment("library")

from augbench_worker.adapters import LIBRARIES

IDENTITY_SPEC = """\
import os
LIBRARY = "{library}"
print("noise from print at import")
os.write(1, b"raw noise on fd 1 at import\\n")

def __call__(transform, image):
    print("noise from print in __call__")
    os.write(1, b"raw noise on fd 1 in __call__\\n")
    return transform(image)

TRANSFORMS = [{{"name": "Identity", "transform": lambda image: image}}]
"""

RAISING_SPEC = """\
LIBRARY = "{library}"
CALLS = []

def __call__(transform, image):
    return transform(image)

def explode_on_second(image):
    CALLS.append(1)
    if len(CALLS) % 2 == 0:
        raise ValueError("synthetic failure on this item")
    return image

TRANSFORMS = [{{"name": "Flaky", "transform": explode_on_second}}]
"""


def write_spec(tmp_path, text: str, name: str = "my_spec.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def load_images(client, paths, channels=3, device="cpu"):
    return client.request("load", media="image", paths=paths, channels=channels, device=device)


def test_library_prints_do_not_corrupt_the_stream(tmp_path, jpeg_paths, worker_factory) -> None:
    library = first_importable_library()
    client = worker_factory("--spec", write_spec(tmp_path, IDENTITY_SPEC.format(library=library)))
    hello = client.request("hello")
    assert hello["ok"] and hello["library"] == library, hello
    assert hello["spec"]["transforms"] == ["Identity"]
    assert load_images(client, jpeg_paths)["ok"]
    assert client.request("prepare", transform="Identity", params={})["ok"]
    checked = client.request("check")
    assert checked["ok"] and checked["output_shape"] == checked["input_shape"], checked
    timed = client.request("time", start=0, count=3, loops=2)
    assert timed["ok"] and len(timed["ns"]) == 2, timed
    assert client.request("shutdown") == {"ok": True}
    assert client.proc.wait(timeout=60) == 0


@pytest.mark.generic
def test_prints_land_in_the_log(tmp_path, jpeg_paths, worker_factory) -> None:
    library = first_importable_library()
    client = worker_factory("--spec", write_spec(tmp_path, IDENTITY_SPEC.format(library=library)))
    assert client.request("hello")["ok"]
    assert load_images(client, jpeg_paths)["ok"]
    assert client.request("prepare", transform="Identity", params={})["ok"]
    assert client.request("check")["ok"]
    log = client.log()
    for text in (
        "noise from print at import",
        "raw noise on fd 1 at import",
        "noise from print in __call__",
        "raw noise on fd 1 in __call__",
    ):
        assert text in log


@pytest.mark.generic
def test_malformed_and_unknown_requests_keep_the_worker_alive(worker_factory) -> None:
    client = worker_factory("--library", first_importable_library())
    for raw, fragment in [
        ("this is not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"no_op": 1}', '"op"'),
        ('{"op": "dance"}', "unknown op 'dance'"),
    ]:
        response = client.send_raw(raw)
        assert response["ok"] is False and response["kind"] == "bad_request", response
        assert fragment in response["error"]
        assert set(response) == {"ok", "error", "kind", "detail"}
    assert client.request("hello")["ok"]
    assert client.close() == 0


@pytest.mark.generic
def test_out_of_order_and_bad_fields(jpeg_paths, worker_factory) -> None:
    client = worker_factory("--library", first_importable_library())
    assert client.request("prepare", transform="HorizontalFlip", params={})["kind"] == "bad_request"
    assert client.request("check")["kind"] == "bad_request"
    assert client.request("time", start=0, count=1, loops=1)["kind"] == "bad_request"
    assert load_images(client, jpeg_paths, channels=4)["kind"] == "bad_request"
    assert client.request("load", media="image", paths=[], channels=3)["kind"] == "bad_request"
    assert load_images(client, jpeg_paths)["ok"]
    unknown = client.request("prepare", transform="NoSuchTransform", params={})
    assert unknown["kind"] == "unsupported" and "NoSuchTransform" in unknown["error"]
    assert client.request("prepare", transform="HorizontalFlip", params={})["ok"]
    assert client.request("time", start=0, count=0, loops=1)["kind"] == "bad_request"
    assert client.request("time", start=0, count=2, loops=True)["kind"] == "bad_request"


@pytest.mark.generic
def test_undecodable_files_are_skipped_and_named(tmp_path, jpeg_paths, worker_factory) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    client = worker_factory("--library", first_importable_library())
    loaded = load_images(client, [jpeg_paths[0], str(broken)])
    assert loaded["ok"] and loaded["count"] == 1, loaded
    assert loaded["skipped"][0]["path"] == str(broken) and loaded["skipped"][0]["reason"]
    nothing = load_images(client, [str(broken)])
    assert nothing["kind"] == "bad_input" and str(broken) in nothing["error"]


@pytest.mark.generic
def test_transform_raising_on_some_images(tmp_path, jpeg_paths, worker_factory) -> None:
    library = first_importable_library()
    client = worker_factory("--spec", write_spec(tmp_path, RAISING_SPEC.format(library=library)))
    assert load_images(client, jpeg_paths)["ok"]
    assert client.request("prepare", transform="Flaky", params={})["ok"]
    timed = client.request("time", start=0, count=3, loops=1)
    assert timed["ok"] is False and timed["kind"] == "exception", timed
    assert "synthetic failure on this item" in timed["error"]
    assert f"item 1 ({jpeg_paths[1]})" in timed["error"]
    assert "Traceback" in timed["detail"]
    assert client.request("hello")["ok"]
    assert client.close() == 0


@pytest.mark.generic
@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        ('LIBRARY = "pillow"\n\ndef __call__(transform, image)\n    return image\n', ["line 3", "SyntaxError"]),
        ("def __call__(transform, image):\n    return image\n\nTRANSFORMS = []\n", ["LIBRARY is not defined"]),
        ('LIBRARY = "opencv-magic"\n', ["line 1", "LIBRARY must be"]),
        ('LIBRARY = "{library}"\nTRANSFORMS = []\n', ["define a function __call__"]),
        ('LIBRARY = "{library}"\n\n\ndef __call__(t, i):\n    return i\n\nTRANSFORMS = 3\n', ["line 7", "TRANSFORMS"]),
        ('LIBRARY = "{library}"\nimport os\nraise RuntimeError("boom")\n', ["line 3", "RuntimeError: boom"]),
    ],
    ids=["syntax-error", "missing-library", "unknown-library", "missing-call", "bad-transforms", "raises-on-import"],
)
def test_spec_file_errors_name_file_and_line(tmp_path, worker_factory, source, fragments) -> None:
    library = first_importable_library()
    path = write_spec(tmp_path, source.replace("{library}", library), name="broken_spec.py")
    client = worker_factory("--spec", path)
    hello = client.request("hello")
    assert hello["ok"] is False and hello["kind"] == "bad_input", hello
    assert f"spec file {path}" in hello["error"]
    for fragment in fragments:
        assert fragment in hello["error"], hello["error"]
    assert client.request("load", media="image", paths=["x.jpg"], channels=3)["error"] == hello["error"]
    assert client.close() == 0


@pytest.mark.generic
def test_spec_library_must_match_library_flag(tmp_path, worker_factory) -> None:
    library = first_importable_library()
    other = next(name for name in LIBRARY_MODULES if name != library)
    path = write_spec(tmp_path, IDENTITY_SPEC.format(library=library))
    hello = worker_factory("--library", other, "--spec", path).request("hello")
    assert hello["ok"] is False and f"LIBRARY is '{library}'" in hello["error"]


@pytest.mark.generic
@pytest.mark.parametrize("absent", list(LIBRARY_MODULES))
def test_missing_library_names_environment_and_package(absent, worker_factory) -> None:
    if has_library(absent):
        pytest.skip(f"{absent} is importable here")
    hello = worker_factory("--library", absent).request("hello")
    assert hello["ok"] is False and hello["kind"] == "exception"
    assert f"library {absent}: cannot import" in hello["error"]
    package = LIBRARIES[absent][1]  # the distribution to install, as the worker names it
    assert "in environment" in hello["error"] and f"'{package}'" in hello["error"]


@pytest.mark.generic
def test_thread_policy_is_applied_and_reported(worker_factory) -> None:
    library = first_importable_library()
    single = worker_factory("--library", library, env={"OMP_NUM_THREADS": "4"}).request("hello")
    assert single["threads"]["OMP_NUM_THREADS"] == "1"
    pipeline = worker_factory(
        "--library", library, env={"OMP_NUM_THREADS": "4", "AUGBENCH_THREAD_POLICY": "pipeline-default"}
    ).request("hello")
    assert pipeline["threads"]["AUGBENCH_THREAD_POLICY"] == "pipeline-default"
    assert pipeline["threads"]["OMP_NUM_THREADS"] == "4"
    bad = worker_factory("--library", library, env={"AUGBENCH_THREAD_POLICY": "many"}).request("hello")
    assert bad["ok"] is False and "AUGBENCH_THREAD_POLICY='many'" in bad["error"]


def test_a_fork_stops_opencvs_thread_pool_and_both_sides_keep_their_count() -> None:
    """``threads.guard_opencv_fork``: before a fork OpenCV's pool threads are joined, so the child
    copies no pool mutex a thread may hold (a loader worker forked from a process that had run
    OpenCV's threaded loops once blocked for good in ``cv2.warpAffine``); after it, parent and
    child run OpenCV with the thread count they had."""
    require_library("opencv")
    import os
    import signal

    import cv2
    import numpy as np

    from augbench_worker import threads

    def tasks() -> int:
        return len(os.listdir("/proc/self/task"))

    image = np.zeros((512, 512, 3), np.uint8)
    turn = cv2.getRotationMatrix2D((256, 256), 30, 1.0)
    cv2.setNumThreads(2)
    cv2.warpAffine(image, turn, (512, 512))  # OpenCV starts its pool: one thread besides this one
    with_pool = tasks()
    threads._stop_opencv_pool()
    assert tasks() == with_pool - 1, "the pool's thread was not joined before the fork"
    threads._restart_opencv_pool()
    assert cv2.getNumThreads() == 2
    cv2.warpAffine(image, turn, (512, 512))
    assert tasks() == with_pool, "OpenCV did not start its pool again after the fork"

    threads.guard_opencv_fork()
    threads.guard_opencv_fork()  # registered once, however often a loader starts
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: OpenCV's threaded loop runs, with the parent's count
        signal.alarm(20)
        cv2.warpAffine(image, turn, (512, 512))
        os.write(write, str(cv2.getNumThreads()).encode())
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    told = os.read(read, 16).decode()
    os.close(read)
    assert status == 0 and told == "2", (status, told)
    assert cv2.getNumThreads() == 2


@pytest.mark.generic
def test_a_worker_told_a_cpu_runs_on_it_alone(worker_factory) -> None:
    """A/B pairs: AUGBENCH_PIN_CPU pins the worker (and its later threads) to that CPU."""
    import os

    cpu = max(os.sched_getaffinity(0))
    client = worker_factory("--library", first_importable_library(), env={"AUGBENCH_PIN_CPU": str(cpu)})
    hello = client.request("hello")
    assert hello["ok"] is True and hello["threads"]["AUGBENCH_PIN_CPU"] == str(cpu)
    assert os.sched_getaffinity(client.proc.pid) == {cpu}


def test_cpu_only_libraries_refuse_cuda(jpeg_paths, shared_workers: SharedWorkers) -> None:
    for library in ("albumentationsx", "pillow"):
        if has_library(library):
            loaded = load_images(shared_workers.worker(library), jpeg_paths, device="cuda")
            assert loaded["kind"] == "unsupported" and "CPU only" in loaded["error"]
            return
    pytest.skip("neither AlbumentationsX nor Pillow importable")


@pytest.mark.parametrize("library", ["torchvision", "kornia"])
def test_cuda_without_a_gpu_is_a_clear_error(library, jpeg_paths, shared_workers: SharedWorkers) -> None:
    require(LIBRARY_MODULES[library])
    torch = require("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    client = shared_workers.worker(library)
    assert client.request("hello")["devices"] == ["cpu"]
    loaded = load_images(client, jpeg_paths, device="cuda")
    assert loaded["kind"] == "exception"
    assert loaded["error"] == "CUDA requested but torch.cuda.is_available() is False"


@pytest.mark.parametrize("library", ["torchvision", "kornia"])
def test_cuda_round_trip(library, jpeg_paths, worker_factory) -> None:
    require(LIBRARY_MODULES[library])
    torch = require("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    client = worker_factory("--library", library)
    assert "cuda" in client.request("hello")["devices"]
    assert load_images(client, jpeg_paths, device="cuda")["ok"]
    assert client.request("prepare", transform="HorizontalFlip", params={}, device="cuda")["ok"]
    checked = client.request("check")
    assert checked["ok"] and checked["output_shape"] == checked["input_shape"], checked
    assert client.request("time", start=0, count=3, loops=2)["ok"]
    wrong = client.request("prepare", transform="HorizontalFlip", params={}, device="cpu")
    assert wrong["kind"] == "bad_request"
    if library == "torchvision":
        jpeg = client.request("prepare", transform="JpegCompression", params={"quality": 50}, device="cuda")
        assert jpeg["kind"] == "unsupported"


def test_kornia_batched_regime(jpeg_paths, shared_workers: SharedWorkers) -> None:
    require("kornia")
    client = shared_workers.worker("kornia")
    assert load_images(client, jpeg_paths)["ok"]
    prepared = client.request(
        "prepare", transform="GaussianBlur", params={"sigma": 2.0, "kernel_size": [5, 5]}, batch=2
    )
    assert prepared["ok"] and prepared["regime"] == "batch" and prepared["batch"] == 2, prepared
    checked = client.request("check")
    assert checked["ok"] and checked["batch"] == 2, checked
    assert checked["input_shape"] == [3, 250, 260], "items are centre-cropped to the smallest height and width"
    assert checked["output_shape"] == checked["input_shape"]
    timed = client.request("time", start=2, count=5, loops=2)
    assert timed["ok"] and len(timed["ns"]) == 2, timed
    too_big = client.request("prepare", transform="GaussianBlur", params={"sigma": 2.0, "kernel_size": [5, 5]}, batch=4)
    assert too_big["kind"] == "bad_request"
    per_image = client.request("prepare", transform="HorizontalFlip", params={})
    assert per_image["regime"] == "per_image"


@pytest.mark.generic
def test_batched_regime_is_kornia_only(jpeg_paths, worker_factory) -> None:
    library = first_importable_library()
    if library == "kornia":
        pytest.skip("kornia supports the batched regime")
    client = worker_factory("--library", library)
    assert load_images(client, jpeg_paths)["ok"]
    refused = client.request("prepare", transform="HorizontalFlip", params={}, batch=2)
    assert refused["kind"] == "unsupported" and "batched" in refused["error"]


@pytest.mark.generic
def test_eof_ends_the_worker_cleanly(worker_factory) -> None:
    client = worker_factory("--library", first_importable_library())
    assert client.request("hello")["ok"]
    client.proc.stdin.close()
    assert client.proc.wait(timeout=60) == 0


@pytest.mark.generic
def test_the_library_line_follows_the_rule_shared_with_the_coordinator() -> None:
    """The coordinator (Rust) runs the same cases: both read LIBRARY by one rule."""
    import json
    from pathlib import Path

    from augbench_worker.spec_file import library_line

    fixture = Path(__file__).parent / "fixtures" / "spec_library_cases.json"
    cases = json.loads(fixture.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 10
    for case in cases:
        want = None if case["line"] is None else (case["line"], case["name"])
        assert library_line(case["source"]) == want, case["why"]


@pytest.mark.generic
def test_count_markers_wrap_each_loop_and_hello_names_the_cpu_features(jpeg_paths, worker_factory, monkeypatch) -> None:
    library = first_importable_library()
    worker = worker_factory("--library", library)
    hello = worker.request("hello")
    assert set(hello["cpu_features"]) <= {"sse4_2", "avx2", "avx512f", "neon"}, hello
    assert worker.request("load", media="image", paths=jpeg_paths[:2], channels=3, clip_length=1, device="cpu")["ok"]
    assert worker.request("prepare", transform="HorizontalFlip", params={}, device="cpu")["ok"]
    counted = worker.request("time", start=0, count=2, loops=3, markers=True)
    assert counted["ok"] and len(counted["ns"]) == 3, counted
    # In process: each loop sits between exactly one getpgrp() and one getppid() call.
    from augbench_worker.adapters import base

    calls: list[str] = []
    monkeypatch.setattr(base.os, "getpgrp", lambda: calls.append("before"))
    monkeypatch.setattr(base.os, "getppid", lambda: calls.append("after"))

    class Prepared:
        name = "probe"
        batch = 1

        @staticmethod
        def run(item):
            calls.append("item")

    adapter = base.Adapter.__new__(base.Adapter)
    adapter.sync = lambda: None
    adapter._timed_loops(Prepared, [1, 2], 2, markers=True)
    assert calls == ["before", "item", "item", "after"] * 2
    calls.clear()
    adapter._timed_loops(Prepared, [1], 1)
    assert calls == ["item"]


def test_timed_loops_report_the_threads_cpu_time_beside_the_wall_time():
    from augbench_worker.adapters import base

    class Prepared:
        name = "busy"
        batch = 1

        @staticmethod
        def run(item):
            sum(range(item))

    adapter = base.Adapter.__new__(base.Adapter)
    adapter.sync = lambda: None
    ns, cpu_ns = adapter._timed_loops(Prepared, [200_000, 200_000], 3)
    assert len(ns) == len(cpu_ns) == 3
    assert all(c > 0 for c in cpu_ns), cpu_ns
    # Busy work on one thread: its CPU time cannot exceed the wall time by more than a tick.
    assert all(c <= w + 1_000_000 for w, c in zip(ns, cpu_ns)), (ns, cpu_ns)


def test_fresh_buffers_copy_every_item_before_a_time_request(monkeypatch):
    import numpy as np

    from augbench_worker.adapters import base

    class Prepared:
        name = "probe"
        batch = 1
        seen: list = []

        @classmethod
        def run(cls, item):
            cls.seen.append(item)

    adapter = base.Adapter.__new__(base.Adapter)
    adapter.sync = lambda: None
    adapter.prepared = Prepared
    original = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3)]
    adapter.items = list(original)
    monkeypatch.setenv(base.FRESH_BUFFERS_ENV, "1")
    reply = adapter.time({"start": 0, "count": 1, "loops": 1})
    assert len(reply["ns"]) == len(reply["cpu_ns"]) == 1
    assert Prepared.seen[0] is not original[0], "the loop timed the original buffer"
    assert np.array_equal(Prepared.seen[0], original[0])
    assert not np.shares_memory(Prepared.seen[0], original[0])
