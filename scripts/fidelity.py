#!/usr/bin/env python3
"""Fidelity check: does augbench measure what pyperf measures?

Five transforms of AlbumentationsX and Pillow are timed twice on the same decoded images, each in
its library's own augbench environment: (a) by `augbench run` (medians read from its results
JSON), (b) by pyperf's ``Runner.bench_time_func``, which times the very same callable that the
augbench worker times (the worker's adapter builds it, with the parameters augbench recorded).
It prints two ratios augbench/pyperf per transform, each estimator against the same estimator of
pyperf's values: the median of all runs (augbench's `median_throughput` against the median of
pyperf's values), and the headline figure (augbench's `figure_throughput`, the median over worker
processes of each one's fastest run, against the same of pyperf's processes), and whether the
figure's ratio is within the tolerance. Each transform is measured augbench, pyperf, augbench
again, so a drift of the machine's load during the comparison cancels out of the ratio.

    python3 scripts/fidelity.py [--augbench target/release/augbench] [--num-items 50]

The parent part uses only the standard library; it re-runs this file with each environment's
Python (``augbench env python <group>``) for the pyperf part, which pyperf itself re-runs once per
worker process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIBRARIES = ("albumentationsx", "pillow")
TRANSFORMS = ("Resize", "HorizontalFlip", "GaussianBlur", "JpegCompression", "Rotate")
CHILD_FLAG = "--fidelity-child"


# ----- parent: augbench run, then one pyperf child per library ------------------------------------
def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--augbench", default=str(REPO / "target" / "release" / "augbench"), help="augbench binary")
    p.add_argument("--config", default=None,
                   help="run config (default: augbench's defaults for image-rgb micro)")
    p.add_argument("--num-items", type=int, default=50)
    p.add_argument("--num-runs", type=int, default=10,
                   help="augbench runs per measurement (pyperf takes processes x values)")
    p.add_argument("--libraries", nargs="+", default=list(LIBRARIES))
    p.add_argument("--transforms", nargs="+", default=list(TRANSFORMS))
    p.add_argument("--pyperf-processes", type=int, default=6, help="pyperf worker processes per transform")
    p.add_argument("--pyperf-values", type=int, default=3, help="pyperf values per process")
    p.add_argument("--tolerance", type=float, default=0.05, help="accepted |ratio - 1|")
    p.add_argument("--workdir", default=None, help="keep data and outputs here (default: a temp dir)")
    return p.parse_args(argv)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    if os.environ.get("FIDELITY_VERBOSE"):
        print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def load_avg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def run_augbench(a: argparse.Namespace, lib: str, transform: str, data: Path, out: Path) -> dict:
    """One `augbench run` of one library and transform; returns that transform's result."""
    cmd = [a.augbench, "run", "--config", a.config, "--data-dir", str(data), "--output", str(out),
           "--num-items", str(a.num_items), "--no-refresh-requirements",
           "--libraries", lib, "--transforms", transform]
    if a.num_runs:
        cmd += ["--num-runs", str(a.num_runs)]
    sh(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = list(out.glob(f"**/{lib}_micro*_results.json"))
    if len(files) != 1:
        raise SystemExit(f"expected one results file for {lib} under {out}, found {files}")
    return json.loads(files[0].read_text())["results"][transform]


def run_pyperf(a: argparse.Namespace, envpy: str, lib: str, transform: str, params: dict, data: Path,
               work: Path) -> dict:
    """pyperf's {"median": img/s, "figure": img/s} for the transform."""
    job = work / f"{lib}_{transform}_job.json"
    job.write_text(json.dumps({"library": lib, "data": str(data), "params": {transform: params}}))
    summary = work / f"{lib}_{transform}_pyperf.json"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    sh([envpy, __file__, CHILD_FLAG, str(job), "--summary", str(summary), "--quiet",
        "--processes", str(a.pyperf_processes), "--values", str(a.pyperf_values)], env=env)
    return json.loads(summary.read_text())[transform]


def figure(r: dict) -> float:
    """The row's headline figure (its median in a file written before figures existed)."""
    return r.get("figure_throughput") or r["median_throughput"]


def compare(a: argparse.Namespace, lib: str, transform: str, envpy: str, data: Path, work: Path) -> bool:
    """augbench, pyperf, augbench again (A-B-A): the mean of the two augbench medians cancels a
    linear drift of the machine's load over the comparison."""
    load = load_avg()
    first = run_augbench(a, lib, transform, data, work / f"{lib}-{transform}-a1")
    if first.get("status") != "ok":
        print(f"{lib:<16} {transform:<16} not compared: {first.get('status')} {first.get('reason', '')}")
        return True
    theirs = run_pyperf(a, envpy, lib, transform, first["params"], data, work)
    second = run_augbench(a, lib, transform, data, work / f"{lib}-{transform}-a2")
    ours = (first["median_throughput"] + second["median_throughput"]) / 2
    ours_fig = (figure(first) + figure(second)) / 2
    ratio, ratio_fig = ours / theirs["median"], ours_fig / theirs["figure"]
    ok = abs(ratio_fig - 1) <= a.tolerance
    verdict = f"{'within' if ok else 'OUTSIDE'} ±{a.tolerance:.0%}"
    print(f"{lib:<16} {transform:<16} {ours:>9.1f} {theirs['median']:>9.1f} {ratio:>7.3f}"
          f" {ours_fig:>9.1f} {theirs['figure']:>9.1f} {ratio_fig:>7.3f}  {verdict:<14} {load}", flush=True)
    return ok


def parent(argv: list[str]) -> int:
    a = parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="augbench-fidelity-") as tmp:
        work = Path(a.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        if a.config is None:
            a.config = str(work / "task.yaml")
            Path(a.config).write_text("version: 1\nselection:\n  scenario: image-rgb\n  mode: micro\n")
        data = work / "data"
        if not data.exists():
            sh([a.augbench, "data", "synth", "--out", str(data), "--n", str(a.num_items)], stdout=subprocess.DEVNULL)
        print(f"\n{'':<33} {'median of runs, img/s':^27} {'figure, img/s':^27}")
        print(f"{'library':<16} {'transform':<16} {'augbench':>9} {'pyperf':>9} {'ratio':>7}"
              f" {'augbench':>9} {'pyperf':>9} {'ratio':>7}  {'verdict':<14} load (1/5/15 min)")
        ok = True
        for lib in a.libraries:
            envpy = sh([a.augbench, "env", "python", lib], capture_output=True, text=True).stdout.strip()
            for t in a.transforms:
                ok &= compare(a, lib, t, envpy, data, work)
    print(f"\nload average at the end: {load_avg()}; wall {time.monotonic() - started:.0f} s")
    print("every figure within tolerance" if ok else "some figures are outside the tolerance")
    return 0 if ok else 1


# ----- child: pyperf in the library's environment (this part runs in every pyperf worker) ---------
def child(argv: list[str]) -> int:
    job_path = argv[argv.index(CHILD_FLAG) + 1]
    job = json.loads(Path(job_path).read_text())
    # As the augbench worker gets them: the coordinator's thread variables (OPENCV_NUM_THREADS
    # among them, which pyperf's minimal worker environment drops), then the worker's own, all
    # before numpy or the library is imported.
    from fidelity_probe import WORKER_PINNED

    os.environ.update({var: "1" for var in WORKER_PINNED})
    from augbench_worker import threads

    threads.apply_env(threads.SINGLE)
    import pyperf
    from augbench_worker import adapters

    def keep_child_args(cmd: list[str], args: argparse.Namespace) -> None:
        cmd.extend([CHILD_FLAG, job_path])

    runner = pyperf.Runner(add_cmdline_args=keep_child_args)
    runner.argparser.add_argument(CHILD_FLAG, metavar="JOB")
    runner.argparser.add_argument("--summary", help="write {transform: img/s} here (main process)")
    args = runner.parse_args()
    adapter = adapters.create(job["library"])
    adapter.pin_threads(True)
    paths = sorted(str(p) for p in Path(job["data"]).iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    adapter.load({"media": "image", "paths": paths, "channels": 3, "device": "cpu"})
    medians: dict[str, dict[str, float]] = {}
    for name, params in job["params"].items():
        adapter.prepare({"transform": name, "params": params, "device": "cpu"})
        run, items = adapter.prepared.run, list(adapter.items)
        bench = runner.bench_time_func(f"{job['library']}:{name}", time_pass, run, items)
        if bench is not None and not args.worker:  # the main process, with every worker's values
            n = len(items)
            fastest = [min(r.values) for r in bench.get_runs() if r.values]  # each process's
            medians[name] = {"median": n / statistics.median(bench.get_values()),
                             "figure": n / statistics.median(fastest)}
    if args.summary and medians:
        Path(args.summary).write_text(json.dumps(medians))
    return 0


def time_pass(loops: int, run, items: list) -> float:
    """What the worker's timed loop does: each item once per loop, the output forced."""
    clock = time.perf_counter
    started = clock()
    for _ in range(loops):
        for item in items:
            run(item)
    return clock() - started


if __name__ == "__main__":
    sys.exit(child(sys.argv) if CHILD_FLAG in sys.argv else parent(sys.argv[1:]))
